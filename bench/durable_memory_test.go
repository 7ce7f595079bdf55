package bench

import (
	"runtime"
	"testing"
)

// BenchmarkDurableMemory measures what a durable collection keeps on the
// heap per document beyond an in-memory one: the heap growth per document
// of filling a durable ttlstore (SyncNever), minus that of filling an
// in-memory one with the same documents, measured as BenchmarkMemory does.
// Run it with -benchtime=1x.
func BenchmarkDurableMemory(b *testing.B) {
	for _, n := range []int{n100k, n1M} {
		b.Run(sizeName(n), func(b *testing.B) {
			d := Data(n)
			mem := KindNamed("ttlstore")
			dur := DurableKindNamed("ttlstore")
			extra := 0.0
			for b.Loop() {
				inMemory := heapPerDoc(mem, d)
				var before, after runtime.MemStats
				runtime.GC()
				runtime.GC()
				runtime.ReadMemStats(&before)
				s, err := dur.Open(b.TempDir(), DurableConfig{Sync: SyncNever, NoAutoCompact: true})
				if err != nil {
					b.Fatal(err)
				}
				for i, doc := range d.Docs {
					if err := s.Set(d.IDs[i], doc); err != nil {
						b.Fatal(err)
					}
				}
				runtime.GC()
				runtime.GC()
				runtime.ReadMemStats(&after)
				runtime.KeepAlive(s)
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				durable := (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(d.Len())
				extra += durable - inMemory
			}
			b.ReportMetric(extra/float64(b.N), "B/doc-extra")
		})
	}
}
