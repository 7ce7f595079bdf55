package bench

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// The bounded workloads: caches full at a bound of 100k documents of ~200
// bytes (see BoundedKinds), on 1 and 2 goroutines.
//
//	BenchmarkBoundedReadHit  a read of a document in the cache, ids in random order
//	BenchmarkBoundedWrite    a write of a document never stored before, which
//	                         makes room by evicting (or is not admitted)
//
// With goroutines=2 both share b.N operations, taking 256 at a time, so
// ns/op is the wall time over b.N: the inverse of the throughput of the two
// together. store=ttlstore-unbounded is ttlstore without the bound, the
// cost of the bound being the difference.

// boundedGoroutines are the numbers of goroutines of the bounded workloads.
var boundedGoroutines = []int{1, 2}

// BenchmarkBoundedReadHit measures a read of a document in a full bounded
// cache of 100k (every read must find its document).
func BenchmarkBoundedReadHit(b *testing.B) {
	for _, g := range boundedGoroutines {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
			forEachBoundedKind(b, func(b *testing.B, k BoundedKind) {
				s := boundedFilled(b, k, "read")
				order := readOrder(n100k)
				b.ReportAllocs()
				var misses atomic.Int64
				b.ResetTimer()
				inParallel(g, b.N, func(_, i int) {
					if !s.Get(order[i&orderMask]) {
						misses.Add(1)
					}
				})
				b.StopTimer()
				if n := misses.Load(); n > 0 {
					b.Fatalf("%d of %d reads of documents in the cache missed", n, b.N)
				}
			})
		})
	}
}

// BenchmarkBoundedWrite measures a write of a new document into a full
// bounded cache of 100k: the data set's documents from the 100,001st to the
// 1,000,000th, in order, continuing from one run to the next (after 900k
// writes the first of them come again, long evicted). Each write makes room
// for itself: the cache evicts a document, or, with a policy that admits
// only what it expects to be read again (W-TinyLFU: ttlstore, otter;
// TinyLFU: ristretto), the new one or another recent write. ristretto's Set
// only hands the document to a buffer that a goroutine of its own drains,
// and drops it when the buffer is full: ristretto reports dropped/op, the
// share of its writes dropped so (Set returned false). ttlstore reports
// evicted/op (Stats.Evicted over the writes).
//
// store=ttlstore-unbounded evicts nothing: it is given a new store of the
// first 100k documents (outside the timer) before every 100k writes, so it
// holds 100k to 200k documents and every write is an insert.
func BenchmarkBoundedWrite(b *testing.B) {
	d := Data(n1M)
	for _, g := range boundedGoroutines {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
			forEachBoundedKind(b, func(b *testing.B, k BoundedKind) {
				benchBoundedWrites(b, k, g, d)
			})
		})
	}
}

func benchBoundedWrites(b *testing.B, k BoundedKind, goroutines int, d *Dataset) {
	const pool = n1M - n100k // the new documents
	s := boundedFilled(b, k, "write")
	if boundedSinceFill.s != s {
		boundedSinceFill.s, boundedSinceFill.n = s, 0
	}
	var evicted0 uint64
	ts, isTTLStore := s.(*boundedTTLStore)
	if isTTLStore {
		evicted0 = ts.C.Stats().Evicted
	}
	ds, dropper := s.(TrySetter)
	var drops goroutineCounts
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(b.N-done, n100k)
		if !k.Bounded && boundedSinceFill.n+n > n100k {
			b.StopTimer()
			dropFixture()
			s = boundedFilled(b, k, "write")
			boundedSinceFill.s, boundedSinceFill.n = s, 0
			b.StartTimer()
		}
		next := boundedWriteNext[k.Name]
		if dropper {
			inParallel(goroutines, n, func(g, i int) {
				j := n100k + (next+i)%pool
				if !ds.TrySet(d.IDs[j], d.Docs[j]) {
					drops[g].n++
				}
			})
		} else {
			inParallel(goroutines, n, func(_, i int) {
				j := n100k + (next+i)%pool
				s.Set(d.IDs[j], d.Docs[j])
			})
		}
		boundedWriteNext[k.Name] = (next + n) % pool
		boundedSinceFill.n += n
		done += n
	}
	b.StopTimer()
	if dropper {
		b.ReportMetric(float64(drops.total())/float64(b.N), "dropped/op")
	}
	if isTTLStore && k.Bounded {
		b.ReportMetric(float64(ts.C.Stats().Evicted-evicted0)/float64(b.N), "evicted/op")
	}
	if l, ok := s.(Lener); ok && k.Bounded {
		if n := l.Len(); n > n100k {
			b.Fatalf("%s holds %d documents, more than its bound of %d", k.Name, n, n100k)
		}
	}
}

