package bench

import (
	"fmt"
	"testing"
)

// BenchmarkIterate measures one pass over every live document of a store of
// 100k documents of which 0 %, 10 % or 50 % have expired but are not swept,
// with each store's own iteration: ttlstore All, otter All, ttlcache Range,
// go-cache Items (a copy into a new map), buntdb Ascend (plus a TTL lookup
// per key, since Ascend also yields expired items), expirable LRU Values (a
// copy into a new slice; 0 % only, as it cannot hold expired entries). ns/op
// is a whole pass; ns/live-doc divides it by the number of live documents,
// which should stay flat as the expired share grows.
func BenchmarkIterate(b *testing.B) {
	d := Data(n100k)
	for _, pct := range []int{0, 10, 50} {
		b.Run(fmt.Sprintf("expired=%d%%", pct), func(b *testing.B) {
			keep := expires
			if pct == 0 {
				keep = nil
			}
			forEachKind(b, keep, func(b *testing.B, k Kind) {
				nExpired := d.Len() * pct / 100
				live := d.Len() - nExpired
				s := fixtureStore(fmt.Sprintf("iterate/%s/%d", k.Name, pct), func() Store {
					s := k.New(Config{Expiry: true})
					if err := FillExpired(s, d.IDs, d.Docs, nExpired); err != nil {
						b.Fatal(err)
					}
					return s
				})
				it := s.(Iterator)
				if got := it.Iterate(); got != live {
					b.Fatalf("%s visited %d documents, want the %d live ones", k.Name, got, live)
				}
				b.ReportAllocs()
				for b.Loop() {
					it.Iterate()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(live), "ns/live-doc")
			})
		})
	}
}
