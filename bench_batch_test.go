package ttlstore_test

import (
	"fmt"
	"testing"

	"github.com/ttlstore/ttlstore"
)

// BenchmarkBatch measures ExecuteBatch of upserts (overwrites of 100k
// documents of about 200 bytes, in a random-looking order) against the
// same upserts made one by one, per document: in memory, and durable under
// SyncAlways, where a batch waits for one fsync and single writes for one
// each (group commit shares nothing on one goroutine). Issue 18's target: a
// batch of 10 costs at most what 10 single upserts cost.
func BenchmarkBatch(b *testing.B) {
	_, docs := benchDocs(100_000)
	order := make([]int, len(docs))
	for i := range order {
		order[i] = (i * 7919) % len(docs)
	}
	modes := []struct {
		name string
		open func(b *testing.B) *ttlstore.Collection
	}{
		{"memory", func(b *testing.B) *ttlstore.Collection { return newBenchCollection(b, false) }},
		{"durable-SyncAlways", func(b *testing.B) *ttlstore.Collection {
			c, err := ttlstore.Open(b.TempDir(), ttlstore.Options{DefaultTTL: ttlstore.TTL(3600), SweepInterval: ttlstore.ManualSweep})
			if err != nil {
				b.Fatal(err)
			}
			return c
		}},
	}
	for _, mode := range modes {
		open := func(b *testing.B) *ttlstore.Collection {
			c := mode.open(b)
			b.Cleanup(func() { c.Close() })
			if mode.name == "memory" { // a durable fill of 100k takes minutes under SyncAlways
				for _, d := range docs {
					if _, err := c.Upsert(d); err != nil {
						b.Fatal(err)
					}
				}
			}
			return c
		}
		for _, size := range []int{1, 10, 100} {
			b.Run(fmt.Sprintf("%s/batch=%d", mode.name, size), func(b *testing.B) {
				c := open(b)
				b.ReportAllocs()
				b.ResetTimer()
				k := 0
				for i := 0; i < b.N; i += size {
					var batch ttlstore.Batch
					for range size {
						batch.Upsert(docs[order[k%len(order)]])
						k++
					}
					if _, err := c.ExecuteBatch(&batch); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(mode.name+"/single", func(b *testing.B) {
			c := open(b)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if _, err := c.Upsert(docs[order[i%len(order)]]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
