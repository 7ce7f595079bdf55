package conformance

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/ttlstore/ttlstore/cosmoshttp"
)

func TestItemCRUD(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.container("c", nil)
	pk := azcosmos.NewPartitionKeyString("p")
	steps := []struct {
		name   string
		run    func() (*http.Response, error)
		status int
	}{
		{"create 201", func() (*http.Response, error) {
			r, err := c.CreateItem(ctx, pk, []byte(`{"id":"a","pk":"p","v":1}`), nil)
			return r.RawResponse, err
		}, http.StatusCreated},
		{"create again 409", func() (*http.Response, error) {
			r, err := c.CreateItem(ctx, pk, []byte(`{"id":"a","pk":"p","v":9}`), nil)
			return r.RawResponse, err
		}, http.StatusConflict},
		{"read 200", func() (*http.Response, error) {
			r, err := c.ReadItem(ctx, pk, "a", nil)
			return r.RawResponse, err
		}, http.StatusOK},
		{"replace 200", func() (*http.Response, error) {
			r, err := c.ReplaceItem(ctx, pk, "a", []byte(`{"id":"a","pk":"p","v":2}`), nil)
			return r.RawResponse, err
		}, http.StatusOK},
		{"upsert new 201", func() (*http.Response, error) {
			r, err := c.UpsertItem(ctx, pk, []byte(`{"id":"b","pk":"p","v":1}`), nil)
			return r.RawResponse, err
		}, http.StatusCreated},
		{"upsert existing 200", func() (*http.Response, error) {
			r, err := c.UpsertItem(ctx, pk, []byte(`{"id":"b","pk":"p","v":2}`), nil)
			return r.RawResponse, err
		}, http.StatusOK},
		{"delete 204", func() (*http.Response, error) {
			r, err := c.DeleteItem(ctx, pk, "b", nil)
			return r.RawResponse, err
		}, http.StatusNoContent},
		{"read deleted 404", func() (*http.Response, error) {
			r, err := c.ReadItem(ctx, pk, "b", nil)
			return r.RawResponse, err
		}, http.StatusNotFound},
		{"delete deleted 404", func() (*http.Response, error) {
			r, err := c.DeleteItem(ctx, pk, "b", nil)
			return r.RawResponse, err
		}, http.StatusNotFound},
		{"replace missing 404", func() (*http.Response, error) {
			r, err := c.ReplaceItem(ctx, pk, "b", []byte(`{"id":"b","pk":"p"}`), nil)
			return r.RawResponse, err
		}, http.StatusNotFound},
		{"read in other partition 404", func() (*http.Response, error) {
			r, err := c.ReadItem(ctx, azcosmos.NewPartitionKeyString("q"), "a", nil)
			return r.RawResponse, err
		}, http.StatusNotFound},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			resp, err := s.run()
			got := status(err)
			if err == nil {
				got = resp.StatusCode
			}
			if got != s.status {
				t.Errorf("status %d, want %d (err %v)", got, s.status, err)
			}
		})
	}
	t.Run("state", func(t *testing.T) {
		d, st := read(t, c, pk, "a")
		if st != 200 || d["v"] != 2.0 {
			t.Errorf("a: %v %v, want v 2", st, d)
		}
	})
}

