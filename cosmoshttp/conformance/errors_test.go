package conformance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/ttlstore/ttlstore/cosmoshttp"
)

// TestErrorBodies checks the shape of error answers: the status, a JSON
// {"code","message"} body, and no x-ms-substatus that would make the SDK
// retry.
func TestErrorBodies(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{MaxDocumentSize: 1024})
	c := e.container("c", nil)
	create(t, c, pkP, doc{"id": "a", "pk": "p"})
	stale := azcore.ETag(`"stale"`)
	nodb, _ := e.client.NewDatabase("nodb")
	noc, _ := e.database().NewContainer("noc")
	cases := []struct {
		name   string
		run    func() error
		status int
		code   string
	}{
		{"item 404", func() error { _, err := c.ReadItem(ctx, pkP, "zz", nil); return err }, 404, "NotFound"},
		{"database 404", func() error { _, err := nodb.Read(ctx, nil); return err }, 404, "NotFound"},
		{"container 404", func() error { _, err := noc.Read(ctx, nil); return err }, 404, "NotFound"},
		{"item in missing container 404", func() error { _, err := noc.ReadItem(ctx, pkP, "a", nil); return err }, 404, "NotFound"},
		{"409", func() error { _, err := c.CreateItem(ctx, pkP, []byte(`{"id":"a","pk":"p"}`), nil); return err }, 409, "Conflict"},
		{"412", func() error {
			_, err := c.ReplaceItem(ctx, pkP, "a", []byte(`{"id":"a","pk":"p"}`), &azcosmos.ItemOptions{IfMatchEtag: &stale})
			return err
		}, 412, "PreconditionFailed"},
		{"400 invalid JSON", func() error { _, err := c.CreateItem(ctx, pkP, []byte(`{"id":`), nil); return err }, 400, "BadRequest"},
		{"400 not an object", func() error { _, err := c.CreateItem(ctx, pkP, []byte(`["a"]`), nil); return err }, 400, "BadRequest"},
		{"413 create", func() error {
			_, err := c.CreateItem(ctx, pkP, []byte(`{"id":"big","pk":"p","x":"`+strings.Repeat("x", 2000)+`"}`), nil)
			return err
		}, 413, "RequestEntityTooLarge"},
		{"413 upsert", func() error {
			_, err := c.UpsertItem(ctx, pkP, []byte(`{"id":"a","pk":"p","x":"`+strings.Repeat("x", 2000)+`"}`), nil)
			return err
		}, 413, "RequestEntityTooLarge"},
		{"413 replace", func() error {
			_, err := c.ReplaceItem(ctx, pkP, "a", []byte(`{"id":"a","pk":"p","x":"`+strings.Repeat("x", 2000)+`"}`), nil)
			return err
		}, 413, "RequestEntityTooLarge"},
		{"413 patch growing the item", func() error {
			p := azcosmos.PatchOperations{}
			p.AppendSet("/x", strings.Repeat("x", 1000))
			p.AppendSet("/y", strings.Repeat("y", 1000))
			_, err := c.PatchItem(ctx, pkP, "a", p, nil)
			return err
		}, 413, "RequestEntityTooLarge"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if status(err) != tc.status {
				t.Fatalf("status %d, want %d (err %v)", status(err), tc.status, err)
			}
			var re *azcore.ResponseError
			errors_As(err, &re)
			if ct := re.RawResponse.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q", ct)
			}
			if sub := re.RawResponse.Header.Get("x-ms-substatus"); sub != "" && sub != "0" && tc.status == 404 {
				t.Errorf("404 with x-ms-substatus %s (1002 makes the SDK retry)", sub)
			}
			code, msg := errorBody(t, err)
			if code != tc.code || msg == "" {
				t.Errorf("body code %q message %q, want code %q and a message", code, msg, tc.code)
			}
		})
	}
	t.Run("refused writes changed nothing", func(t *testing.T) {
		d, _ := read(t, c, pkP, "a")
		if _, ok := d["x"]; ok {
			t.Errorf("a refused write changed a: %v", d)
		}
		if _, st := read(t, c, pkP, "big"); st != 404 {
			t.Errorf("refused create stored big: %d", st)
		}
	})
}

func errors_As(err error, re **azcore.ResponseError) {
	for err != nil {
		if r, ok := err.(*azcore.ResponseError); ok {
			*re = r
			return
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return
		}
		err = u.Unwrap()
	}
}

