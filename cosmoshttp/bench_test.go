package cosmoshttp

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// BenchmarkHandler measures the handler alone (no network, no SDK) on the
// conformance benchmark's data: 100 partitions of 100 items of 100 B to
// 2 KB, each with its own ttl.
func BenchmarkHandler(b *testing.B) {
	s, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	call(b, s, "", "POST", "/dbs", nil, `{"id":"db"}`)
	call(b, s, "", "POST", "/dbs/db/colls", nil, `{"id":"c","partitionKey":{"paths":["/pk"]},"defaultTtl":-1}`)
	rng := rand.New(rand.NewPCG(1, 2))
	for p := range 100 {
		for i := range 100 {
			body := fmt.Sprintf(`{"id":"p%d-%d","pk":"p%d","cat":%d,"ttl":%d,"pad":"%s"}`, p, i, p, i%10, 3600+rng.IntN(86400*30), strings.Repeat("x", 60+rng.IntN(1900)))
			if w := call(b, s, "", "POST", "/dbs/db/colls/c/docs", map[string]string{hdrPK: fmt.Sprintf(`["p%d"]`, p)}, body); w.Code != 201 {
				b.Fatal(w.Code, w.Body)
			}
		}
	}
	date := time.Now().UTC().Format(http.TimeFormat)
	b.Run("op=read", func(b *testing.B) {
		reqs := make([]*http.Request, 1024)
		for j := range reqs {
			p, i := rng.IntN(100), rng.IntN(100)
			r := httptest.NewRequest("GET", fmt.Sprintf("http://localhost/dbs/db/colls/c/docs/p%d-%d", p, i), nil)
			auth, _ := Sign(EmulatorKey, "GET", "docs", fmt.Sprintf("dbs/db/colls/c/docs/p%d-%d", p, i), date)
			r.Header.Set("x-ms-date", date)
			r.Header.Set("Authorization", auth)
			r.Header.Set(hdrPK, fmt.Sprintf(`["p%d"]`, p))
			reqs[j] = r
		}
		b.ReportAllocs()
		b.ResetTimer()
		for n := range b.N {
			w := httptest.NewRecorder()
			s.ServeHTTP(w, reqs[n%len(reqs)])
			if w.Code != 200 {
				b.Fatal(w.Code, w.Body)
			}
		}
	})
	b.Run("op=query", func(b *testing.B) {
		b.ReportAllocs()
		for n := range b.N {
			p := n % 100
			w := call(b, s, "", "POST", "/dbs/db/colls/c/docs", map[string]string{hdrPK: fmt.Sprintf(`["p%d"]`, p), "x-ms-documentdb-query": "True"},
				fmt.Sprintf(`{"query":"SELECT * FROM c WHERE c.cat = @cat","parameters":[{"name":"@cat","value":%d}]}`, n%10))
			if w.Code != 200 {
				b.Fatal(w.Code, w.Body)
			}
		}
	})
}