func TestItemIDs(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.container("c", nil)
	pk := azcosmos.NewPartitionKeyString("p")
	for _, id := range []string{"with space", "per%cent", "%20", "ünïcødé 日本", "plus+sign", "q?x#y", "a=b&c;d,e", "emoji 😀", "dot.", "x:y@z$"} {
		t.Run(id, func(t *testing.T) {
			create(t, c, pk, doc{"id": id, "pk": "p", "v": 1})
			d, st := read(t, c, pk, id)
			if st != 200 || d["id"] != id {
				t.Fatalf("read %q: %d %v", id, st, d)
			}
			if _, err := c.ReplaceItem(ctx, pk, id, jsonDoc(t, doc{"id": id, "pk": "p", "v": 2}), nil); err != nil {
				t.Errorf("replace %q: %v", id, err)
			}
			if d, _ := read(t, c, pk, id); d["v"] != 2.0 {
				t.Errorf("after replace %q: %v", id, d)
			}
			p := azcosmos.PatchOperations{}
			p.AppendIncrement("/v", 1)
			if _, err := c.PatchItem(ctx, pk, id, p, nil); err != nil {
				t.Errorf("patch %q: %v", id, err)
			}
			items := mustQuery(t, c, pk, "SELECT * FROM c WHERE c.id = @id", "@id", id)
			if got := ids(t, items); len(got) != 1 || got[0] != id {
				t.Errorf("query by id %q: %q", id, got)
			}
			if _, err := c.DeleteItem(ctx, pk, id, nil); err != nil {
				t.Errorf("delete %q: %v", id, err)
			}
			if _, st := read(t, c, pk, id); st != 404 {
				t.Errorf("read after delete %q: %d", id, st)
			}
		})
	}
	t.Run("R8 an id of 1023 bytes", func(t *testing.T) {
		for _, id := range []string{strings.Repeat("x", 1023), strings.Repeat("é", 511) + "x"} {
			if _, err := c.CreateItem(ctx, pk, jsonDoc(t, doc{"id": id, "pk": "p"}), nil); err != nil {
				t.Errorf("create id of %d bytes: %v", len(id), shortErr(err))
				continue
			}
			if _, st := read(t, c, pk, id); st != 200 {
				t.Errorf("read id of %d bytes: %d", len(id), st)
			}
			if _, err := c.DeleteItem(ctx, pk, id, nil); err != nil {
				t.Errorf("delete id of %d bytes: %v", len(id), err)
			}
		}
	})
	t.Run("ids are case-sensitive", func(t *testing.T) {
		create(t, c, pk, doc{"id": "Case", "pk": "p", "v": "upper"})
		create(t, c, pk, doc{"id": "case", "pk": "p", "v": "lower"})
		if d, _ := read(t, c, pk, "Case"); d["v"] != "upper" {
			t.Errorf("Case: %v", d)
		}
		if d, _ := read(t, c, pk, "case"); d["v"] != "lower" {
			t.Errorf("case: %v", d)
		}
		for _, id := range []string{"Case", "case"} {
			if _, err := c.DeleteItem(ctx, pk, id, nil); err != nil {
				t.Error(err)
			}
		}
	})
	t.Run("invalid ids 400 (R8)", func(t *testing.T) {
		for name, body := range map[string]string{
			"slash":     `{"id":"a/b","pk":"p"}`,
			"backslash": `{"id":"a\\b","pk":"p"}`,
			"empty":     `{"id":"","pk":"p"}`,
			"missing":   `{"pk":"p"}`,
			"number":    `{"id":5,"pk":"p"}`,
			"1024":      `{"id":"` + strings.Repeat("x", 1024) + `","pk":"p"}`,
		} {
			_, err := c.CreateItem(ctx, pk, []byte(body), nil)
			wantStatus(t, "create id "+name, err, http.StatusBadRequest)
			if n := count(t, c, azcosmos.NewPartitionKey()); n != 0 {
				t.Errorf("refused create (id %s) left %d items: %s", name, n, joined(mustQuery(t, c, azcosmos.NewPartitionKey(), "SELECT * FROM c")))
			}
		}
	})
}

