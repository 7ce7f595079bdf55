package conformance

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/ttlstore/ttlstore/cosmoshttp"
)

// TestDurableRestart: a server over a directory, restarted, serves what it
// served before, and expiry stays exact (R17, R18).
func TestDurableRestart(t *testing.T) {
	for _, down := range []time.Duration{0, 30 * time.Second} {
		t.Run(fmt.Sprintf("down for %v", down), func(t *testing.T) {
			e := newEnv(t, cosmoshttp.Options{Dir: t.TempDir()})
			off := e.container("off", nil)
			ten := e.container("ten", ttlp(10))
			never := e.container("never", ttlp(-1))
			changed := e.container("changed", nil)
			if _, err := e.client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "other db"}, nil); err != nil {
				t.Fatal(err)
			}
			// base+0.5: writes.
			create(t, off, pkP, doc{"id": "o1", "pk": "p", "ttl": 5})
			create(t, ten, pkP, doc{"id": "gone", "pk": "p", "ttl": 2})
			create(t, ten, pkP, doc{"id": "t1", "pk": "p"})
			create(t, ten, pkP, doc{"id": "t2", "pk": "p", "ttl": 100})
			create(t, ten, pkP, doc{"id": "del", "pk": "p"})
			create(t, ten, azcosmos.NewPartitionKeyNumber(7), doc{"id": "n7", "pk": 7, "ttl": -1})
			create(t, never, pkP, doc{"id": "nv", "pk": "p"})
			create(t, never, pkP, doc{"id": "nv5", "pk": "p", "ttl": 5})
			create(t, changed, pkP, doc{"id": "ch", "pk": "p"})
			e.at(3.5)
			if _, err := ten.ReplaceItem(ctx, pkP, "t1", []byte(`{"id":"t1","pk":"p","v":2}`), nil); err != nil {
				t.Fatal(err)
			}
			if _, err := ten.DeleteItem(ctx, pkP, "del", nil); err != nil {
				t.Fatal(err)
			}
			r, _ := changed.Read(ctx, nil)
			p := *r.ContainerProperties
			p.DefaultTimeToLive = ttlp(20)
			if _, err := changed.Replace(ctx, p, nil); err != nil {
				t.Fatal(err)
			}
			// "gone" expired at base+2, before the restart.
			before := map[string]doc{}
			props := func() string {
				var out []string
				for _, p := range listContainers(t, e.database(), "SELECT * FROM c") {
					out = append(out, fmt.Sprintf("%s rid=%s etag=%v ts=%d ttl=%s", p.ID, p.ResourceID, *p.ETag, p.LastModified.Unix(), ttlString(p.DefaultTimeToLive)))
				}
				dr, err := e.database().Read(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, fmt.Sprintf("db rid=%s etag=%v ts=%d", dr.DatabaseProperties.ResourceID, *dr.DatabaseProperties.ETag, dr.DatabaseProperties.LastModified.Unix()))
				return strings.Join(out, "\n")
			}
			propsBefore := props()
			for _, it := range []struct {
				c  *azcosmos.ContainerClient
				pk azcosmos.PartitionKey
				id string
			}{{off, pkP, "o1"}, {ten, pkP, "t1"}, {ten, pkP, "t2"}, {ten, azcosmos.NewPartitionKeyNumber(7), "n7"}, {never, pkP, "nv"}, {never, pkP, "nv5"}, {changed, pkP, "ch"}} {
				d, st := read(t, it.c, it.pk, it.id)
				if st != 200 {
					t.Fatalf("%s before restart: %d", it.id, st)
				}
				before[it.id] = d
			}

			e.stop()
			e.advance(down)
			e.serve()
			// The SDK's clients are by name: new ones for the new port.
			ct := func(id string) *azcosmos.ContainerClient {
				c, _ := e.client.NewContainer("db", id)
				return c
			}
			off, ten, never, changed = ct("off"), ct("ten"), ct("never"), ct("changed")

			t.Run("R17 database and container properties unchanged", func(t *testing.T) {
				if got := props(); got != propsBefore {
					t.Errorf("after restart:\n%s\nbefore:\n%s", got, propsBefore)
				}
			})
			t.Run("R17 databases and containers", func(t *testing.T) {
				if got := strings.Join(listDatabases(t, e.client, "SELECT * FROM c"), ","); got != "db,other db" {
					t.Errorf("databases %q", got)
				}
				var got []string
				for _, p := range listContainers(t, e.database(), "SELECT * FROM c") {
					got = append(got, p.ID+"="+ttlString(p.DefaultTimeToLive)+":"+strings.Join(p.PartitionKeyDefinition.Paths, ","))
				}
				sort.Strings(got)
				if g, w := strings.Join(got, " "), "changed=20:/pk never=-1:/pk off=off:/pk ten=10:/pk"; g != w {
					t.Errorf("containers %q, want %q", g, w)
				}
			})
			t.Run("R17 items keep _ts _etag ttl", func(t *testing.T) {
				for id, b := range before {
					var c *azcosmos.ContainerClient
					pk := pkP
					switch id {
					case "o1":
						c = off
					case "t1", "t2":
						c = ten
					case "n7":
						c, pk = ten, azcosmos.NewPartitionKeyNumber(7)
					case "nv", "nv5":
						c = never
					case "ch":
						c = changed
					}
					d, st := read(t, c, pk, id)
					wantAlive := !(down > 0 && (id == "nv5" || id == "t1" || id == "ch"))
					if !wantAlive {
						if st != 404 {
							t.Errorf("%s should have expired while the server was down: %d %v", id, st, d)
						}
						continue
					}
					if st != 200 {
						t.Errorf("%s after restart: %d", id, st)
						continue
					}
					if jsonString(d) != jsonString(b) {
						t.Errorf("%s after restart:\n%s\nbefore:\n%s", id, jsonString(d), jsonString(b))
					}
				}
			})
			t.Run("R18 deleted and expired stay gone", func(t *testing.T) {
				if _, st := read(t, ten, pkP, "del"); st != 404 {
					t.Errorf("deleted item back: %d", st)
				}
				if _, st := read(t, ten, pkP, "gone"); st != 404 {
					t.Errorf("expired item back: %d", st)
				}
			})
			t.Run("R17 expiry exact across the restart", func(t *testing.T) {
				// nv5: _ts base+0, ttl 5. t1: replaced at base+3, default 10.
				// ch: _ts base+0, defaultTtl changed to 20. t2: ttl 100.
				// o1: ttl ignored (defaultTtl off).
				checks := []struct {
					at    float64
					c     *azcosmos.ContainerClient
					id    string
					alive bool
				}{
					{4.999, never, "nv5", true}, {5, never, "nv5", false},
					{12.999, ten, "t1", true}, {13, ten, "t1", false},
					{19.999, changed, "ch", true}, {20, changed, "ch", false},
					{99.999, ten, "t2", true}, {100, ten, "t2", false},
					{1000, off, "o1", true}, {1000, never, "nv", true},
				}
				for _, ck := range checks {
					if down > 0 && ck.at < 30 {
						continue
					}
					e.at(ck.at)
					expectAlive(t, ck.c, ck.id, ck.alive, fmt.Sprintf("after restart at base+%v", ck.at))
				}
				if _, st := read(t, ten, azcosmos.NewPartitionKeyNumber(7), "n7"); st != 200 {
					t.Errorf("n7: %d", st)
				}
			})
			t.Run("writes after the restart", func(t *testing.T) {
				nc := ct("never")
				create(t, nc, pkP, doc{"id": "new", "pk": "p"})
				if _, err := nc.CreateItem(ctx, pkP, []byte(`{"id":"nv","pk":"p"}`), nil); status(err) != 409 {
					t.Errorf("create of an existing id after restart: %v", err)
				}
				e.restart()
				nc = ct("never")
				if _, st := read(t, nc, pkP, "new"); st != 200 {
					t.Errorf("item written after the first restart, after the second: %d", st)
				}
			})
		})
	}
}

