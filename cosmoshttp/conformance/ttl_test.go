package conformance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/cosmoshttp"
)

// Times in these tests are seconds from base, the whole second the mock
// clock starts in (it starts at base+0.5). An item written at base+o+0.5
// has _ts base+o, and with effective TTL n expires at base+o+n exactly:
// n-0.5 s after it was written (R2: whole seconds, the boundary second is
// expired).
var base = time.Unix(start.Unix(), 0)

// at moves the clock to base+sec.
func (e *env) at(sec float64) {
	e.t.Helper()
	e.advanceTo(base.Add(time.Duration(sec * float64(time.Second))))
}

// sweepModes runs a TTL test without a sweeper (expiry must hold on every
// read, R9) and with a 1 s sweeper on the mock clock (R10: what the
// sweeper removes is what reads already hid).
var sweepModes = []struct {
	name     string
	interval time.Duration
}{
	{"no sweeper", ttlstore.ManualSweep},
	{"sweeper", time.Second},
}

var pkP = azcosmos.NewPartitionKeyString("p")

// liveIDs returns the ids a cross-partition query sees, sorted.
func liveIDs(t *testing.T, c *azcosmos.ContainerClient) []string {
	t.Helper()
	var out []string
	for _, it := range mustQuery(t, c, azcosmos.NewPartitionKey(), "SELECT VALUE c.id FROM c") {
		var s string
		json.Unmarshal(it, &s)
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// expectAlive checks one item through a point read, a query and COUNT.
func expectAlive(t *testing.T, c *azcosmos.ContainerClient, id string, alive bool, when string) {
	t.Helper()
	_, st := read(t, c, pkP, id)
	want := http.StatusNotFound
	if alive {
		want = http.StatusOK
	}
	if st != want {
		t.Errorf("%s: read %s: status %d, want %d", when, id, st, want)
	}
	got := mustQuery(t, c, pkP, "SELECT * FROM c WHERE c.id = @id", "@id", id)
	if (len(got) == 1) != alive || len(got) > 1 {
		t.Errorf("%s: query for %s returned %d items, want alive=%v", when, id, len(got), alive)
	}
	n := len(mustQuery(t, c, pkP, "SELECT VALUE COUNT(1) FROM c WHERE c.id = @id", "@id", id))
	if n != 1 {
		t.Fatalf("%s: COUNT returned %d rows", when, n)
	}
	cnt := mustQuery(t, c, pkP, "SELECT VALUE COUNT(1) FROM c WHERE c.id = @id", "@id", id)
	if w := map[bool]string{true: "1", false: "0"}[alive]; string(cnt[0]) != w {
		t.Errorf("%s: COUNT for %s = %s, want %s", when, id, cnt[0], w)
	}
}

func TestTTLMatrix(t *testing.T) {
	cols := []struct {
		name string
		def  *int32
	}{{"off", nil}, {"-1", ttlp(-1)}, {"10", ttlp(10)}}
	rows := []struct {
		name string
		ttl  any
	}{{"absent", nil}, {"-1", -1}, {"5", 5}, {"20", 20}, {"1", 1}}
	// R1: the effective TTL of each cell; 0 is never. The item's ttl wins
	// over defaultTtl whether it is shorter (5) or longer (20).
	eff := map[string]int64{"10/absent": 10, "-1/5": 5, "10/5": 5, "-1/20": 20, "10/20": 20, "-1/1": 1, "10/1": 1}
	for _, mode := range sweepModes {
		for _, col := range cols {
			for _, row := range rows {
				n := eff[col.name+"/"+row.name]
				want := "never"
				if n > 0 {
					want = fmt.Sprintf("expires at _ts+%d", n)
				}
				name := fmt.Sprintf("R1 R2/%s/defaultTtl %s/ttl %s/%s", mode.name, col.name, row.name, want)
				t.Run(name, func(t *testing.T) {
					e := newEnv(t, cosmoshttp.Options{SweepInterval: mode.interval})
					c := e.container("c", col.def)
					d := doc{"id": "x", "pk": "p"}
					if row.ttl != nil {
						d["ttl"] = row.ttl
					}
					create(t, c, pkP, d)
					got, _ := read(t, c, pkP, "x")
					ts := tsOf(t, got)
					if ts != base.Unix() {
						t.Fatalf("_ts %d, want %d", ts, base.Unix())
					}
					// R4: ttl kept exactly as written, none added.
					if w, g := jsonString(row.ttl), jsonString(got["ttl"]); w != g {
						t.Errorf("stored ttl %s, want %s", g, w)
					}
					if n == 0 {
						far := 100.0
						if mode.interval < 0 {
							far = 10 * 365 * 24 * 3600
						}
						e.at(far)
						expectAlive(t, c, "x", true, fmt.Sprintf("at _ts+%v", far))
						return
					}
					e.at(float64(n) - 0.001)
					expectAlive(t, c, "x", true, "at _ts+ttl-1ms")
					e.at(float64(n))
					expectAlive(t, c, "x", false, "at _ts+ttl")
					e.at(float64(n) + 5)
					expectAlive(t, c, "x", false, "at _ts+ttl+5s")
				})
			}
		}
	}
}

// TestTTLExpiredItem checks that nothing sees an expired item (R9), with and
// without the sweeper having run.
func TestTTLExpiredItem(t *testing.T) {
	for _, mode := range sweepModes {
		t.Run(mode.name, func(t *testing.T) {
			e := newEnv(t, cosmoshttp.Options{SweepInterval: mode.interval})
			c := e.container("c", ttlp(10))
			var etags = map[string]azcore.ETag{}
			for _, id := range []string{"x", "up", "cr", "bt"} {
				etags[id] = create(t, c, pkP, doc{"id": id, "pk": "p", "v": 1}).ETag
			}
			create(t, c, azcosmos.NewPartitionKeyString("q"), doc{"id": "other", "pk": "q", "ttl": -1})
			e.at(10)
			old := etags["x"]
			patch := azcosmos.PatchOperations{}
			patch.AppendSet("/v", 2)
			ops := []struct {
				name string
				run  func() (azcosmos.ItemResponse, error)
				want int
			}{
				{"R9 read 404", func() (azcosmos.ItemResponse, error) { return c.ReadItem(ctx, pkP, "x", nil) }, 404},
				{"R9 replace 404", func() (azcosmos.ItemResponse, error) {
					return c.ReplaceItem(ctx, pkP, "x", []byte(`{"id":"x","pk":"p"}`), nil)
				}, 404},
				{"R9 replace If-Match old etag 404", func() (azcosmos.ItemResponse, error) {
					return c.ReplaceItem(ctx, pkP, "x", []byte(`{"id":"x","pk":"p"}`), &azcosmos.ItemOptions{IfMatchEtag: &old})
				}, 404},
				{"R9 patch 404", func() (azcosmos.ItemResponse, error) { return c.PatchItem(ctx, pkP, "x", patch, nil) }, 404},
				{"R9 patch If-Match old etag 404", func() (azcosmos.ItemResponse, error) {
					return c.PatchItem(ctx, pkP, "x", patch, &azcosmos.ItemOptions{IfMatchEtag: &old})
				}, 404},
				{"R9 delete If-Match old etag 404", func() (azcosmos.ItemResponse, error) {
					return c.DeleteItem(ctx, pkP, "x", &azcosmos.ItemOptions{IfMatchEtag: &old})
				}, 404},
				{"R9 delete 404", func() (azcosmos.ItemResponse, error) { return c.DeleteItem(ctx, pkP, "x", nil) }, 404},
				{"R9 upsert of the expired id creates 201", func() (azcosmos.ItemResponse, error) {
					return c.UpsertItem(ctx, pkP, []byte(`{"id":"up","pk":"p","v":2}`), nil)
				}, 201},
				{"R9 create of the expired id 201", func() (azcosmos.ItemResponse, error) {
					return c.CreateItem(ctx, pkP, []byte(`{"id":"cr","pk":"p","v":2}`), nil)
				}, 201},
			}
			for _, op := range ops {
				t.Run(op.name, func(t *testing.T) {
					r, err := op.run()
					got := status(err)
					if err == nil {
						got = r.RawResponse.StatusCode
					}
					if got != op.want {
						t.Errorf("status %d, want %d (err %v)", got, op.want, err)
					}
				})
			}
			t.Run("R9 batch read of an expired item 404", func(t *testing.T) {
				b := c.NewTransactionalBatch(pkP)
				b.ReadItem("bt", nil)
				r, err := c.ExecuteTransactionalBatch(ctx, b, nil)
				if err != nil {
					t.Fatal(err)
				}
				if r.Success || len(r.OperationResults) != 1 || r.OperationResults[0].StatusCode != 404 {
					t.Errorf("batch: success %v results %+v, want one 404", r.Success, r.OperationResults)
				}
			})
			t.Run("R9 queries and COUNT skip expired", func(t *testing.T) {
				if got := strings.Join(liveIDs(t, c), ","); got != "cr,other,up" {
					t.Errorf("live ids %q, want cr,other,up", got)
				}
				if n := count(t, c, azcosmos.NewPartitionKey()); n != 3 {
					t.Errorf("cross-partition COUNT %d, want 3", n)
				}
				if n := count(t, c, pkP); n != 2 {
					t.Errorf("COUNT in p %d, want 2", n)
				}
				for _, q := range []string{"SELECT COUNT(1) AS n FROM c", "SELECT * FROM c WHERE c.v = 1", "SELECT TOP 10 * FROM c ORDER BY c.id", "SELECT * FROM c OFFSET 0 LIMIT 10"} {
					for _, it := range mustQuery(t, c, azcosmos.NewPartitionKey(), q) {
						if strings.Contains(string(it), `"x"`) || strings.Contains(string(it), `"bt"`) || strings.Contains(string(it), `"n":5`) {
							t.Errorf("%s: returned %s", q, it)
						}
					}
				}
			})
			t.Run("R3 recreated item counts from its new _ts", func(t *testing.T) {
				d, _ := read(t, c, pkP, "cr")
				if d == nil || tsOf(t, d) != base.Unix()+10 || d["v"] != 2.0 {
					t.Fatalf("recreated: %v", d)
				}
				e.at(19.999)
				expectAlive(t, c, "cr", true, "at new _ts+10-1ms")
				e.at(20)
				expectAlive(t, c, "cr", false, "at new _ts+10")
			})
		})
	}
}

// TestTTLWrites checks that writes restart the countdown and resolve the
// TTL again (R3, R5), and the largest TTL (R16).
func TestTTLWrites(t *testing.T) {
	type step struct {
		at    float64
		write func(t *testing.T, c *azcosmos.ContainerClient) // nil: a check
		alive bool
	}
	replace := func(body string) func(t *testing.T, c *azcosmos.ContainerClient) {
		return func(t *testing.T, c *azcosmos.ContainerClient) {
			if _, err := c.ReplaceItem(ctx, pkP, "x", []byte(body), nil); err != nil {
				t.Fatalf("replace %s: %v", body, err)
			}
		}
	}
	cases := []struct {
		name  string
		def   *int32
		first string
		steps []step
	}{
		{"R3 replace restarts the countdown", ttlp(10), `{"id":"x","pk":"p"}`, []step{
			{8.5, replace(`{"id":"x","pk":"p","v":2}`), true}, {17.999, nil, true}, {18, nil, false}}},
		{"R3 upsert restarts the countdown", ttlp(10), `{"id":"x","pk":"p"}`, []step{
			{8.5, func(t *testing.T, c *azcosmos.ContainerClient) {
				if _, err := c.UpsertItem(ctx, pkP, []byte(`{"id":"x","pk":"p"}`), nil); err != nil {
					t.Fatal(err)
				}
			}, true}, {17.999, nil, true}, {18, nil, false}}},
		{"R3 patch restarts the countdown", ttlp(10), `{"id":"x","pk":"p"}`, []step{
			{8.5, func(t *testing.T, c *azcosmos.ContainerClient) {
				p := azcosmos.PatchOperations{}
				p.AppendSet("/v", 3)
				if _, err := c.PatchItem(ctx, pkP, "x", p, nil); err != nil {
					t.Fatal(err)
				}
			}, true}, {17.999, nil, true}, {18, nil, false}}},
		{"R3 a refused write does not restart it", ttlp(10), `{"id":"x","pk":"p"}`, []step{
			{8.5, func(t *testing.T, c *azcosmos.ContainerClient) {
				stale := azcore.ETag(`"stale"`)
				_, err := c.ReplaceItem(ctx, pkP, "x", []byte(`{"id":"x","pk":"p"}`), &azcosmos.ItemOptions{IfMatchEtag: &stale})
				wantStatus(t, "stale replace", err, 412)
				_, err = c.ReplaceItem(ctx, pkP, "x", []byte(`{"id":"x","pk":"p","ttl":0}`), nil)
				wantStatus(t, "replace with ttl 0", err, 400)
			}, true}, {9.999, nil, true}, {10, nil, false}}},
		{"R1 upsert with a ttl replacing (emulator #179)", ttlp(-1), `{"id":"x","pk":"p"}`, []step{
			{1.5, func(t *testing.T, c *azcosmos.ContainerClient) {
				if _, err := c.UpsertItem(ctx, pkP, []byte(`{"id":"x","pk":"p","ttl":4}`), nil); err != nil {
					t.Fatal(err)
				}
			}, true}, {4.999, nil, true}, {5, nil, false}}},
		{"R1 upsert with a ttl creating (emulator #179)", ttlp(-1), `{"id":"other","pk":"p"}`, []step{
			{1.5, func(t *testing.T, c *azcosmos.ContainerClient) {
				if _, err := c.UpsertItem(ctx, pkP, []byte(`{"id":"x","pk":"p","ttl":4}`), nil); err != nil {
					t.Fatal(err)
				}
			}, true}, {4.999, nil, true}, {5, nil, false}}},
		{"R5 replace without ttl inherits defaultTtl", ttlp(100), `{"id":"x","pk":"p","ttl":5}`, []step{
			{2.5, replace(`{"id":"x","pk":"p"}`), true}, {6, nil, true}, {101.999, nil, true}, {102, nil, false}}},
		{"R5 replace adding ttl shortens", ttlp(100), `{"id":"x","pk":"p"}`, []step{
			{2.5, replace(`{"id":"x","pk":"p","ttl":3}`), true}, {4.999, nil, true}, {5, nil, false}}},
		{"R5 replace with ttl -1 stops expiry", ttlp(10), `{"id":"x","pk":"p"}`, []step{
			{5.5, replace(`{"id":"x","pk":"p","ttl":-1}`), true}, {1000, nil, true}}},
		{"R4 only the top-level lowercase ttl counts", ttlp(10), `{"id":"x","pk":"p","TTL":-1,"a":{"ttl":-1}}`, []step{
			{9.999, nil, true}, {10, nil, false}}},
		{"R16 the largest ttl", ttlp(-1), `{"id":"x","pk":"p","ttl":2147483647}`, []step{
			{2147483647 - 0.001, nil, true}, {2147483647, nil, false}}},
		{"R16 the largest defaultTtl", ttlp(2147483647), `{"id":"x","pk":"p"}`, []step{
			{2147483647 - 0.001, nil, true}, {2147483647, nil, false}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, cosmoshttp.Options{})
			c := e.container("c", tc.def)
			if _, err := c.CreateItem(ctx, pkP, []byte(tc.first), nil); err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.steps {
				e.at(s.at)
				if s.write != nil {
					s.write(t, c)
				}
				expectAlive(t, c, "x", s.alive, fmt.Sprintf("at base+%v", s.at))
			}
		})
	}
}

// TestTTLContainerReplace changes defaultTtl with a container PUT, which
// must re-resolve every item as SetDefaultTTL does (R12-R15).
func TestTTLContainerReplace(t *testing.T) {
	type item struct {
		id  string
		at  float64 // written at base+at+0.5: _ts is base+at
		ttl any     // nil: absent
	}
	type check struct {
		at    float64
		id    string
		alive bool
	}
	cases := []struct {
		name     string
		from, to *int32
		items    []item
		changeAt float64
		checks   []check // from changeAt on
	}{
		{"R14 off to 10 expires old items counted from their _ts", nil, ttlp(10),
			[]item{{"old", 0, nil}, {"own", 0, 500}, {"neg", 0, -1}, {"young", 95, nil}}, 100.5,
			[]check{{100.5, "old", false}, {100.5, "young", true}, {100.5, "own", true}, {104.999, "young", true}, {105, "young", false},
				{499.999, "own", true}, {500, "own", false}, {1000, "neg", true}}},
		{"R14 off to -1 applies stored ttls", nil, ttlp(-1),
			[]item{{"plain", 0, nil}, {"own", 0, 50}, {"old", 0, 3}}, 20.5,
			[]check{{20.5, "old", false}, {20.5, "own", true}, {49.999, "own", true}, {50, "own", false}, {1000, "plain", true}}},
		{"R13 R14 10 to off brings nothing expired back and stops expiry", ttlp(10), nil,
			[]item{{"a", 0, nil}, {"b", 5, nil}, {"own", 5, 3}}, 10.5,
			[]check{{10.5, "a", false}, {10.5, "own", false}, {10.5, "b", true}, {1000, "b", true}, {1000, "a", false}}},
		{"R15 lowering 100 to 10 hides items past it at once", ttlp(100), ttlp(10),
			[]item{{"a", 0, nil}, {"b", 50, nil}}, 55.5,
			[]check{{55.5, "a", false}, {55.5, "b", true}, {59.999, "b", true}, {60, "b", false}}},
		{"R13 R15 raising 10 to 100 extends the living only", ttlp(10), ttlp(100),
			[]item{{"a", 0, nil}, {"b", 5, nil}}, 12.5,
			[]check{{12.5, "a", false}, {12.5, "b", true}, {15, "b", true}, {104.999, "b", true}, {105, "b", false}, {105, "a", false}}},
		{"R1 -1 to 10 gives items without ttl the default", ttlp(-1), ttlp(10),
			[]item{{"a", 0, nil}, {"own", 0, 50}, {"b", 15, nil}}, 20.5,
			[]check{{20.5, "a", false}, {20.5, "b", true}, {24.999, "b", true}, {25, "b", false}, {49.999, "own", true}, {50, "own", false}}},
		{"R1 10 to -1 keeps own ttls only", ttlp(10), ttlp(-1),
			[]item{{"a", 0, nil}, {"own", 0, 50}}, 5.5,
			[]check{{5.5, "a", true}, {49.999, "own", true}, {50, "own", false}, {1000, "a", true}}},
	}
	for _, mode := range sweepModes {
		for _, tc := range cases {
			t.Run(mode.name+"/"+tc.name, func(t *testing.T) {
				e := newEnv(t, cosmoshttp.Options{SweepInterval: mode.interval})
				c := e.container("c", tc.from)
				for _, it := range tc.items {
					e.at(it.at + 0.5)
					d := doc{"id": it.id, "pk": "p"}
					if it.ttl != nil {
						d["ttl"] = it.ttl
					}
					create(t, c, pkP, d)
				}
				e.at(tc.changeAt)
				r, err := c.Read(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				p := *r.ContainerProperties
				p.DefaultTimeToLive = tc.to
				rr, err := c.Replace(ctx, p, nil)
				if err != nil {
					t.Fatalf("Replace defaultTtl %s: %v", ttlString(tc.to), err)
				}
				if ttlString(rr.ContainerProperties.DefaultTimeToLive) != ttlString(tc.to) {
					t.Errorf("Replace answered defaultTtl %s", ttlString(rr.ContainerProperties.DefaultTimeToLive))
				}
				for _, ck := range tc.checks {
					e.at(ck.at)
					expectAlive(t, c, ck.id, ck.alive, fmt.Sprintf("at base+%v", ck.at))
				}
			})
		}
	}
}

// TestTTLContainerReplaceAtomic: while a container PUT turns defaultTtl on
// over items already past it, concurrent COUNTs and queries see all of
// them or none, never some (R12).
func TestTTLContainerReplaceAtomic(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.container("c", nil)
	const n = 300
	b := c.NewTransactionalBatch(pkP)
	for i := 0; i < n; i++ {
		if i > 0 && i%100 == 0 {
			if r, err := c.ExecuteTransactionalBatch(ctx, b, nil); err != nil || !r.Success {
				t.Fatal(err)
			}
			b = c.NewTransactionalBatch(pkP)
		}
		b.CreateItem([]byte(fmt.Sprintf(`{"id":"i%03d","pk":"p"}`, i)), nil)
	}
	if r, err := c.ExecuteTransactionalBatch(ctx, b, nil); err != nil || !r.Success {
		t.Fatal(err)
	}
	e.at(100)
	stop := make(chan struct{})
	done := make(chan []string)
	for g := 0; g < 4; g++ {
		go func(g int) {
			var bad []string
			for i := 0; ; i++ {
				select {
				case <-stop:
					done <- bad
					return
				default:
				}
				q := "SELECT VALUE COUNT(1) FROM c"
				if g%2 == 1 {
					q = "SELECT VALUE c.id FROM c"
				}
				items, _, err := query(t, c, azcosmos.NewPartitionKey(), q, 0)
				if err != nil {
					bad = append(bad, err.Error())
					continue
				}
				got := len(items)
				if g%2 == 0 && len(items) == 1 {
					json.Unmarshal(items[0], &got)
				}
				if got != 0 && got != n {
					bad = append(bad, fmt.Sprintf("%s: %d", q, got))
				}
			}
		}(g)
	}
	r, err := c.Read(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := *r.ContainerProperties
	p.DefaultTimeToLive = ttlp(10)
	if _, err := c.Replace(ctx, p, nil); err != nil {
		t.Fatal(err)
	}
	// A few more reads after the change, then stop.
	for i := 0; i < 5; i++ {
		if got := count(t, c, azcosmos.NewPartitionKey()); got != 0 {
			t.Errorf("COUNT after the change: %d", got)
		}
	}
	close(stop)
	for g := 0; g < 4; g++ {
		for _, b := range <-done {
			t.Errorf("a reader saw a mix: %s", b)
		}
	}
}

// TestTTLQueries: TOP, OFFSET LIMIT and every aggregate work on the live
// items only (R9).
func TestTTLQueries(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.container("c", ttlp(-1))
	for i := 1; i <= 6; i++ {
		d := doc{"id": fmt.Sprintf("i%d", i), "pk": "p", "n": i}
		if i <= 2 {
			d["ttl"] = 5 // the two smallest expire
		}
		create(t, c, pkP, d)
	}
	e.at(5)
	cases := []struct{ q, want string }{
		{"SELECT VALUE c.id FROM c ORDER BY c.n", `"i3","i4","i5","i6"`},
		{"SELECT TOP 2 VALUE c.id FROM c ORDER BY c.n", `"i3","i4"`},
		{"SELECT VALUE c.id FROM c ORDER BY c.n OFFSET 1 LIMIT 2", `"i4","i5"`},
		{"SELECT VALUE COUNT(1) FROM c", `4`},
		{"SELECT VALUE SUM(c.n) FROM c", `18`},
		{"SELECT VALUE MIN(c.n) FROM c", `3`},
		{"SELECT VALUE MAX(c.n) FROM c", `6`},
		{"SELECT VALUE AVG(c.n) FROM c", `4.5`},
		{"SELECT VALUE COUNT(1) FROM c WHERE c.n < 3", `0`},
	}
	for _, pk := range []azcosmos.PartitionKey{pkP, azcosmos.NewPartitionKey()} {
		for _, tc := range cases {
			t.Run(tc.q, func(t *testing.T) {
				if got := joined(mustQuery(t, c, pk, tc.q)); got != tc.want {
					t.Errorf("got %s, want %s", got, tc.want)
				}
			})
		}
	}
}

// TestTTLContainerReplaceOther: a container PUT that keeps defaultTtl
// (changing only the indexing policy) touches no item: same _ts, _etag and
// expiry.
func TestTTLContainerReplaceOther(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.container("c", ttlp(10))
	create(t, c, pkP, doc{"id": "a", "pk": "p"})
	before, _ := read(t, c, pkP, "a")
	e.at(5)
	r, err := c.Read(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := *r.ContainerProperties
	p.IndexingPolicy = &azcosmos.IndexingPolicy{Automatic: true, IndexingMode: azcosmos.IndexingModeConsistent, ExcludedPaths: []azcosmos.ExcludedPath{{Path: "/*"}}, IncludedPaths: []azcosmos.IncludedPath{{Path: "/pk/?"}}}
	rr, err := c.Replace(ctx, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if jsonString(rr.ContainerProperties.IndexingPolicy) != jsonString(p.IndexingPolicy) {
		t.Errorf("indexingPolicy %s, want %s", jsonString(rr.ContainerProperties.IndexingPolicy), jsonString(p.IndexingPolicy))
	}
	after, _ := read(t, c, pkP, "a")
	if jsonString(after) != jsonString(before) {
		t.Errorf("item changed by a container PUT that kept defaultTtl:\n%s\n%s", jsonString(after), jsonString(before))
	}
	e.at(9.999)
	expectAlive(t, c, "a", true, "base+9.999")
	e.at(10)
	expectAlive(t, c, "a", false, "base+10")
}