func TestItemPartitionKeys(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.container("c", nil)
	cases := []struct {
		name string
		pk   azcosmos.PartitionKey
		val  any // the pk property; absent when nil and absent is true
		skip bool
	}{
		{"string", azcosmos.NewPartitionKeyString("s"), "s", false},
		{"unicode string", azcosmos.NewPartitionKeyString("é日😀"), "é日😀", false},
		{"empty string", azcosmos.NewPartitionKeyString(""), "", false},
		{"integer", azcosmos.NewPartitionKeyNumber(5), 5, false},
		{"float", azcosmos.NewPartitionKeyNumber(1.5), 1.5, false},
		{"negative", azcosmos.NewPartitionKeyNumber(-7), -7, false},
		{"true", azcosmos.NewPartitionKeyBool(true), true, false},
		{"false", azcosmos.NewPartitionKeyBool(false), false, false},
		{"null", azcosmos.NullPartitionKey, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := "item-" + tc.name
			create(t, c, tc.pk, doc{"id": id, "pk": tc.val})
			d, st := read(t, c, tc.pk, id)
			if st != 200 || d["id"] != id {
				t.Fatalf("read: %d %v", st, d)
			}
			want, _ := json.Marshal(tc.val)
			got, _ := json.Marshal(d["pk"])
			if string(got) != string(want) {
				t.Errorf("pk property %s, want %s", got, want)
			}
			items := mustQuery(t, c, tc.pk, "SELECT * FROM c")
			if g := ids(t, items); len(g) != 1 || g[0] != id {
				t.Errorf("query in partition: %q, want [%s]", g, id)
			}
			b := c.NewTransactionalBatch(tc.pk)
			b.ReadItem(id, nil)
			r, err := c.ExecuteTransactionalBatch(ctx, b, nil)
			if err != nil || !r.Success {
				t.Errorf("batch read: %v %+v", err, r)
			}
		})
	}
	t.Run("null is not absent", func(t *testing.T) {
		// An item without the pk property lives in the "none" partition,
		// not in the null one.
		create(t, c, azcosmos.NullPartitionKey, doc{"id": "n", "pk": nil})
		if _, st := read(t, c, azcosmos.NewPartitionKeyString("null"), "n"); st != 404 {
			t.Errorf(`read under "null": %d, want 404`, st)
		}
	})
	t.Run("same id in two partitions", func(t *testing.T) {
		a, b := azcosmos.NewPartitionKeyString("A"), azcosmos.NewPartitionKeyString("B")
		create(t, c, a, doc{"id": "same", "pk": "A", "v": "a"})
		create(t, c, b, doc{"id": "same", "pk": "B", "v": "b"})
		if d, _ := read(t, c, a, "same"); d["v"] != "a" {
			t.Errorf("A: %v", d)
		}
		if d, _ := read(t, c, b, "same"); d["v"] != "b" {
			t.Errorf("B: %v", d)
		}
		if _, err := c.DeleteItem(ctx, a, "same", nil); err != nil {
			t.Fatal(err)
		}
		if d, st := read(t, c, b, "same"); st != 200 || d["v"] != "b" {
			t.Errorf("B after deleting A: %d %v", st, d)
		}
		if got := ids(t, mustQuery(t, c, azcosmos.NewPartitionKey(), "SELECT * FROM c WHERE c.id = 'same'")); len(got) != 1 {
			t.Errorf("cross-partition query: %q, want one", got)
		}
	})
	t.Run("pk mismatch 400", func(t *testing.T) {
		for name, body := range map[string]string{
			"other value": `{"id":"m","pk":"b"}`,
			"other type":  `{"id":"m","pk":5}`,
			"absent":      `{"id":"m"}`,
		} {
			_, err := c.CreateItem(ctx, azcosmos.NewPartitionKeyString("a"), []byte(body), nil)
			wantStatus(t, "create "+name, err, http.StatusBadRequest)
			_, err = c.UpsertItem(ctx, azcosmos.NewPartitionKeyString("a"), []byte(body), nil)
			wantStatus(t, "upsert "+name, err, http.StatusBadRequest)
		}
		create(t, c, azcosmos.NewPartitionKeyString("a"), doc{"id": "m", "pk": "a"})
		_, err := c.ReplaceItem(ctx, azcosmos.NewPartitionKeyString("a"), "m", []byte(`{"id":"m","pk":"b"}`), nil)
		wantStatus(t, "replace moving partition", err, http.StatusBadRequest)
		_, err = c.ReplaceItem(ctx, azcosmos.NewPartitionKeyString("a"), "m", []byte(`{"id":"other","pk":"a"}`), nil)
		wantStatus(t, "replace with another id in the body", err, http.StatusBadRequest)
	})
	t.Run("no pk header on a write 400", func(t *testing.T) {
		_, err := c.CreateItem(ctx, azcosmos.NewPartitionKey(), []byte(`{"id":"x","pk":"x"}`), nil)
		wantStatus(t, "create without partition key", err, http.StatusBadRequest)
	})
	t.Run("nested pk path", func(t *testing.T) {
		db := e.database()
		if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "nested", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/a/b"}}}, nil); err != nil {
			t.Fatal(err)
		}
		n, _ := db.NewContainer("nested")
		pk := azcosmos.NewPartitionKeyString("deep")
		if _, err := n.CreateItem(ctx, pk, []byte(`{"id":"x","a":{"b":"deep"}}`), nil); err != nil {
			t.Fatalf("create: %v", err)
		}
		if _, st := read(t, n, pk, "x"); st != 200 {
			t.Errorf("read: %d", st)
		}
		_, err := n.CreateItem(ctx, pk, []byte(`{"id":"y","a":{"b":"shallow"}}`), nil)
		wantStatus(t, "create with mismatching nested pk", err, http.StatusBadRequest)
	})
}

