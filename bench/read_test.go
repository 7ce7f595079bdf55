package bench

import (
	"sync/atomic"
	"testing"
)

// BenchmarkReadHit measures one read of a live document in a store of 100k,
// ids in random order, on one goroutine.
func BenchmarkReadHit(b *testing.B) {
	forEachKind(b, nil, func(b *testing.B, k Kind) {
		s, order := filled(k, n100k, Config{})
		benchReads(b, s, order, true)
	})
}

// BenchmarkReadHitParallel is BenchmarkReadHit on GOMAXPROCS goroutines
// (b.RunParallel), each walking the read order from its own offset.
func BenchmarkReadHitParallel(b *testing.B) {
	forEachKind(b, nil, func(b *testing.B, k Kind) {
		s, order := filled(k, n100k, Config{})
		benchParallelReads(b, s, order)
	})
}

// BenchmarkReadHitAscending is BenchmarkReadHit with the ids in ascending
// order (AscendingOrder: "user-0000000", "user-0000001", …, the order they
// were generated and stored in, round and round), each a copy of the
// stored id. Read in the order they were written, documents allocated one
// after another are reached nearly in sequence in memory, which the
// hardware can prefetch, even where the store's hash table scatters them.
func BenchmarkReadHitAscending(b *testing.B) {
	forEachKind(b, nil, func(b *testing.B, k Kind) {
		s, _ := filled(k, n100k, Config{})
		benchReads(b, s, ascendingOrder(n100k), true)
	})
}

// BenchmarkReadHitAscendingParallel is BenchmarkReadHitAscending on
// GOMAXPROCS goroutines (b.RunParallel), as BenchmarkReadHitParallel: each
// walks the ascending order from an offset of its own.
func BenchmarkReadHitAscendingParallel(b *testing.B) {
	forEachKind(b, nil, func(b *testing.B, k Kind) {
		s, _ := filled(k, n100k, Config{})
		benchParallelReads(b, s, ascendingOrder(n100k))
	})
}

// benchParallelReads reads the ids of order on GOMAXPROCS goroutines
// (b.RunParallel), each from its own offset, and fails unless every read
// found a document.
func benchParallelReads(b *testing.B, s getter, order []string) {
	b.ReportAllocs()
	var start, misses atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(start.Add(1)) * 7919 * 131
		miss := 0
		for pb.Next() {
			if !s.Get(order[i&orderMask]) {
				miss++
			}
			i++
		}
		misses.Add(int64(miss))
	})
	if n := misses.Load(); n > 0 {
		b.Fatalf("%d of the reads of live documents missed", n)
	}
}

// BenchmarkReadHitScale is BenchmarkReadHit for ttlstore and otter at 10k,
// 100k and 1M documents: the cost of a read should not grow with the store.
func BenchmarkReadHitScale(b *testing.B) {
	for _, n := range []int{n10k, n100k, n1M} {
		b.Run(sizeName(n), func(b *testing.B) {
			forEachKind(b, only("ttlstore", "otter"), func(b *testing.B, k Kind) {
				s, order := filled(k, n, Config{})
				benchReads(b, s, order, true)
			})
		})
	}
}

// BenchmarkReadExpired measures one read of a document that has expired but
// is still in memory (not swept), in a store of 100k such documents. Every
// read must report not found. For ttlstore compare it with
// BenchmarkReadHitExpiryClock/store=ttlstore, which reads the same clock. Otter may drop expired entries as part of
// its maintenance, in which case its reads become plain misses; the
// expirable LRU cannot keep expired entries unswept and is left out.
func BenchmarkReadExpired(b *testing.B) {
	forEachKind(b, expires, func(b *testing.B, k Kind) {
		d := Data(n100k)
		s := fixtureStore("expired/"+k.Name, func() Store {
			s := k.New(Config{Expiry: true})
			if err := FillExpired(s, d.IDs, d.Docs, d.Len()); err != nil {
				b.Fatal(err)
			}
			return s
		})
		benchReads(b, s, readOrder(n100k), false)
	})
}

// BenchmarkReadHitExpiryClock is BenchmarkReadHit on the stores of
// BenchmarkReadExpired (ttlstore and otter on a clock that the expiry
// workloads can move), with nothing expired: the hit to compare an expired
// read with, since both then read the same clock.
func BenchmarkReadHitExpiryClock(b *testing.B) {
	forEachKind(b, only("ttlstore", "otter"), func(b *testing.B, k Kind) {
		s, order := filled(k, n100k, Config{Expiry: true})
		benchReads(b, s, order, true)
	})
}

// getter is what the read workloads need of a store: a Store, or a
// DurableStore.
type getter interface {
	Get(id string) (found bool)
}

// benchReads reads order[i] in a b.Loop and fails unless every read found a
// document (want) or none did (!want).
func benchReads(b *testing.B, s getter, order []string, want bool) {
	b.ReportAllocs()
	i, wrong := 0, 0
	for b.Loop() {
		if s.Get(order[i&orderMask]) != want {
			wrong++
		}
		i++
	}
	if wrong > 0 {
		b.Fatalf("%d of %d reads found=%v, want found=%v", wrong, i, !want, want)
	}
}