// TestRawMalformed sends what the SDK would not: never a 5xx, never a
// change.
func TestRawMalformed(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	e.container("c", nil)
	key := cosmoshttp.EmulatorKey
	docs := "/dbs/db/colls/c/docs"
	cases := []struct {
		name, method, path, resType, link string
		hdr                               map[string]string
		body                              string
		want                              int // 0: any 4xx
	}{
		{"item body not JSON", "POST", docs, "docs", "dbs/db/colls/c", map[string]string{"x-ms-documentdb-partitionkey": `["p"]`}, `nope`, 400},
		{"pk header not JSON", "POST", docs, "docs", "dbs/db/colls/c", map[string]string{"x-ms-documentdb-partitionkey": `[p`}, `{"id":"x","pk":"p"}`, 400},
		{"pk header not an array", "POST", docs, "docs", "dbs/db/colls/c", map[string]string{"x-ms-documentdb-partitionkey": `"p"`}, `{"id":"x","pk":"p"}`, 400},
		{"pk header with two values for one path", "POST", docs, "docs", "dbs/db/colls/c", map[string]string{"x-ms-documentdb-partitionkey": `["p","q"]`}, `{"id":"x","pk":"p"}`, 400},
		{"query body not JSON", "POST", docs, "docs", "dbs/db/colls/c", map[string]string{"x-ms-documentdb-query": "True", "Content-Type": "application/query+json"}, `{`, 400},
		{"query without query", "POST", docs, "docs", "dbs/db/colls/c", map[string]string{"x-ms-documentdb-query": "True", "Content-Type": "application/query+json"}, `{}`, 400},
		{"batch body not an array", "POST", docs, "docs", "dbs/db/colls/c", map[string]string{"x-ms-cosmos-is-batch-request": "True", "x-ms-documentdb-partitionkey": `["p"]`}, `{}`, 400},
		{"batch unknown operation", "POST", docs, "docs", "dbs/db/colls/c", map[string]string{"x-ms-cosmos-is-batch-request": "True", "x-ms-documentdb-partitionkey": `["p"]`}, `[{"operationType":"Explode","id":"x"}]`, 400},
		{"patch body not JSON", "PATCH", docs + "/x", "docs", "dbs/db/colls/c/docs/x", map[string]string{"x-ms-documentdb-partitionkey": `["p"]`}, `{`, 400},
		{"patch unknown op", "PATCH", docs + "/x", "docs", "dbs/db/colls/c/docs/x", map[string]string{"x-ms-documentdb-partitionkey": `["p"]`}, `{"operations":[{"op":"move","path":"/a"}]}`, 0},
		{"container body not JSON", "POST", "/dbs/db/colls", "colls", "dbs/db", nil, `{`, 400},
		{"container without id", "POST", "/dbs/db/colls", "colls", "dbs/db", nil, `{"partitionKey":{"paths":["/pk"]}}`, 400},
		{"database body not JSON", "POST", "/dbs", "dbs", "", nil, `x`, 400},
		{"unknown resource", "GET", "/dbs/db/users", "users", "dbs/db", nil, "", 0},
		{"too deep", "GET", docs + "/x/attachments/y", "attachments", "dbs/db/colls/c/docs/x/attachments/y", nil, "", 0},
		{"unsupported method", "PATCH", "/dbs/db", "dbs", "dbs/db", nil, `{}`, 0},
		{"change feed unknown A-IM", "GET", docs, "docs", "dbs/db/colls/c", map[string]string{"A-IM": "Everything"}, "", 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body []byte
			if tc.body != "" {
				body = []byte(tc.body)
			}
			resp, b := e.raw(t, tc.method, tc.path, key, tc.resType, tc.link, tc.hdr, body)
			if resp.StatusCode >= 500 || resp.StatusCode < 400 || (tc.want != 0 && resp.StatusCode != tc.want) {
				t.Errorf("status %d (%s), want %d (0: any 4xx)", resp.StatusCode, b, tc.want)
			}
			var eb struct{ Code, Message string }
			if err := json.Unmarshal(b, &eb); err != nil || eb.Message == "" {
				t.Errorf("body %q is not {code,message}", b)
			}
		})
	}
	t.Run("foreign continuations 400", func(t *testing.T) {
		c, _ := e.database().NewContainer("c")
		for i := 0; i < 5; i++ {
			create(t, c, pkP, doc{"id": fmt.Sprint(i), "pk": "p", "n": i})
		}
		pager := c.NewQueryItemsPager("SELECT * FROM c ORDER BY c.n", pkP, &azcosmos.QueryOptions{PageSizeHint: 2})
		page, err := pager.NextPage(ctx)
		if err != nil || page.ContinuationToken == nil {
			t.Fatalf("%v", err)
		}
		real := *page.ContinuationToken
		for _, tok := range []string{"garbage", "{}", "null", `{"k":[1,2,3]}`, strings.Repeat("A", 5000), real + "x", real[:len(real)/2]} {
			tok := tok
			q := c.NewQueryItemsPager("SELECT * FROM c ORDER BY c.n", pkP, &azcosmos.QueryOptions{PageSizeHint: 2, ContinuationToken: &tok})
			_, err := q.NextPage(ctx)
			if st := status(err); st != http.StatusBadRequest && st != 0 {
				t.Errorf("continuation %.20q: %d %v", tok, st, shortErr(err))
			}
		}
		// A token of one query given to another: refused or answered, never a 5xx.
		q := c.NewQueryItemsPager("SELECT VALUE c.id FROM c WHERE c.n > 0", azcosmos.NewPartitionKey(), &azcosmos.QueryOptions{ContinuationToken: &real})
		if _, err := q.NextPage(ctx); status(err) >= 500 || status(err) < 0 {
			t.Errorf("another query's continuation: %v", err)
		}
		for i := 0; i < 5; i++ {
			c.DeleteItem(ctx, pkP, fmt.Sprint(i), nil)
		}
	})
	t.Run("odd partition key headers: never a 5xx", func(t *testing.T) {
		for _, h := range []string{`[{}]`, `[]`, `[null]`, `[1e400]`, `[NaN]`, `["\ud800"]`, `[["a"]]`, `[{"a":1}]`, `["a"`, ``, `[1,]`} {
			for _, m := range []struct{ method, path, link, body string }{
				{"POST", docs, "dbs/db/colls/c", `{"id":"odd","pk":"p"}`},
				{"GET", docs + "/odd", "dbs/db/colls/c/docs/odd", ""},
				{"DELETE", docs + "/odd", "dbs/db/colls/c/docs/odd", ""},
			} {
				var body []byte
				if m.body != "" {
					body = []byte(m.body)
				}
				resp, b := e.raw(t, m.method, m.path, key, "docs", m.link, map[string]string{"x-ms-documentdb-partitionkey": h}, body)
				if resp.StatusCode >= 500 {
					t.Errorf("%s with partition key %s: %d %s", m.method, h, resp.StatusCode, b)
				}
			}
		}
	})
	t.Run("nothing changed", func(t *testing.T) {
		c, _ := e.database().NewContainer("c")
		if n := count(t, c, azcosmos.NewPartitionKey()); n != 0 {
			t.Errorf("%d items after refused requests", n)
		}
	})
}