func TestItemSystemProperties(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.container("c", nil)
	pk := azcosmos.NewPartitionKeyString("p")
	create(t, c, pk, doc{"id": "a", "pk": "p", "_ts": 5, "_etag": "mine", "_rid": "mine", "nested": doc{"ttl": 1}})
	r, err := c.ReadItem(ctx, pk, "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	d := parse(t, r.Value)
	t.Run("_ts is now in whole seconds (R3)", func(t *testing.T) {
		if ts := tsOf(t, d); ts != start.Unix() {
			t.Errorf("_ts %d, want %d", ts, start.Unix())
		}
	})
	t.Run("_etag equals the etag header and is quoted", func(t *testing.T) {
		et, _ := d["_etag"].(string)
		if et == "" || et == "mine" || azcore.ETag(et) != r.ETag {
			t.Errorf("_etag %q, header %q", et, r.ETag)
		}
		if !strings.HasPrefix(et, `"`) || !strings.HasSuffix(et, `"`) {
			t.Errorf("_etag %q is not quoted", et)
		}
	})
	t.Run("_rid _self _attachments", func(t *testing.T) {
		rid, _ := d["_rid"].(string)
		self, _ := d["_self"].(string)
		att, _ := d["_attachments"].(string)
		if rid == "" || rid == "mine" || !strings.Contains(self, rid) || att == "" {
			t.Errorf("_rid %q _self %q _attachments %q", rid, self, att)
		}
	})
	t.Run("user properties kept", func(t *testing.T) {
		if n, _ := d["nested"].(map[string]any); n["ttl"] != 1.0 {
			t.Errorf("nested %v", d["nested"])
		}
		if _, ok := d["ttl"]; ok {
			t.Errorf("ttl added to a document that had none (R4): %v", d)
		}
	})
	t.Run("a write sets a new _ts and _etag (R3)", func(t *testing.T) {
		e.advance(3 * 1e9)
		w, err := c.ReplaceItem(ctx, pk, "a", []byte(`{"id":"a","pk":"p"}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		d2, _ := read(t, c, pk, "a")
		if tsOf(t, d2) != start.Unix()+3 {
			t.Errorf("_ts %v, want %d", d2["_ts"], start.Unix()+3)
		}
		if d2["_etag"] == d["_etag"] || azcore.ETag(d2["_etag"].(string)) != w.ETag {
			t.Errorf("_etag %v (before %v), write's etag header %q", d2["_etag"], d["_etag"], w.ETag)
		}
	})
	t.Run("_rid is stable across replace, upsert and patch (not a delete and create)", func(t *testing.T) {
		rid := d["_rid"]
		if _, err := c.UpsertItem(ctx, pk, []byte(`{"id":"a","pk":"p","u":1}`), nil); err != nil {
			t.Fatal(err)
		}
		p := azcosmos.PatchOperations{}
		p.AppendSet("/w", 1)
		if _, err := c.PatchItem(ctx, pk, "a", p, nil); err != nil {
			t.Fatal(err)
		}
		d2, _ := read(t, c, pk, "a")
		if d2["_rid"] != rid {
			t.Errorf("_rid %v, was %v", d2["_rid"], rid)
		}
	})
	t.Run("session token", func(t *testing.T) {
		if r.SessionToken == nil || *r.SessionToken == "" {
			t.Logf("no x-ms-session-token (optional)")
		}
	})
}

func TestItemIfMatch(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.container("c", nil)
	pk := azcosmos.NewPartitionKeyString("p")
	cr := create(t, c, pk, doc{"id": "a", "pk": "p", "v": 1})
	old := cr.ETag
	if old == "" {
		t.Fatal("create: no etag header")
	}
	stale := azcore.ETag(`"stale"`)
	steps := []struct {
		name   string
		run    func(etag azcore.ETag) (azcosmos.ItemResponse, error)
		etag   *azcore.ETag // nil: the current one
		status int
	}{
		{"replace stale 412", func(et azcore.ETag) (azcosmos.ItemResponse, error) {
			return c.ReplaceItem(ctx, pk, "a", []byte(`{"id":"a","pk":"p","v":9}`), &azcosmos.ItemOptions{IfMatchEtag: &et})
		}, &stale, http.StatusPreconditionFailed},
		{"replace current 200", func(et azcore.ETag) (azcosmos.ItemResponse, error) {
			return c.ReplaceItem(ctx, pk, "a", []byte(`{"id":"a","pk":"p","v":2}`), &azcosmos.ItemOptions{IfMatchEtag: &et})
		}, nil, http.StatusOK},
		{"replace with the pre-replace etag 412", func(et azcore.ETag) (azcosmos.ItemResponse, error) {
			return c.ReplaceItem(ctx, pk, "a", []byte(`{"id":"a","pk":"p","v":9}`), &azcosmos.ItemOptions{IfMatchEtag: &et})
		}, &old, http.StatusPreconditionFailed},
		{"upsert stale 412", func(et azcore.ETag) (azcosmos.ItemResponse, error) {
			return c.UpsertItem(ctx, pk, []byte(`{"id":"a","pk":"p","v":9}`), &azcosmos.ItemOptions{IfMatchEtag: &et})
		}, &stale, http.StatusPreconditionFailed},
		{"upsert current 200", func(et azcore.ETag) (azcosmos.ItemResponse, error) {
			return c.UpsertItem(ctx, pk, []byte(`{"id":"a","pk":"p","v":3}`), &azcosmos.ItemOptions{IfMatchEtag: &et})
		}, nil, http.StatusOK},
		{"patch stale 412", func(et azcore.ETag) (azcosmos.ItemResponse, error) {
			p := azcosmos.PatchOperations{}
			p.AppendSet("/v", 9)
			return c.PatchItem(ctx, pk, "a", p, &azcosmos.ItemOptions{IfMatchEtag: &et})
		}, &stale, http.StatusPreconditionFailed},
		{"patch current 200", func(et azcore.ETag) (azcosmos.ItemResponse, error) {
			p := azcosmos.PatchOperations{}
			p.AppendSet("/v", 4)
			return c.PatchItem(ctx, pk, "a", p, &azcosmos.ItemOptions{IfMatchEtag: &et})
		}, nil, http.StatusOK},
		{"delete stale 412", func(et azcore.ETag) (azcosmos.ItemResponse, error) {
			return c.DeleteItem(ctx, pk, "a", &azcosmos.ItemOptions{IfMatchEtag: &et})
		}, &stale, http.StatusPreconditionFailed},
		{"delete current 204", func(et azcore.ETag) (azcosmos.ItemResponse, error) {
			return c.DeleteItem(ctx, pk, "a", &azcosmos.ItemOptions{IfMatchEtag: &et})
		}, nil, http.StatusNoContent},
		{"replace deleted with its last etag 404", func(et azcore.ETag) (azcosmos.ItemResponse, error) {
			return c.ReplaceItem(ctx, pk, "a", []byte(`{"id":"a","pk":"p"}`), &azcosmos.ItemOptions{IfMatchEtag: &et})
		}, nil, http.StatusNotFound},
	}
	current := old
	values := []float64{1, 2, 2, 2, 3, 3, 4, 4}
	for i, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			et := current
			if s.etag != nil {
				et = *s.etag
			}
			r, err := s.run(et)
			got := status(err)
			if err == nil {
				got = r.RawResponse.StatusCode
				if r.ETag != "" {
					current = r.ETag
				}
			}
			if got != s.status {
				t.Errorf("status %d, want %d (err %v)", got, s.status, err)
			}
			if i < len(values) {
				if d, _ := read(t, c, pk, "a"); d == nil || d["v"] != values[i] {
					t.Errorf("after %s: %v, want v %v", s.name, d, values[i])
				}
			}
		})
	}
}

func TestItemContentResponseOnWrite(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.container("c", nil)
	pk := azcosmos.NewPartitionKeyString("p")
	withContent, _ := e.newClient(cosmoshttp.EmulatorKey, true).NewContainer("db", "c")
	patch := func() azcosmos.PatchOperations {
		p := azcosmos.PatchOperations{}
		p.AppendIncrement("/v", 1)
		return p
	}
	ops := []struct {
		name string
		run  func(c *azcosmos.ContainerClient, o *azcosmos.ItemOptions, i int) (azcosmos.ItemResponse, error)
	}{
		{"create", func(c *azcosmos.ContainerClient, o *azcosmos.ItemOptions, i int) (azcosmos.ItemResponse, error) {
			return c.CreateItem(ctx, pk, jsonDoc(t, doc{"id": "x" + string(rune('a'+i)), "pk": "p", "v": 1}), o)
		}},
		{"replace", func(c *azcosmos.ContainerClient, o *azcosmos.ItemOptions, i int) (azcosmos.ItemResponse, error) {
			return c.ReplaceItem(ctx, pk, "x"+string(rune('a'+i)), jsonDoc(t, doc{"id": "x" + string(rune('a'+i)), "pk": "p", "v": 1}), o)
		}},
		{"upsert", func(c *azcosmos.ContainerClient, o *azcosmos.ItemOptions, i int) (azcosmos.ItemResponse, error) {
			return c.UpsertItem(ctx, pk, jsonDoc(t, doc{"id": "x" + string(rune('a'+i)), "pk": "p", "v": 1}), o)
		}},
		{"patch", func(c *azcosmos.ContainerClient, o *azcosmos.ItemOptions, i int) (azcosmos.ItemResponse, error) {
			return c.PatchItem(ctx, pk, "x"+string(rune('a'+i)), patch(), o)
		}},
	}
	modes := []struct {
		name    string
		c       *azcosmos.ContainerClient
		o       *azcosmos.ItemOptions
		content bool
	}{
		{"default minimal", c, nil, false},
		{"ItemOptions false", c, &azcosmos.ItemOptions{}, false},
		{"ItemOptions true", c, &azcosmos.ItemOptions{EnableContentResponseOnWrite: true}, true},
		{"ClientOptions true", withContent, nil, true},
	}
	for i, m := range modes {
		for _, op := range ops {
			t.Run(m.name+"/"+op.name, func(t *testing.T) {
				r, err := op.run(m.c, m.o, i)
				if err != nil {
					t.Fatal(err)
				}
				if !m.content {
					if len(r.Value) != 0 {
						t.Errorf("Prefer: return=minimal answered with a body: %s", r.Value)
					}
					return
				}
				d := parse(t, r.Value)
				if d["id"] != "x"+string(rune('a'+i)) || d["_etag"] == nil || azcore.ETag(d["_etag"].(string)) != r.ETag {
					t.Errorf("body %s, etag %q: want the document with its _etag", r.Value, r.ETag)
				}
			})
		}
	}
	t.Run("delete has no body", func(t *testing.T) {
		r, err := withContent.DeleteItem(ctx, pk, "xa", nil)
		if err != nil || len(r.Value) != 0 || r.RawResponse.StatusCode != 204 {
			t.Errorf("delete: %v %d %q", err, r.RawResponse.StatusCode, r.Value)
		}
	})
}

func TestItemTTLValidation(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	pk := azcosmos.NewPartitionKeyString("p")
	// R6: whatever defaultTtl is, off included.
	for _, def := range []*int32{nil, ttlp(-1), ttlp(10)} {
		c := e.container("v"+ttlString(def), def)
		for _, bad := range []string{`0`, `null`, `-2`, `2147483648`, `1.5`, `"10"`, `true`, `{}`, `[]`} {
			t.Run("R6 defaultTtl "+ttlString(def)+" ttl "+bad+" 400", func(t *testing.T) {
				body := []byte(`{"id":"x","pk":"p","ttl":` + bad + `}`)
				_, err := c.CreateItem(ctx, pk, body, nil)
				wantStatus(t, "create", err, http.StatusBadRequest)
				_, err = c.UpsertItem(ctx, pk, body, nil)
				wantStatus(t, "upsert", err, http.StatusBadRequest)
				if _, st := read(t, c, pk, "x"); st != 404 {
					t.Errorf("a refused write stored the item: %d", st)
				}
				create(t, c, pk, doc{"id": "x", "pk": "p", "ttl": 7})
				_, err = c.ReplaceItem(ctx, pk, "x", body, nil)
				wantStatus(t, "replace", err, http.StatusBadRequest)
				if d, _ := read(t, c, pk, "x"); d["ttl"] != 7.0 {
					t.Errorf("a refused replace changed the item: %v", d)
				}
				if _, err := c.DeleteItem(ctx, pk, "x", nil); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
	c := e.container("c", ttlp(-1))
	for _, good := range []string{`-1`, `1`, `2147483647`} {
		t.Run("R6 ttl "+good+" accepted", func(t *testing.T) {
			body := []byte(`{"id":"ok","pk":"p","ttl":` + good + `}`)
			if _, err := c.UpsertItem(ctx, pk, body, nil); err != nil {
				t.Errorf("upsert: %v", err)
			}
		})
	}
	t.Run("R4 TTL and TimeToLive mean nothing", func(t *testing.T) {
		cc := e.container("c10", ttlp(10))
		create(t, cc, pk, doc{"id": "u", "pk": "p", "TTL": -1, "TimeToLive": -1})
		e.advance(10 * 1e9)
		if _, st := read(t, cc, pk, "u"); st != 404 {
			t.Errorf("item with TTL/TimeToLive but no ttl under defaultTtl 10: %d at +10 s, want 404", st)
		}
	})
}

func TestItemPartitionKeyEdges(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.container("c", nil)
	cases := []struct {
		name string
		pk   azcosmos.PartitionKey
		body string
	}{
		// strconv.QuoteToASCII, which the SDK uses, writes \x01: not JSON.
		{"control character", azcosmos.NewPartitionKeyString("a\x01b"), `{"id":"x","pk":"a\u0001b"}`},
		{"quote and backslash", azcosmos.NewPartitionKeyString(`a"b\c`), `{"id":"x","pk":"a\"b\\c"}`},
		{"large number", azcosmos.NewPartitionKeyNumber(1e21), `{"id":"x","pk":1e21}`},
		{"integer written as float", azcosmos.NewPartitionKeyNumber(5), `{"id":"x","pk":5.0}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := c.CreateItem(ctx, tc.pk, []byte(tc.body), nil); err != nil {
				t.Fatalf("create: %v", err)
			}
			if _, st := read(t, c, tc.pk, "x"); st != 200 {
				t.Errorf("read: %d", st)
			}
			if got := mustQuery(t, c, tc.pk, "SELECT VALUE c.id FROM c"); joined(got) != `"x"` {
				t.Errorf("query in the partition: %s", joined(got))
			}
			if _, err := c.DeleteItem(ctx, tc.pk, "x", nil); err != nil {
				t.Errorf("delete: %v", err)
			}
		})
	}
	t.Run("point read without a partition key 400", func(t *testing.T) {
		create(t, c, pkP, doc{"id": "y", "pk": "p"})
		_, err := c.ReadItem(ctx, azcosmos.NewPartitionKey(), "y", nil)
		wantStatus(t, "read without pk header", err, http.StatusBadRequest)
	})
}

func TestItemHierarchicalPartitionKey(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	db := e.database()
	_, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "h", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{
		Kind: azcosmos.PartitionKeyKindMultiHash, Paths: []string{"/tenant", "/user"}, Version: 2}}, nil)
	if status(err) == http.StatusBadRequest {
		// Outside the endpoint's subset: refused, naming it, creating
		// nothing.
		if _, msg := errorBody(t, err); !strings.Contains(strings.ToLower(msg), "hierarchical") {
			t.Errorf("refusal %q does not name hierarchical partition keys", msg)
		}
		c, _ := db.NewContainer("h")
		if _, err := c.Read(ctx, nil); status(err) != http.StatusNotFound {
			t.Errorf("a refused container exists: %v", err)
		}
		t.Skip("hierarchical partition keys are refused (400) by this endpoint")
	}
	if err != nil {
		t.Fatalf("create MultiHash container: %v", err)
	}
	c, _ := db.NewContainer("h")
	r, err := c.Read(ctx, nil)
	if err != nil || strings.Join(r.ContainerProperties.PartitionKeyDefinition.Paths, ",") != "/tenant,/user" {
		t.Fatalf("read: %v %+v", err, r.ContainerProperties)
	}
	tu := azcosmos.NewPartitionKeyString("t1").AppendString("u1")
	tu2 := azcosmos.NewPartitionKeyString("t1").AppendString("u2")
	if _, err := c.CreateItem(ctx, tu, []byte(`{"id":"a","tenant":"t1","user":"u1"}`), nil); err != nil {
		t.Fatalf("create: %v", err)
	}
	if _, err := c.CreateItem(ctx, tu2, []byte(`{"id":"a","tenant":"t1","user":"u2"}`), nil); err != nil {
		t.Fatalf("create same id under another user: %v", err)
	}
	if _, st := read(t, c, tu, "a"); st != 200 {
		t.Errorf("read: %d", st)
	}
	_, err = c.CreateItem(ctx, tu, []byte(`{"id":"b","tenant":"t1","user":"zz"}`), nil)
	wantStatus(t, "create with a mismatching second level", err, http.StatusBadRequest)
	_, err = c.CreateItem(ctx, azcosmos.NewPartitionKeyString("t1"), []byte(`{"id":"c","tenant":"t1","user":"u1"}`), nil)
	wantStatus(t, "create with only the first level", err, http.StatusBadRequest)
	if got := mustQuery(t, c, tu, "SELECT VALUE c.user FROM c"); joined(got) != `"u1"` {
		t.Errorf("query in t1/u1: %s", joined(got))
	}
	if got := mustQuery(t, c, azcosmos.NewPartitionKey(), "SELECT VALUE COUNT(1) FROM c"); joined(got) != `2` {
		t.Errorf("cross-partition COUNT: %s", joined(got))
	}
}