// TestDurableDeletes: what was deleted or expired before a restart stays
// gone after it (R18), and a defaultTtl changed by a container PUT is the
// one in force after it (R17).
func TestDurableDeletes(t *testing.T) {
	for _, mode := range sweepModes {
		t.Run(mode.name, func(t *testing.T) {
			e := newEnv(t, cosmoshttp.Options{Dir: t.TempDir(), SweepInterval: mode.interval})
			gone := e.container("gone", nil)
			create(t, gone, pkP, doc{"id": "x", "pk": "p"})
			again := e.container("again", nil)
			create(t, again, pkP, doc{"id": "old", "pk": "p"})
			lowered := e.container("lowered", ttlp(100))
			create(t, lowered, pkP, doc{"id": "a", "pk": "p"})
			off := e.container("off", ttlp(10))
			create(t, off, pkP, doc{"id": "a", "pk": "p"})
			if _, err := e.client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "dropped"}, nil); err != nil {
				t.Fatal(err)
			}
			dropped, _ := e.client.NewDatabase("dropped")
			if _, err := dropped.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "c", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil); err != nil {
				t.Fatal(err)
			}
			e.at(20.5)
			if _, err := gone.Delete(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := again.Delete(ctx, nil); err != nil {
				t.Fatal(err)
			}
			again = e.container("again", nil)
			create(t, again, pkP, doc{"id": "new", "pk": "p"})
			if _, err := dropped.Delete(ctx, nil); err != nil {
				t.Fatal(err)
			}
			replaceTTL := func(c *azcosmos.ContainerClient, to *int32) {
				r, err := c.Read(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				p := *r.ContainerProperties
				p.DefaultTimeToLive = to
				if _, err := c.Replace(ctx, p, nil); err != nil {
					t.Fatal(err)
				}
			}
			replaceTTL(lowered, ttlp(10)) // a expired at once (R15)
			replaceTTL(off, nil)          // a had expired at base+10 (R13)

			e.restart()
			ct := func(id string) *azcosmos.ContainerClient {
				c, _ := e.client.NewContainer("db", id)
				return c
			}
			if _, err := ct("gone").Read(ctx, nil); status(err) != 404 {
				t.Errorf("deleted container after restart: %v", err)
			}
			dropped, _ = e.client.NewDatabase("dropped")
			if _, err := dropped.Read(ctx, nil); status(err) != 404 {
				t.Errorf("deleted database after restart: %v", err)
			}
			if got := strings.Join(liveIDs(t, ct("again")), ","); got != "new" {
				t.Errorf("recreated container after restart: %q, want new", got)
			}
			for _, id := range []string{"lowered", "off"} {
				if got := liveIDs(t, ct(id)); len(got) != 0 {
					t.Errorf("R13 R18 %s: %v came back after the restart", id, got)
				}
			}
			r, err := ct("off").Read(ctx, nil)
			if err != nil || r.ContainerProperties.DefaultTimeToLive != nil {
				t.Errorf("off after restart: %v %+v", err, r.ContainerProperties)
			}
			r, err = ct("lowered").Read(ctx, nil)
			if err != nil || ttlString(r.ContainerProperties.DefaultTimeToLive) != "10" {
				t.Errorf("lowered after restart: %v %+v", err, r.ContainerProperties)
			}
			create(t, ct("off"), pkP, doc{"id": "b", "pk": "p", "ttl": 1})
			e.at(100)
			expectAlive(t, ct("off"), "b", true, "defaultTtl off after restart")
		})
	}
}

// TestDurableQueryContinuation: a query continuation issued before a
// restart resumes after it.
func TestDurableQueryContinuation(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{Dir: t.TempDir()})
	c := e.container("c", nil)
	for i := 0; i < 6; i++ {
		create(t, c, pkP, doc{"id": fmt.Sprint("i", i), "pk": "p", "n": i})
	}
	q := "SELECT VALUE c.id FROM c ORDER BY c.n"
	pager := c.NewQueryItemsPager(q, pkP, &azcosmos.QueryOptions{PageSizeHint: 2})
	page, err := pager.NextPage(ctx)
	if err != nil || page.ContinuationToken == nil {
		t.Fatal(err)
	}
	got := []string{joined(page.Items)}
	e.restart()
	c, _ = e.client.NewContainer("db", "c")
	pager = c.NewQueryItemsPager(q, pkP, &azcosmos.QueryOptions{PageSizeHint: 2, ContinuationToken: page.ContinuationToken})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatalf("after restart: %v", shortErr(err))
		}
		got = append(got, joined(page.Items))
	}
	if g := strings.Join(got, ","); g != `"i0","i1","i2","i3","i4","i5"` {
		t.Errorf("pages %s", g)
	}
}
