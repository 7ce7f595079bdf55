package cosmoshttp

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// FuzzHandler sends signed requests of any method, path, headers and body:
// the handler never panics, never answers 5xx, and a request it refuses
// (4xx, or a failed batch's 207) changes nothing.
func FuzzHandler(f *testing.F) {
	seeds := []struct{ method, path, hdr, body string }{
		{"POST", "/dbs/db/colls/c/docs", "x-ms-documentdb-partitionkey: [\"p\"]", `{"id":"b","pk":"p","ttl":5}`},
		{"POST", "/dbs/db/colls/c/docs", "x-ms-documentdb-partitionkey: [\"p\"]\nx-ms-documentdb-is-upsert: true", `{"id":"a","pk":"p"}`},
		{"POST", "/dbs/db/colls/c/docs", "x-ms-documentdb-query: True", `{"query":"SELECT * FROM c WHERE c.v > @v","parameters":[{"name":"@v","value":0}]}`},
		{"POST", "/dbs/db/colls/c/docs", "x-ms-documentdb-partitionkey: [\"p\"]\nx-ms-cosmos-is-batch-request: True", `[{"operationType":"Create","resourceBody":{"id":"z","pk":"p"}}]`},
		{"PATCH", "/dbs/db/colls/c/docs/a", "x-ms-documentdb-partitionkey: [\"p\"]", `{"operations":[{"op":"incr","path":"/v","value":1}]}`},
		{"GET", "/dbs/db/colls/c/docs", "A-IM: Incremental Feed", ""},
		{"PUT", "/dbs/db/colls/c", "", `{"id":"c","partitionKey":{"paths":["/pk"]},"defaultTtl":-1}`},
		{"DELETE", "/dbs/db/colls/c/docs/a%20b", "x-ms-documentdb-partitionkey: [1]", ""},
		{"POST", "/dbs", "", `{"id":"%2e%2e"}`},
		{"GET", "/dbs/db/colls/c/pkranges", "If-None-Match: \"1\"", ""},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.hdr, s.body)
	}
	s, _ := newTestServer(f, Options{MaxDocumentSize: 4 << 10})
	f.Fuzz(func(t *testing.T, method, path, hdrs, body string) {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " ?#\x00\r\n") || len(path) > 512 {
			return
		}
		if _, err := url.Parse("http://localhost" + path); err != nil {
			return
		}
		switch method {
		case "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD":
		default:
			return
		}
		hdr := map[string]string{}
		for _, line := range strings.Split(hdrs, "\n") {
			k, v, ok := strings.Cut(line, ":")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if ok && k != "" && v != "" && !strings.ContainsAny(k+v, "\r\x00") && http.CanonicalHeaderKey(k) != "Authorization" {
				hdr[k] = v
			}
		}
		before := dump(s)
		w := call(t, s, "", method, path, hdr, body)
		if w.Code >= 500 {
			t.Fatalf("%s %s %q %q: %d %s", method, path, hdrs, body, w.Code, w.Body)
		}
		if w.Code >= 400 || w.Code == http.StatusMultiStatus {
			if after := dump(s); after != before {
				t.Fatalf("%s %s %q %q refused with %d but changed the server", method, path, hdrs, body, w.Code)
			}
		}
	})
}