// TestItemConcurrent: many SDK clients at once get the answers one at a
// time would give.
func TestItemConcurrent(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.container("c", ttlp(-1))
	const n = 16
	run := func(f func(i int) error) []error {
		errs := make([]error, n)
		done := make(chan struct{})
		for i := 0; i < n; i++ {
			go func(i int) {
				errs[i] = f(i)
				done <- struct{}{}
			}(i)
		}
		for i := 0; i < n; i++ {
			<-done
		}
		return errs
	}
	t.Run("one create of an id wins", func(t *testing.T) {
		errs := run(func(i int) error {
			_, err := c.CreateItem(ctx, pkP, jsonDoc(t, doc{"id": "same", "pk": "p", "by": i}), nil)
			return err
		})
		won := 0
		for _, err := range errs {
			switch status(err) {
			case 0:
				won++
			case 409:
			default:
				t.Errorf("create: %v", err)
			}
		}
		if won != 1 {
			t.Errorf("%d creates succeeded, want 1", won)
		}
	})
	t.Run("increments are atomic", func(t *testing.T) {
		create(t, c, pkP, doc{"id": "ctr", "pk": "p", "n": 0})
		for _, err := range run(func(i int) error {
			p := azcosmos.PatchOperations{}
			p.AppendIncrement("/n", 1)
			_, err := c.PatchItem(ctx, pkP, "ctr", p, nil)
			return err
		}) {
			if err != nil {
				t.Error(err)
			}
		}
		if d, _ := read(t, c, pkP, "ctr"); d["n"] != float64(n) {
			t.Errorf("n = %v after %d increments", d["n"], n)
		}
	})
	t.Run("one If-Match replace wins", func(t *testing.T) {
		et := create(t, c, pkP, doc{"id": "cas", "pk": "p"}).ETag
		errs := run(func(i int) error {
			_, err := c.ReplaceItem(ctx, pkP, "cas", jsonDoc(t, doc{"id": "cas", "pk": "p", "by": i}), &azcosmos.ItemOptions{IfMatchEtag: &et})
			return err
		})
		won := 0
		for _, err := range errs {
			switch status(err) {
			case 0:
				won++
			case 412:
			default:
				t.Errorf("replace: %v", err)
			}
		}
		if won != 1 {
			t.Errorf("%d If-Match replaces succeeded, want 1", won)
		}
	})
}

