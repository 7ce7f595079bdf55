package cosmoshttp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
)

// call sends one request signed with key (the emulator's if empty) to h,
// signing the resource type and link the path names, and returns the
// answer.
func call(t testing.TB, h http.Handler, key, method, path string, hdr map[string]string, body string) *httptest.ResponseRecorder {
	t.Helper()
	if key == "" {
		key = EmulatorKey
	}
	r := httptest.NewRequest(method, "http://localhost"+path, strings.NewReader(body))
	date := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC).Format(http.TimeFormat)
	r.Header.Set("x-ms-date", date)
	if rt, err := parseRoute(r.URL.EscapedPath()); err == nil {
		auth, err := Sign(key, method, rt.resType, rt.link, date)
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Authorization", auth)
	}
	for k, v := range hdr {
		if v == "" {
			r.Header.Del(k)
		} else {
			r.Header.Set(k, v)
		}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// newTestServer returns a server on a mock clock with database "db" and
// container "c" partitioned by /pk, defaultTtl 60, holding item "a".
func newTestServer(t testing.TB, opts Options) (*Server, *clock.Mock) {
	t.Helper()
	mock := clock.NewMock()
	mock.Set(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
	opts.Clock = mock
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for _, st := range []struct {
		method, path, body string
		hdr                map[string]string
	}{
		{"POST", "/dbs", `{"id":"db"}`, nil},
		{"POST", "/dbs/db/colls", `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash"},"defaultTtl":60}`, nil},
		{"POST", "/dbs/db/colls/c/docs", `{"id":"a","pk":"p","v":1}`, map[string]string{hdrPK: `["p"]`}},
	} {
		if w := call(t, s, "", st.method, st.path, st.hdr, st.body); w.Code != http.StatusCreated {
			t.Fatalf("%s %s: %d %s", st.method, st.path, w.Code, w.Body)
		}
	}
	return s, mock
}

// dump describes everything the server holds, to compare before and after
// a refused request.
func dump(s *Server) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var lines []string
	for _, dbID := range sortedKeys(s.dbs) {
		db := s.dbs[dbID]
		lines = append(lines, "db "+dbID)
		for _, cid := range sortedKeys(db.colls) {
			ct := db.colls[cid]
			lines = append(lines, "coll "+cid+" "+string(ct.propsJSON()))
			for d := range ct.c.All() {
				lines = append(lines, "item "+d.String())
			}
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func errorBody(t *testing.T, w *httptest.ResponseRecorder) (code, msg string) {
	t.Helper()
	var e struct{ Code, Message string }
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil {
		t.Fatalf("error body %q: %v", w.Body, err)
	}
	return e.Code, e.Message
}

func TestAuthRefusals(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	other := "b3RoZXIga2V5IG90aGVyIGtleSBvdGhlciBrZXk="
	tests := []struct {
		name string
		key  string
		hdr  map[string]string
	}{
		{"no Authorization", "", map[string]string{"Authorization": ""}},
		{"no date", "", map[string]string{"x-ms-date": ""}},
		{"another key", other, nil},
		{"not master", "", map[string]string{"Authorization": url.QueryEscape("type=aad&ver=1.0&sig=abc")}},
		{"signature not base64", "", map[string]string{"Authorization": url.QueryEscape("type=master&ver=1.0&sig=!!!")}},
		{"date changed after signing", "", map[string]string{"x-ms-date": "Wed, 25 Nov 2026 12:00:00 GMT"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := dump(s)
			for _, req := range []struct{ method, path, body string }{
				{"POST", "/dbs/db/colls/c/docs", `{"id":"b","pk":"p"}`},
				{"DELETE", "/dbs/db/colls/c/docs/a", ""},
				{"DELETE", "/dbs/db", ""},
				{"PUT", "/dbs/db/colls/c", `{"id":"c","partitionKey":{"paths":["/pk"]}}`},
				{"GET", "/dbs/db/colls/c/docs/a", ""},
			} {
				hdr := map[string]string{hdrPK: `["p"]`}
				for k, v := range tt.hdr {
					hdr[k] = v
				}
				w := call(t, s, tt.key, req.method, req.path, hdr, req.body)
				if w.Code != http.StatusUnauthorized {
					t.Fatalf("%s %s: %d, want 401", req.method, req.path, w.Code)
				}
				if code, _ := errorBody(t, w); code != "Unauthorized" {
					t.Fatalf("code %q", code)
				}
			}
			if after := dump(s); after != before {
				t.Fatalf("a refused request changed the server:\n%s\n---\n%s", before, after)
			}
		})
	}
	t.Run("a key given in Options", func(t *testing.T) {
		s2, err := New(Options{Key: other})
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		if w := call(t, s2, "", "POST", "/dbs", nil, `{"id":"x"}`); w.Code != http.StatusUnauthorized {
			t.Fatalf("emulator key on a server with its own: %d", w.Code)
		}
		if w := call(t, s2, other, "POST", "/dbs", nil, `{"id":"x"}`); w.Code != http.StatusCreated {
			t.Fatalf("its own key: %d %s", w.Code, w.Body)
		}
	})
}

// TestRefusedRequests: each bad request gets its Cosmos DB status and a
// JSON body, and changes nothing.
func TestRefusedRequests(t *testing.T) {
	s, mock := newTestServer(t, Options{MaxDocumentSize: 1 << 10})
	pk := map[string]string{hdrPK: `["p"]`}
	tests := []struct {
		name, method, path, body string
		hdr                      map[string]string
		status                   int
		msg                      string
	}{
		{"unknown resource", "GET", "/dbs/db/users", "", nil, 404, "no such resource"},
		{"missing database", "GET", "/dbs/nope", "", nil, 404, `database "nope"`},
		{"missing container", "GET", "/dbs/db/colls/nope", "", nil, 404, `container "nope"`},
		{"missing item", "GET", "/dbs/db/colls/c/docs/nope", "", pk, 404, "not found"},
		{"method", "PATCH", "/dbs/db", "", nil, 405, "not allowed"},
		{"database exists", "POST", "/dbs", `{"id":"db"}`, nil, 409, "already exists"},
		{"database id with a slash", "POST", "/dbs", `{"id":"a/../../etc"}`, nil, 400, "contains '/'"},
		{"database id dot dot", "POST", "/dbs", `{"id":"a\\b"}`, nil, 400, "contains"},
		{"container exists", "POST", "/dbs/db/colls", `{"id":"c","partitionKey":{"paths":["/pk"]}}`, nil, 409, "already exists"},
		{"hierarchical key", "POST", "/dbs/db/colls", `{"id":"h","partitionKey":{"paths":["/a","/b"],"kind":"MultiHash"}}`, nil, 400, "hierarchical"},
		{"defaultTtl 0", "POST", "/dbs/db/colls", `{"id":"z","partitionKey":{"paths":["/pk"]},"defaultTtl":0}`, nil, 400, "defaultTtl"},
		{"partition key changed", "PUT", "/dbs/db/colls/c", `{"id":"c","partitionKey":{"paths":["/other"]}}`, nil, 400, "cannot change"},
		{"item exists", "POST", "/dbs/db/colls/c/docs", `{"id":"a","pk":"p"}`, pk, 409, "conflict"},
		{"no partition key header", "POST", "/dbs/db/colls/c/docs", `{"id":"b","pk":"p"}`, nil, 400, "partition key header"},
		{"partition key mismatch", "POST", "/dbs/db/colls/c/docs", `{"id":"b","pk":"q"}`, pk, 400, "partition"},
		{"not JSON", "POST", "/dbs/db/colls/c/docs", `{"id":`, pk, 400, "invalid document"},
		{"bad ttl", "POST", "/dbs/db/colls/c/docs", `{"id":"b","pk":"p","ttl":0}`, pk, 400, "ttl"},
		{"too large", "POST", "/dbs/db/colls/c/docs", `{"id":"b","pk":"p","x":"` + strings.Repeat("x", 2000) + `"}`, pk, 413, "limit"},
		{"replace id mismatch", "PUT", "/dbs/db/colls/c/docs/a", `{"id":"b","pk":"p"}`, pk, 400, "not the id in the path"},
		{"if-match", "PUT", "/dbs/db/colls/c/docs/a", `{"id":"a","pk":"p"}`, map[string]string{hdrPK: `["p"]`, "If-Match": `"nope"`}, 412, "precondition"},
		{"patch of the partition key", "PATCH", "/dbs/db/colls/c/docs/a", `{"operations":[{"op":"set","path":"/pk","value":"q"}]}`, pk, 400, "partition"},
		{"patch condition false", "PATCH", "/dbs/db/colls/c/docs/a", `{"operations":[{"op":"set","path":"/v","value":2}],"condition":"from c where c.v = 5"}`, pk, 412, "precondition"},
		{"query outside the subset", "POST", "/dbs/db/colls/c/docs", `{"query":"SELECT * FROM c JOIN t IN c.tags"}`, map[string]string{"x-ms-documentdb-query": "True", "Content-Type": "application/query+json"}, 400, "JOIN"},
		{"bad continuation", "POST", "/dbs/db/colls/c/docs", `{"query":"SELECT * FROM c"}`, map[string]string{"x-ms-documentdb-query": "True", "x-ms-continuation": "zzz"}, 400, "continuation"},
		{"batch conflict", "POST", "/dbs/db/colls/c/docs", `[{"operationType":"Create","resourceBody":{"id":"n","pk":"p"}},{"operationType":"Create","resourceBody":{"id":"a","pk":"p"}}]`, map[string]string{hdrPK: `["p"]`, "x-ms-cosmos-is-batch-request": "True"}, 207, ""},
		{"bad partition key header", "GET", "/dbs/db/colls/c/docs/a", "", map[string]string{hdrPK: `p`}, 400, "not a JSON array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := dump(s)
			w := call(t, s, "", tt.method, tt.path, tt.hdr, tt.body)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			if tt.msg != "" {
				if _, msg := errorBody(t, w); !strings.Contains(strings.ToLower(msg), strings.ToLower(tt.msg)) {
					t.Fatalf("message %q does not say %q", msg, tt.msg)
				}
			}
			if after := dump(s); after != before {
				t.Fatalf("a refused request changed the server:\n%s\n---\n%s", before, after)
			}
		})
	}
	t.Run("expired item is not found, and If-Match on it is 404", func(t *testing.T) {
		mock.Add(60 * time.Second)
		if w := call(t, s, "", "GET", "/dbs/db/colls/c/docs/a", pk, ""); w.Code != 404 {
			t.Fatalf("read of an expired item: %d", w.Code)
		}
		if w := call(t, s, "", "DELETE", "/dbs/db/colls/c/docs/a", map[string]string{hdrPK: `["p"]`, "If-Match": `"x"`}, ""); w.Code != 404 {
			t.Fatalf("If-Match on an expired item: %d", w.Code)
		}
	})
}

// TestBodyRefusedBeforeRead: a body announced larger than the limit is
// refused without being read.
func TestBodyRefusedBeforeRead(t *testing.T) {
	s, _ := newTestServer(t, Options{MaxDocumentSize: 1 << 10})
	r := httptest.NewRequest("POST", "http://localhost/dbs/db/colls/c/docs", io.MultiReader(strings.NewReader(`{"id":"b"`), failReader{t}))
	r.ContentLength = 1 << 30
	date := time.Now().UTC().Format(http.TimeFormat)
	auth, _ := Sign(EmulatorKey, "POST", "docs", "dbs/db/colls/c", date)
	r.Header.Set("x-ms-date", date)
	r.Header.Set("Authorization", auth)
	r.Header.Set(hdrPK, `["p"]`)
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	if w.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d", w.Code)
	}
}

type failReader struct{ t *testing.T }

func (f failReader) Read([]byte) (int, error) {
	f.t.Error("the body was read past its start")
	return 0, io.EOF
}

// TestSystemProperties: an item comes back with Cosmos DB's system
// properties, _etag quoted as the etag header; sending them back in a
// replace stores none of them twice.
func TestSystemProperties(t *testing.T) {
	s, _ := newTestServer(t, Options{})
	pk := map[string]string{hdrPK: `["p"]`}
	w := call(t, s, "", "GET", "/dbs/db/colls/c/docs/a", pk, "")
	var m map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"_rid", "_self", "_etag", "_ts", "_attachments"} {
		if _, ok := m[k]; !ok {
			t.Fatalf("no %s in %s", k, w.Body)
		}
	}
	if m["_etag"] != w.Header().Get("etag") || !strings.HasPrefix(w.Header().Get("etag"), `"`) {
		t.Fatalf("_etag %v, etag header %q", m["_etag"], w.Header().Get("etag"))
	}
	w2 := call(t, s, "", "PUT", "/dbs/db/colls/c/docs/a", map[string]string{hdrPK: `["p"]`, "If-Match": w.Header().Get("etag")}, w.Body.String())
	if w2.Code != 200 {
		t.Fatalf("replace with what was read: %d %s", w2.Code, w2.Body)
	}
	for _, k := range []string{`"_rid"`, `"_self"`, `"_etag"`, `"_attachments"`, `"_ts"`} {
		if n := bytes.Count(w2.Body.Bytes(), []byte(k)); n != 1 {
			t.Fatalf("%s %d times in %s", k, n, w2.Body)
		}
	}
}