// TestNamesEscapingDir: database and container ids that would leave the
// data directory are refused, and nothing is written outside it.
func TestNamesEscapingDir(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, cosmoshttp.Options{Dir: dir})
	db := e.database()
	// "." and ".." may be refused or kept inside Dir: the SDK cannot
	// address them anyway (its paths are cleaned).
	for _, id := range []string{"..", "."} {
		t.Run("database "+id+" refused or inside Dir", func(t *testing.T) {
			_, err := e.client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: id}, nil)
			if st := status(err); st != 0 && st != http.StatusBadRequest {
				t.Errorf("CreateDatabase %q: status %d", id, st)
			}
		})
		t.Run("container "+id+" refused or inside Dir", func(t *testing.T) {
			_, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: id, PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil)
			if st := status(err); st != 0 && st != http.StatusBadRequest {
				t.Errorf("CreateContainer %q: status %d", id, st)
			}
		})
	}
	for _, id := range []string{"a/b", `a\b`, "../x", "", "a?b", "a#b"} {
		t.Run("database "+id, func(t *testing.T) {
			_, err := e.client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: id}, nil)
			wantStatus(t, "CreateDatabase", err, http.StatusBadRequest)
		})
		t.Run("container "+id, func(t *testing.T) {
			_, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: id, PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil)
			wantStatus(t, "CreateContainer", err, http.StatusBadRequest)
		})
	}
	t.Run("a name with dots is fine", func(t *testing.T) {
		if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "..x", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil); err != nil {
			t.Errorf("CreateContainer ..x: %v", err)
		}
	})
	t.Run("nothing outside Dir", func(t *testing.T) {
		ents, _ := os.ReadDir(parent)
		if len(ents) != 1 {
			var names []string
			for _, en := range ents {
				names = append(names, en.Name())
			}
			t.Errorf("entries beside Dir: %v", names)
		}
	})
}

// TestTooLargeDefault: an item over the default 2 MiB limit gets 413 through
// the SDK, even though the handler refuses it before reading it whole (the
// client is still writing when the answer comes).
func TestTooLargeDefault(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.container("c", nil)
	for _, size := range []int{2<<20 + 100, 8 << 20} {
		t.Run(fmt.Sprintf("%d bytes", size), func(t *testing.T) {
			body := []byte(`{"id":"big","pk":"p","x":"` + strings.Repeat("x", size) + `"}`)
			_, err := c.CreateItem(ctx, pkP, body, nil)
			if status(err) != http.StatusRequestEntityTooLarge {
				t.Errorf("create of %d bytes: %v, want 413", len(body), err)
			}
			_, err = c.UpsertItem(ctx, pkP, body, nil)
			if status(err) != http.StatusRequestEntityTooLarge {
				t.Errorf("upsert of %d bytes: %v, want 413", len(body), err)
			}
			// The connection is still usable.
			create(t, c, pkP, doc{"id": fmt.Sprint(size), "pk": "p"})
		})
	}
	t.Run("just under the limit", func(t *testing.T) {
		body := []byte(`{"id":"fits","pk":"p","x":"` + strings.Repeat("x", 2<<20-200) + `"}`)
		if _, err := c.CreateItem(ctx, pkP, body, nil); err != nil {
			t.Errorf("create of %d bytes: %v", len(body), shortErr(err))
		}
	})
}
