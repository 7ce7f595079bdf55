package conformance

import (
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/ttlstore/ttlstore/cosmoshttp"
)

func listContainers(t *testing.T, db *azcosmos.DatabaseClient, q string, params ...any) []azcosmos.ContainerProperties {
	t.Helper()
	opts := &azcosmos.QueryContainersOptions{}
	for i := 0; i+1 < len(params); i += 2 {
		opts.QueryParameters = append(opts.QueryParameters, azcosmos.QueryParameter{Name: params[i].(string), Value: params[i+1]})
	}
	pager := db.NewQueryContainersPager(q, opts)
	var out []azcosmos.ContainerProperties
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatalf("query containers %q: %v", q, err)
		}
		out = append(out, page.Containers...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func TestContainers(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	db := e.database()
	policy := &azcosmos.IndexingPolicy{
		Automatic:     true,
		IndexingMode:  azcosmos.IndexingModeConsistent,
		IncludedPaths: []azcosmos.IncludedPath{{Path: "/*"}},
		ExcludedPaths: []azcosmos.ExcludedPath{{Path: "/\"_etag\"/?"}, {Path: "/big/*"}},
	}
	creates := []struct {
		name string
		p    azcosmos.ContainerProperties
	}{
		{"ttl off", azcosmos.ContainerProperties{ID: "off", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}},
		{"ttl -1", azcosmos.ContainerProperties{ID: "never", DefaultTimeToLive: ttlp(-1), PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}},
		{"ttl 3600 with indexing policy", azcosmos.ContainerProperties{ID: "hour", DefaultTimeToLive: ttlp(3600), IndexingPolicy: policy, PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/tenant"}}}},
		{"nested pk path", azcosmos.ContainerProperties{ID: "nested", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/a/b"}}}},
	}
	for _, tc := range creates {
		t.Run("create 201/"+tc.name, func(t *testing.T) {
			r, err := db.CreateContainer(ctx, tc.p, nil)
			if err != nil {
				t.Fatalf("CreateContainer: %v", err)
			}
			if r.RawResponse.StatusCode != http.StatusCreated {
				t.Errorf("status %d, want 201", r.RawResponse.StatusCode)
			}
			checkProps(t, "create", r.ContainerProperties, tc.p)
			ct, _ := db.NewContainer(tc.p.ID)
			rr, err := ct.Read(ctx, nil)
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if rr.RawResponse.StatusCode != http.StatusOK {
				t.Errorf("Read status %d, want 200", rr.RawResponse.StatusCode)
			}
			checkProps(t, "read", rr.ContainerProperties, tc.p)
			if rr.ETag == "" || rr.ContainerProperties.ETag == nil || *rr.ContainerProperties.ETag != rr.ETag {
				t.Errorf("etag header %q, _etag %v: want equal", rr.ETag, rr.ContainerProperties.ETag)
			}
			if tc.p.IndexingPolicy != nil && !reflect.DeepEqual(rr.ContainerProperties.IndexingPolicy, tc.p.IndexingPolicy) {
				t.Errorf("indexingPolicy %+v, want %+v echoed", rr.ContainerProperties.IndexingPolicy, tc.p.IndexingPolicy)
			}
		})
	}
	t.Run("create again 409", func(t *testing.T) {
		_, err := db.CreateContainer(ctx, creates[0].p, nil)
		wantStatus(t, "CreateContainer off again", err, http.StatusConflict)
	})
	t.Run("create in missing database 404", func(t *testing.T) {
		nodb, _ := e.client.NewDatabase("nodb")
		_, err := nodb.CreateContainer(ctx, creates[0].p, nil)
		wantStatus(t, "CreateContainer in nodb", err, http.StatusNotFound)
	})
	t.Run("invalid defaultTtl 400 (R7)", func(t *testing.T) {
		for _, n := range []int32{0, -2} {
			_, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "bad", DefaultTimeToLive: ttlp(n), PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil)
			wantStatus(t, "CreateContainer defaultTtl "+ttlString(ttlp(n)), err, http.StatusBadRequest)
		}
	})
	t.Run("list", func(t *testing.T) {
		var got []string
		for _, p := range listContainers(t, db, "SELECT * FROM c") {
			got = append(got, p.ID)
			if p.ResourceID == "" || len(p.PartitionKeyDefinition.Paths) != 1 {
				t.Errorf("listed %+v: want _rid and partitionKey", p)
			}
		}
		if g, w := strings.Join(got, "|"), "hour|nested|never|off"; g != w {
			t.Errorf("containers %q, want %q", g, w)
		}
	})
	t.Run("query with parameter", func(t *testing.T) {
		got := listContainers(t, db, "SELECT * FROM root r WHERE r.id = @id", "@id", "hour")
		if len(got) != 1 || got[0].ID != "hour" || got[0].DefaultTimeToLive == nil || *got[0].DefaultTimeToLive != 3600 {
			t.Errorf("containers %+v, want hour with defaultTtl 3600", got)
		}
	})
	replaces := []struct {
		name string
		to   *int32
	}{
		{"off to 60", ttlp(60)},
		{"60 to -1", ttlp(-1)},
		{"-1 to 7", ttlp(7)},
		{"7 to off", nil},
	}
	for _, tc := range replaces {
		t.Run("replace defaultTtl/"+tc.name, func(t *testing.T) {
			ct, _ := db.NewContainer("off")
			rr, err := ct.Read(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			p := *rr.ContainerProperties
			p.DefaultTimeToLive = tc.to
			r, err := ct.Replace(ctx, p, nil)
			if err != nil {
				t.Fatalf("Replace: %v", err)
			}
			if r.RawResponse.StatusCode != http.StatusOK {
				t.Errorf("Replace status %d, want 200", r.RawResponse.StatusCode)
			}
			checkProps(t, "replace", r.ContainerProperties, p)
			rr, err = ct.Read(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkProps(t, "read after replace", rr.ContainerProperties, p)
		})
	}
	t.Run("replace changing partition key 400", func(t *testing.T) {
		ct, _ := db.NewContainer("never")
		_, err := ct.Replace(ctx, azcosmos.ContainerProperties{ID: "never", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/other"}}}, nil)
		wantStatus(t, "Replace with /other", err, http.StatusBadRequest)
	})
	t.Run("replace missing 404", func(t *testing.T) {
		ct, _ := db.NewContainer("missing")
		_, err := ct.Replace(ctx, azcosmos.ContainerProperties{ID: "missing", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil)
		wantStatus(t, "Replace missing", err, http.StatusNotFound)
	})
	t.Run("delete 204 then 404", func(t *testing.T) {
		ct, _ := db.NewContainer("nested")
		r, err := ct.Delete(ctx, nil)
		if err != nil {
			t.Fatalf("Delete: %v", err)
		}
		if r.RawResponse.StatusCode != http.StatusNoContent {
			t.Errorf("Delete status %d, want 204", r.RawResponse.StatusCode)
		}
		_, err = ct.Read(ctx, nil)
		wantStatus(t, "Read after delete", err, http.StatusNotFound)
		_, err = ct.Delete(ctx, nil)
		wantStatus(t, "Delete again", err, http.StatusNotFound)
		_, err = ct.ReadItem(ctx, azcosmos.NewPartitionKeyString("x"), "x", nil)
		wantStatus(t, "ReadItem in deleted container", err, http.StatusNotFound)
	})
	t.Run("recreated container is empty", func(t *testing.T) {
		ct := e.container("again", nil)
		create(t, ct, azcosmos.NewPartitionKeyString("p"), doc{"id": "a", "pk": "p"})
		if _, err := ct.Delete(ctx, nil); err != nil {
			t.Fatal(err)
		}
		ct = e.container("again", nil)
		_, st := read(t, ct, azcosmos.NewPartitionKeyString("p"), "a")
		if st != http.StatusNotFound {
			t.Errorf("item of the deleted container: status %d, want 404", st)
		}
	})
}

// checkProps compares what the SDK parsed with what was sent.
func checkProps(t *testing.T, what string, got *azcosmos.ContainerProperties, want azcosmos.ContainerProperties) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: no container properties in the response", what)
	}
	if got.ID != want.ID {
		t.Errorf("%s: id %q, want %q", what, got.ID, want.ID)
	}
	if ttlString(got.DefaultTimeToLive) != ttlString(want.DefaultTimeToLive) {
		t.Errorf("%s: defaultTtl %s, want %s", what, ttlString(got.DefaultTimeToLive), ttlString(want.DefaultTimeToLive))
	}
	if !reflect.DeepEqual(got.PartitionKeyDefinition.Paths, want.PartitionKeyDefinition.Paths) {
		t.Errorf("%s: partitionKey.paths %q, want %q", what, got.PartitionKeyDefinition.Paths, want.PartitionKeyDefinition.Paths)
	}
	if got.ResourceID == "" || got.SelfLink == "" || got.ETag == nil || got.LastModified.IsZero() {
		t.Errorf("%s: _rid %q _self %q _etag %v _ts %v: want all set", what, got.ResourceID, got.SelfLink, got.ETag, got.LastModified)
	}
}

// TestContainerLongNames: names up to Cosmos DB's 255 characters work, in
// memory and over a directory (where an escaped name can be longer than a
// file name may be); longer ones are refused with 400. Names of 255
// characters that take more than 255 bytes (or escape to more) may be
// refused with 400, never a 5xx.
func TestContainerLongNames(t *testing.T) {
	names := []struct {
		id       string
		required bool // ASCII, no escaping: must work
	}{
		{strings.Repeat("x", 255), true},
		{strings.Repeat("é", 200), false},
		{strings.Repeat("日", 255), false},
		{strings.Repeat("%", 255), false},
		{strings.Repeat("x", 100) + strings.Repeat(" ", 100) + "x", false},
	}
	for _, durable := range []bool{false, true} {
		name := "memory"
		opts := cosmoshttp.Options{}
		if durable {
			name = "durable"
			opts.Dir = t.TempDir()
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, opts)
			var made []string
			for _, n := range names {
				label := fmt.Sprintf("%d characters %.6s...", len([]rune(n.id)), n.id)
				_, err := e.client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: n.id}, nil)
				if st := status(err); st != 0 && (n.required || st != http.StatusBadRequest) {
					t.Errorf("CreateDatabase of %s: %d, want 201%s (%v)", label, st, map[bool]string{false: " or 400"}[n.required], shortErr(err))
				}
				_, err = e.database().CreateContainer(ctx, azcosmos.ContainerProperties{ID: n.id, PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil)
				if st := status(err); st != 0 && (n.required || st != http.StatusBadRequest) {
					t.Errorf("CreateContainer of %s: %d, want 201%s (%v)", label, st, map[bool]string{false: " or 400"}[n.required], shortErr(err))
				}
				if err != nil {
					continue
				}
				made = append(made, n.id)
				c, _ := e.database().NewContainer(n.id)
				create(t, c, pkP, doc{"id": "a", "pk": "p"})
			}
			if durable {
				e.restart()
			}
			for _, id := range made {
				c, _ := e.client.NewContainer("db", id)
				if _, st := read(t, c, pkP, "a"); st != 200 {
					t.Errorf("read in %.6s...: %d", id, st)
				}
			}
			long := strings.Repeat("x", 256)
			_, err := e.client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: long}, nil)
			wantStatus(t, "CreateDatabase of 256 characters", err, http.StatusBadRequest)
			_, err = e.database().CreateContainer(ctx, azcosmos.ContainerProperties{ID: long, PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil)
			wantStatus(t, "CreateContainer of 256 characters", err, http.StatusBadRequest)
		})
	}
}
