package conformance

import (
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/ttlstore/ttlstore/cosmoshttp"
)

// listDatabases returns the ids of every database, through the query pager
// (q with params as name/value pairs).
func listDatabases(t *testing.T, client *azcosmos.Client, q string, params ...any) []string {
	t.Helper()
	opts := &azcosmos.QueryDatabasesOptions{}
	for i := 0; i+1 < len(params); i += 2 {
		opts.QueryParameters = append(opts.QueryParameters, azcosmos.QueryParameter{Name: params[i].(string), Value: params[i+1]})
	}
	pager := client.NewQueryDatabasesPager(q, opts)
	out := []string{}
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatalf("query databases %q: %v", q, err)
		}
		for _, d := range page.Databases {
			out = append(out, d.ID)
		}
	}
	sort.Strings(out)
	return out
}

func TestDatabases(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.client

	t.Run("create 201", func(t *testing.T) {
		for _, id := range []string{"one", "two", "with space", "ünï"} {
			r, err := c.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: id}, nil)
			if err != nil {
				t.Fatalf("CreateDatabase %q: %v", id, err)
			}
			if r.RawResponse.StatusCode != http.StatusCreated {
				t.Errorf("CreateDatabase %q: status %d, want 201", id, r.RawResponse.StatusCode)
			}
			p := r.DatabaseProperties
			if p == nil || p.ID != id || p.ResourceID == "" || p.SelfLink == "" || p.ETag == nil || p.LastModified.IsZero() {
				t.Errorf("CreateDatabase %q: properties %+v, want id, _rid, _self, _etag, _ts", id, p)
			}
		}
	})
	t.Run("create again 409", func(t *testing.T) {
		_, err := c.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "one"}, nil)
		wantStatus(t, "CreateDatabase one again", err, http.StatusConflict)
	})
	t.Run("read", func(t *testing.T) {
		db, _ := c.NewDatabase("with space")
		r, err := db.Read(ctx, nil)
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		if r.RawResponse.StatusCode != http.StatusOK || r.DatabaseProperties.ID != "with space" {
			t.Errorf("Read: %d %+v", r.RawResponse.StatusCode, r.DatabaseProperties)
		}
		if got, want := r.DatabaseProperties.LastModified.Unix(), start.Unix(); got != want {
			t.Errorf("_ts %d, want %d (the mock clock's whole seconds)", got, want)
		}
		if r.ETag == "" || *r.DatabaseProperties.ETag != r.ETag {
			t.Errorf("etag header %q, _etag %v: want equal and non-empty", r.ETag, r.DatabaseProperties.ETag)
		}
	})
	t.Run("read missing 404", func(t *testing.T) {
		db, _ := c.NewDatabase("nope")
		_, err := db.Read(ctx, nil)
		wantStatus(t, "Read nope", err, http.StatusNotFound)
	})
	t.Run("list", func(t *testing.T) {
		got := strings.Join(listDatabases(t, c, "SELECT * FROM c"), "|")
		if want := "one|two|with space|ünï"; got != want {
			t.Errorf("databases %q, want %q", got, want)
		}
	})
	t.Run("query with parameter", func(t *testing.T) {
		got := strings.Join(listDatabases(t, c, "SELECT * FROM root r WHERE r.id = @id", "@id", "two"), "|")
		if got != "two" {
			t.Errorf("databases %q, want two", got)
		}
	})
	t.Run("delete 204 then 404", func(t *testing.T) {
		db, _ := c.NewDatabase("two")
		r, err := db.Delete(ctx, nil)
		if err != nil {
			t.Fatalf("Delete: %v", err)
		}
		if r.RawResponse.StatusCode != http.StatusNoContent {
			t.Errorf("Delete: status %d, want 204", r.RawResponse.StatusCode)
		}
		_, err = db.Read(ctx, nil)
		wantStatus(t, "Read after delete", err, http.StatusNotFound)
		_, err = db.Delete(ctx, nil)
		wantStatus(t, "Delete again", err, http.StatusNotFound)
		if got := strings.Join(listDatabases(t, c, "SELECT * FROM c"), "|"); strings.Contains(got, "two") {
			t.Errorf("list after delete: %q", got)
		}
	})
	t.Run("delete removes containers", func(t *testing.T) {
		_, err := c.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "gone"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		db, _ := c.NewDatabase("gone")
		if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "c", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Delete(ctx, nil); err != nil {
			t.Fatal(err)
		}
		// Recreated: the old container must not be back.
		if _, err := c.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "gone"}, nil); err != nil {
			t.Fatal(err)
		}
		ct, _ := db.NewContainer("c")
		_, err = ct.Read(ctx, nil)
		wantStatus(t, "Read container of a deleted and recreated database", err, http.StatusNotFound)
	})
}

// TestDatabaseConditional: the If-Match / If-None-Match of
// ReadDatabaseOptions and DeleteDatabaseOptions.
func TestDatabaseConditional(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	r, err := e.client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "d"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	et := r.ETag
	if et == "" {
		t.Fatal("no etag")
	}
	stale := azcore.ETag(`"stale"`)
	db, _ := e.client.NewDatabase("d")
	t.Run("read If-None-Match current 304", func(t *testing.T) {
		r, err := db.Read(ctx, &azcosmos.ReadDatabaseOptions{IfNoneMatchEtag: &et})
		if err != nil || r.RawResponse.StatusCode != http.StatusNotModified {
			t.Errorf("%v %v, want 304", err, r.RawResponse)
		}
	})
	t.Run("read If-None-Match stale 200", func(t *testing.T) {
		r, err := db.Read(ctx, &azcosmos.ReadDatabaseOptions{IfNoneMatchEtag: &stale})
		if err != nil || r.RawResponse.StatusCode != http.StatusOK {
			t.Errorf("%v, want 200", err)
		}
	})
	t.Run("delete If-Match stale 412", func(t *testing.T) {
		_, err := db.Delete(ctx, &azcosmos.DeleteDatabaseOptions{IfMatchEtag: &stale})
		wantStatus(t, "delete", err, http.StatusPreconditionFailed)
		if _, err := db.Read(ctx, nil); err != nil {
			t.Errorf("database gone after a refused delete: %v", err)
		}
	})
	t.Run("delete If-Match current 204", func(t *testing.T) {
		r, err := db.Delete(ctx, &azcosmos.DeleteDatabaseOptions{IfMatchEtag: &et})
		if err != nil || r.RawResponse.StatusCode != http.StatusNoContent {
			t.Errorf("%v, want 204", err)
		}
	})
}
