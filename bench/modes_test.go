package bench

import (
	"os"
	"runtime"
	"testing"
)

// BenchmarkModes runs the peers' read and write workloads on each of
// ttlstore's modes (Modes), as BenchmarkModes/op=<workload>/store=<mode>:
// store=ttlstore is the in-memory collection, store=ttlstore-durable-never
// the same made by Open with SyncNever (in a directory under the
// benchmark's b.TempDir, so under $TMPDIR), store=ttlstore-bounded-full the
// same with MaxDocuments 100k and EvictColdest, holding 100k. The modes of
// one workload run one after another, so that the machine's drift falls
// alike on the three.
//
//	op=readhit                     BenchmarkReadHit: a read of one of 100k documents, ids in random order
//	op=readhit-ascending           BenchmarkReadHitAscending: the same, ids in ascending order
//	op=readhit-parallel            BenchmarkReadHitParallel: random order, b.RunParallel
//	op=readhit-ascending-parallel  BenchmarkReadHitAscendingParallel: ascending order, b.RunParallel
//	op=insert                      a write of a new id, one goroutine
//	op=insert-parallel             the same on GOMAXPROCS goroutines
//	op=overwrite                   BenchmarkOverwrite: a new value under one of 100k ids, one goroutine
//	op=overwrite-parallel          BenchmarkOverwriteParallel: the same on GOMAXPROCS goroutines
//
// The inserts of the in-memory and durable modes are BenchmarkInsert's and
// BenchmarkInsertParallel's: a new empty collection (for the durable one,
// in a new directory) every 100k inserts, outside the timer. The bounded
// collection is full instead, and stays so: its inserts are
// BenchmarkBoundedWrite's, the data set's 100,001st to 1,000,000th
// documents in turn, each making room for itself by an eviction
// (evicted/op); the parallel ones share the writes 256 at a time, as
// InsertParallel's do. Reads and overwrites run on a collection of the
// first 100k documents (for the bounded mode, at its bound), kept from one
// run to the next; the durable collection's log grows with the
// overwrites, and its background compaction, which starts when the log
// passes 64 MiB and twice the last snapshot, counts where it happens.
func BenchmarkModes(b *testing.B) {
	dir := b.TempDir()
	defer dropFixture() // closes the last collection before its directory goes
	procs := runtime.GOMAXPROCS(0)
	reads := func(ascending, parallel bool) func(*testing.B, Mode) {
		return func(b *testing.B, m Mode) {
			s, order := modeFilled(b, m, dir), readOrder
			if ascending {
				order = ascendingOrder
			}
			if parallel {
				benchParallelReads(b, s, order(n100k))
			} else {
				benchReads(b, s, order(n100k), true)
			}
		}
	}
	inserts := func(goroutines int) func(*testing.B, Mode) {
		return func(b *testing.B, m Mode) {
			if m.Bounded {
				k := BoundedKind{Name: m.Name, New: func(c int) Store { return m.New(dir, c) }, Bounded: true}
				benchBoundedWrites(b, k, goroutines, Data(n1M))
				return
			}
			benchInserts(b, func() Store { return m.New(dir, n100k) }, goroutines)
		}
	}
	overwrites := func(goroutines int) func(*testing.B, Mode) {
		return func(b *testing.B, m Mode) {
			benchOverwrites(b, modeFilled(b, m, dir), goroutines)
		}
	}
	ops := []struct {
		name string
		run  func(*testing.B, Mode)
	}{
		{"readhit", reads(false, false)},
		{"readhit-ascending", reads(true, false)},
		{"readhit-parallel", reads(false, true)},
		{"readhit-ascending-parallel", reads(true, true)},
		{"insert", inserts(1)},
		{"insert-parallel", inserts(procs)},
		{"overwrite", overwrites(1)},
		{"overwrite-parallel", overwrites(procs)},
	}
	for _, op := range ops {
		b.Run("op="+op.name, func(b *testing.B) {
			for _, m := range Modes {
				b.Run("store="+m.Name, func(b *testing.B) { op.run(b, m) })
			}
		})
	}
}

// modeFilled returns the kept store (see fixtureStore) of mode m, or a new
// one under dir holding the data set's first 100k documents (for the
// bounded mode, at its bound of 100k), every one of them found.
func modeFilled(tb testing.TB, m Mode, dir string) Store {
	d := Data(n100k)
	return fixtureStore("modes/"+m.Name, func() Store {
		s := m.New(dir, n100k)
		if err := fillBounded(s, d.IDs, d.Docs); err != nil {
			s.Close()
			tb.Fatalf("%s: %v", m.Name, err)
		}
		return s
	})
}

// TestModes checks the premises of BenchmarkModes at a capacity of 1000:
// every mode finds what it stored and what overwrote it; the bounded one,
// full, keeps no more than its bound when given 3000 new documents, and the
// others keep them all; the durable one leaves no directory behind once
// closed.
func TestModes(t *testing.T) {
	const capacity, extra = 1000, 3000
	d := Data(capacity + extra)
	for _, m := range Modes {
		t.Run(m.Name, func(t *testing.T) {
			dir := t.TempDir()
			s := m.New(dir, capacity)
			if err := fillBounded(s, d.IDs[:capacity], d.Docs[:capacity]); err != nil {
				s.Close()
				t.Fatal(err)
			}
			Fill(s, d.IDs[:capacity], d.Alt[:capacity])
			if got := s.(Iterator).Iterate(); got != capacity {
				t.Errorf("after the overwrites Iterate visited %d, want %d", got, capacity)
			}
			Fill(s, d.IDs[capacity:], d.Docs[capacity:])
			found := 0
			for _, id := range d.IDs {
				if s.Get(id) {
					found++
				}
			}
			switch {
			case m.Bounded && (found == 0 || found > capacity):
				t.Errorf("full and given %d more: %d of %d found, want 1 to %d", extra, found, d.Len(), capacity)
			case !m.Bounded && found != d.Len():
				t.Errorf("%d of %d found", found, d.Len())
			}
			s.Close()
			if left, err := os.ReadDir(dir); err != nil || len(left) > 0 {
				t.Errorf("after Close the directory holds %d entries (%v), want none", len(left), err)
			}
		})
	}
}