var (
	// boundedWriteNext is where each store's writes are in the pool of new
	// documents, kept from one run of BenchmarkBoundedWrite to the next.
	boundedWriteNext = map[string]int{}
	// boundedSinceFill is how many documents the kept store s took since
	// it was filled (only the unbounded one's count matters).
	boundedSinceFill struct {
		s Store
		n int
	}
)

// forEachBoundedKind runs f as a sub-benchmark store=<name> for every
// bounded cache.
func forEachBoundedKind(b *testing.B, f func(b *testing.B, k BoundedKind)) {
	for _, k := range BoundedKinds {
		b.Run("store="+k.Name, func(b *testing.B) { f(b, k) })
	}
}

// boundedFilled returns the kept store (see fixtureStore) for the workload,
// or a new one of kind k with a bound of 100k holding the first 100k
// documents, every one of them found.
func boundedFilled(tb testing.TB, k BoundedKind, workload string) Store {
	d := Data(n100k)
	return fixtureStore("bounded/"+workload+"/"+k.Name, func() Store {
		s := k.New(n100k)
		if err := fillBounded(s, d.IDs, d.Docs); err != nil {
			s.Close()
			tb.Fatalf("%s: %v", k.Name, err)
		}
		return s
	})
}

// fillBounded stores docs[i] under ids[i] in s, whose bound must hold them
// all, and checks that every one is found. A Waiter is waited for every
// 1000 writes (ristretto drops writes its buffer has no room for), and the
// documents not found are written again, a few times at most.
func fillBounded(s Store, ids []string, docs [][]byte) error {
	w, waits := s.(Waiter)
	todo := make([]int, len(ids))
	for i := range todo {
		todo[i] = i
	}
	for try := 0; try < 5 && len(todo) > 0; try++ {
		for n, i := range todo {
			s.Set(ids[i], docs[i])
			if waits && n%1000 == 999 {
				w.Wait()
			}
		}
		if waits {
			w.Wait()
		}
		missing := todo[:0]
		for _, i := range todo {
			if !s.Get(ids[i]) {
				missing = append(missing, i)
			}
		}
		todo = missing
	}
	if len(todo) > 0 {
		return fmt.Errorf("%d of %d documents not found after the fill", len(todo), len(ids))
	}
	return nil
}

// inParallel calls f(0, i) for every i in [0, n) on the calling goroutine
// when goroutines is 1, else f(g, i) on that many new goroutines, g in [0,
// goroutines), each taking the next 256 indices at a time; it returns once
// every call has returned.
func inParallel(goroutines, n int, f func(g, i int)) {
	if goroutines == 1 {
		for i := range n {
			f(0, i)
		}
		return
	}
	const grain = 256
	var next atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				end := int(next.Add(grain))
				if end-grain >= n {
					return
				}
				for i := end - grain; i < min(end, n); i++ {
					f(g, i)
				}
			}
		}()
	}
	wg.Wait()
}

// goroutineCounts holds a count per goroutine of inParallel (at most the
// largest of boundedGoroutines), each on a cache line of its own.
type goroutineCounts [2]struct {
	n int
	_ [56]byte
}

func (c *goroutineCounts) total() int {
	t := 0
	for i := range c {
		t += c[i].n
	}
	return t
}

// TestBoundedAdapters checks the premises of the bounded workloads at a
// bound of 1000: a cache filled to its bound finds every document, and
// after 3000 more new ones, once its pending work is done, it holds no more
// than its bound (the unbounded one: all 4000). otter evicts in its
// maintenance, which may run after the write that went past the bound.
func TestBoundedAdapters(t *testing.T) {
	const capacity, extra = 1000, 3000
	d := Data(capacity + extra)
	for _, k := range BoundedKinds {
		t.Run(k.Name, func(t *testing.T) {
			s := k.New(capacity)
			defer s.Close()
			if err := fillBounded(s, d.IDs[:capacity], d.Docs[:capacity]); err != nil {
				t.Fatal(err)
			}
			for i := capacity; i < capacity+extra; i++ {
				s.Set(d.IDs[i], d.Docs[i])
			}
			want := capacity + extra
			if k.Bounded {
				want = capacity
			}
			// Let the pending work finish (ristretto's buffered writes,
			// otter's maintenance) before counting.
			if w, ok := s.(Waiter); ok {
				w.Wait()
			}
			if l, ok := s.(Lener); ok {
				if n := l.Len(); n > want {
					t.Errorf("Len = %d, want at most %d", n, want)
				}
			}
			found := 0
			for _, id := range d.IDs {
				if s.Get(id) {
					found++
				}
			}
			if found == 0 || found > want || (!k.Bounded && found != want) {
				t.Errorf("%d of the %d documents written found, want at most %d", found, len(d.IDs), want)
			}
		})
	}
}
