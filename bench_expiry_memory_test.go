package ttlstore_test

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"

	"github.com/ttlstore/ttlstore"
)

// BenchmarkExpirySpread measures what a document costs beyond its JSON, and
// what inserting it costs, as its expiry second is shared with the others
// or not: n documents of 90 bytes of JSON, each with its own ttl, under
// DefaultTTL Never, written with Upsert on one goroutine into a new
// collection. Spreads: every document in one expiry second (ttl 3600), in
// 60 seconds (3600 + i%60), each in a second of its own (3600 + i).
//
// Each iteration builds one collection, after one untimed fill. ns/op is
// the time of one Upsert, the fill's time divided by n (what interleave
// compares); B/doc is the heap after two collections, against before,
// divided by n, less the JSON's 90 bytes. Run it with -benchtime 1x.
func BenchmarkExpirySpread(b *testing.B) {
	spreads := []struct {
		name string
		ttl  func(i int) int
	}{
		{"shared", func(int) int { return 3600 }},
		{"60s", func(i int) int { return 3600 + i%60 }},
		{"distinct", func(i int) int { return 3600 + i }},
	}
	for _, n := range []int{100_000, 1_000_000} {
		for _, sp := range spreads {
			b.Run(fmt.Sprintf("spread=%s/n=%dk", sp.name, n/1000), func(b *testing.B) {
				docs, size := spreadJSON(n, sp.ttl)
				// One fill first, untimed, so that every row starts
				// from a heap the runtime has already grown to n
				// documents: the first row at each n (shared) paid
				// for the growing alone, some 60,000 page faults a
				// 1M fill that the rows after it found done.
				fillSpread(b, docs)
				b.ResetTimer()
				b.ReportAllocs()
				var heap int64
				for range b.N {
					heap += fillSpread(b, docs)
				}
				// The timer ran only while the collections were filled.
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/op")
				b.ReportMetric(float64(heap)/float64(b.N)/float64(n)-size, "B/doc")
			})
		}
	}
}

// spreadJSON returns n documents of about 90 bytes, the i-th with the ttl
// ttl(i), carved out of one buffer, and their mean length.
func spreadJSON(n int, ttl func(int) int) ([][]byte, float64) {
	doc := func(dst []byte, i int) []byte {
		dst = append(dst, `{"id":"doc-`...)
		dst = append(dst, fmt.Sprintf("%07d", i)...)
		dst = append(dst, `","ttl":`...)
		dst = strconv.AppendInt(dst, int64(ttl(i)), 10)
		dst = append(dst, `,"user":"u`...)
		dst = append(dst, strconv.Itoa(i%10)...)
		return append(dst, `","payload":"abcdefghijklmnopqrstuvwxyz01234"}`...)
	}
	buf := make([]byte, 0, n*len(doc(nil, n)))
	docs := make([][]byte, n)
	for i := range docs {
		start := len(buf)
		buf = doc(buf, i)
		docs[i] = buf[start:len(buf):len(buf)]
	}
	return docs, float64(len(buf)) / float64(n)
}

// fillSpread upserts docs into a new collection, with b's timer running
// only meanwhile, and returns the heap the collection holds.
func fillSpread(b *testing.B, docs [][]byte) int64 {
	b.StopTimer()
	defer b.StartTimer()
	before := heapInUse()
	c, err := ttlstore.New(ttlstore.Options{DefaultTTL: ttlstore.TTL(ttlstore.Never), SweepInterval: ttlstore.ManualSweep})
	if err != nil {
		b.Fatal(err)
	}
	b.StartTimer()
	for _, d := range docs {
		if _, err := c.Upsert(d); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	heap := heapInUse() - before
	runtime.KeepAlive(c)
	if err := c.Close(); err != nil {
		b.Fatal(err)
	}
	return heap
}
