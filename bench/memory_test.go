package bench

import (
	"runtime"
	"testing"
)

// BenchmarkMemory measures the heap a store keeps per document beyond the
// JSON it must own: after a garbage collection, HeapAlloc before and after
// inserting n documents into a new store, divided by n, minus the mean length
// of a document (about 200 bytes). The ids are shared with the data set and
// not counted for any store: ttlstore keeps its id inside its copy of the
// JSON, the peers keep the caller's string. Run it with -benchtime=1x: one
// iteration builds one store; ns/op is the time to build it, collections
// included, and means little.
func BenchmarkMemory(b *testing.B) {
	for _, n := range []int{n100k, n1M} {
		b.Run(sizeName(n), func(b *testing.B) {
			d := Data(n)
			payload := d.PayloadLen()
			forEachKind(b, nil, func(b *testing.B, k Kind) {
				dropFixture()
				total := 0.0
				for b.Loop() {
					total += heapPerDoc(k, d) - payload
				}
				b.ReportMetric(total/float64(b.N), "B/doc-overhead")
			})
		})
	}
}

// heapPerDoc returns the heap growth per document of filling a new store of
// kind k with d.
func heapPerDoc(k Kind, d *Dataset) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	s := k.New(Config{})
	Fill(s, d.IDs, d.Docs)
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(s)
	s.Close()
	return (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(d.Len())
}