// TestItemOptionsHeaders: the optional headers the SDK sends for
// ItemOptions and QueryOptions are accepted (session tokens of any value,
// consistency levels, indexing directives), never answered 404/1002 or 400.
func TestItemOptionsHeaders(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.container("c", nil)
	tok := "0:-1#12345"
	eventual := azcosmos.ConsistencyLevelEventual
	exclude := azcosmos.IndexingDirectiveExclude
	opts := &azcosmos.ItemOptions{SessionToken: &tok, ConsistencyLevel: &eventual, IndexingDirective: &exclude}
	if _, err := c.CreateItem(ctx, pkP, []byte(`{"id":"a","pk":"p"}`), opts); err != nil {
		t.Fatalf("create with options: %v", err)
	}
	r, err := c.ReadItem(ctx, pkP, "a", opts)
	if err != nil {
		t.Fatalf("read with a session token: %v", err)
	}
	if sub := r.RawResponse.Header.Get("x-ms-substatus"); sub != "" && sub != "0" {
		t.Errorf("x-ms-substatus %s", sub)
	}
	items, _, err := query(t, c, pkP, "SELECT * FROM c", 0)
	if err != nil || len(items) != 1 {
		t.Errorf("query: %v %d", err, len(items))
	}
	q := c.NewQueryItemsPager("SELECT * FROM c", pkP, &azcosmos.QueryOptions{SessionToken: &tok, ConsistencyLevel: &eventual, PopulateIndexMetrics: true, EnableScanInQuery: true, ResponseContinuationTokenLimitInKB: 1})
	if _, err := q.NextPage(ctx); err != nil {
		t.Errorf("query with options: %v", err)
	}
	t.Run("cross-partition query disabled: 400 or the answer", func(t *testing.T) {
		// Cosmos DB refuses it when the query must span physical
		// partitions; over one physical partition it may answer.
		no := false
		q := c.NewQueryItemsPager("SELECT * FROM c", azcosmos.NewPartitionKey(), &azcosmos.QueryOptions{EnableCrossPartitionQuery: &no})
		page, err := q.NextPage(ctx)
		if err != nil && status(err) != http.StatusBadRequest {
			t.Errorf("status %d: %v", status(err), err)
		}
		if err == nil && len(page.Items) != 1 {
			t.Errorf("%d items, want 1", len(page.Items))
		}
	})
}

// TestItemIfMatchStar: If-Match "*" is no condition.
func TestItemIfMatchStar(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.container("c", nil)
	create(t, c, pkP, doc{"id": "a", "pk": "p"})
	star := azcore.ETag("*")
	if _, err := c.ReplaceItem(ctx, pkP, "a", []byte(`{"id":"a","pk":"p","v":1}`), &azcosmos.ItemOptions{IfMatchEtag: &star}); err != nil {
		t.Errorf("replace If-Match *: %v", err)
	}
	if _, err := c.DeleteItem(ctx, pkP, "a", &azcosmos.ItemOptions{IfMatchEtag: &star}); err != nil {
		t.Errorf("delete If-Match *: %v", err)
	}
}

// TestItemRawPartitionNone: the header [{}] (PartitionKey.None, which other
// SDKs send for an item without the partition key property) and If-None-Match
// on a read, which azcosmos cannot send.
func TestItemRawPartitionNone(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	e.container("c", nil)
	key := cosmoshttp.EmulatorKey
	none := map[string]string{"x-ms-documentdb-partitionkey": `[{}]`}
	resp, b := e.raw(t, "POST", "/dbs/db/colls/c/docs", key, "docs", "dbs/db/colls/c", none, []byte(`{"id":"n"}`))
	if resp.StatusCode != 201 {
		t.Fatalf("create under [{}]: %d %s", resp.StatusCode, b)
	}
	etag := resp.Header.Get("etag")
	if resp, b := e.raw(t, "GET", "/dbs/db/colls/c/docs/n", key, "docs", "dbs/db/colls/c/docs/n", none, nil); resp.StatusCode != 200 {
		t.Errorf("read under [{}]: %d %s", resp.StatusCode, b)
	}
	if resp, _ := e.raw(t, "GET", "/dbs/db/colls/c/docs/n", key, "docs", "dbs/db/colls/c/docs/n", map[string]string{"x-ms-documentdb-partitionkey": `[null]`}, nil); resp.StatusCode != 404 {
		t.Errorf("read under [null]: %d, want 404 (null is not none)", resp.StatusCode)
	}
	h := map[string]string{"x-ms-documentdb-partitionkey": `[{}]`, "If-None-Match": etag}
	if resp, b := e.raw(t, "GET", "/dbs/db/colls/c/docs/n", key, "docs", "dbs/db/colls/c/docs/n", h, nil); resp.StatusCode != 304 {
		t.Errorf("read If-None-Match current: %d %s, want 304", resp.StatusCode, b)
	}
	resp, _ = e.raw(t, "POST", "/dbs/db/colls/c/docs", key, "docs", "dbs/db/colls/c", none, []byte(`{"id":"m","pk":"x"}`))
	if resp.StatusCode != 400 {
		t.Errorf("create with a pk property under [{}]: %d, want 400", resp.StatusCode)
	}
}
