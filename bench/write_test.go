package bench

import (
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkInsert measures storing one new document in a store that starts
// empty: it cycles over 100k ids and replaces the store by an empty one
// (outside the timer) every 100k inserts, so every Set inserts a new id and
// the cost of growing the store from 0 to 100k is spread over the inserts.
func BenchmarkInsert(b *testing.B) {
	forEachKind(b, nil, func(b *testing.B, k Kind) {
		benchInserts(b, func() Store { return k.New(Config{}) }, 1)
	})
}

// BenchmarkInsertParallel is BenchmarkInsert on GOMAXPROCS goroutines: the
// same store of 0 to 100k documents, replaced outside the timer every 100k
// inserts, every Set a new id. b.RunParallel cannot stop the timer, and a
// store that grew to b.N documents (millions) would measure another
// workload, so the goroutines are the benchmark's own: for each 100k
// inserts, GOMAXPROCS goroutines share the 100k ids, taking 256 at a time
// (inParallel), and ns/op is the wall time over b.N, as with RunParallel.
func BenchmarkInsertParallel(b *testing.B) {
	forEachKind(b, nil, func(b *testing.B, k Kind) {
		benchInserts(b, func() Store { return k.New(Config{}) }, runtime.GOMAXPROCS(0))
	})
}

// benchInserts stores the data set's first 100k documents, in order, in a
// store newStore makes, and replaces it with a new one (closing the old,
// outside the timer) after every 100k, so every Set inserts a new id into a
// store of 0 to 100k documents. With goroutines 1 the inserts run in a
// b.Loop on the benchmark's goroutine; with more, that many goroutines share
// each 100k (inParallel).
func benchInserts(b *testing.B, newStore func() Store, goroutines int) {
	d := Data(n100k)
	dropFixture()
	b.ReportAllocs()
	s := newStore()
	if goroutines == 1 {
		i := 0
		for b.Loop() {
			if i == d.Len() {
				b.StopTimer()
				s.Close()
				s = newStore()
				i = 0
				b.StartTimer()
			}
			s.Set(d.IDs[i], d.Docs[i])
			i++
		}
		s.Close()
		return
	}
	b.ResetTimer()
	for done := 0; done < b.N; {
		if done > 0 {
			b.StopTimer()
			s.Close()
			s = newStore()
			b.StartTimer()
		}
		n := min(b.N-done, d.Len())
		into := s
		inParallel(goroutines, n, func(_, i int) { into.Set(d.IDs[i], d.Docs[i]) })
		done += n
	}
	b.StopTimer()
	s.Close()
}

// BenchmarkOverwrite measures storing a new value under an id that is live in
// a store of 100k documents: each id's value alternates between two
// documents of the same size. In ttlstore the document's expiry index entry
// moves on every write.
func BenchmarkOverwrite(b *testing.B) {
	forEachKind(b, nil, func(b *testing.B, k Kind) {
		s, _ := filled(k, n100k, Config{})
		benchOverwrites(b, s, 1)
	})
}

// BenchmarkOverwriteParallel is BenchmarkOverwrite on GOMAXPROCS
// goroutines, which share the b.N writes, taking 256 at a time
// (inParallel), so that every write has its own place in the alternation
// and changes the value, as in BenchmarkOverwrite (b.RunParallel gives no
// such index). ns/op is the wall time over b.N.
func BenchmarkOverwriteParallel(b *testing.B) {
	forEachKind(b, nil, func(b *testing.B, k Kind) {
		s, _ := filled(k, n100k, Config{})
		benchOverwrites(b, s, runtime.GOMAXPROCS(0))
	})
}

// benchOverwrites writes the data set's first 100k ids over and over, in
// order, in s, the kept store (fixtureStore) filled with their Docs: the
// first pass with Alt, the next with Docs, and so on, so that every write
// changes the value. It continues from where the last run on s stopped
// (fixture.overwrites). With goroutines 1 the writes run in a b.Loop on the
// benchmark's goroutine; with more, that many goroutines share them
// (inParallel).
func benchOverwrites(b *testing.B, s Store, goroutines int) {
	d := Data(n100k)
	if fixture.store != s {
		b.Fatal("benchOverwrites: the store is not the kept one, whose values it tracks")
	}
	b.ReportAllocs()
	from := fixture.overwrites
	if goroutines == 1 {
		i := from
		for b.Loop() {
			s.Set(overwriteAt(d, i))
			i++
		}
		fixture.overwrites = i
	} else {
		b.ResetTimer()
		inParallel(goroutines, b.N, func(_, i int) { s.Set(overwriteAt(d, from+i)) })
		b.StopTimer()
		fixture.overwrites = from + b.N
	}
	if !s.Get(d.IDs[0]) {
		b.Fatal("a document was lost")
	}
}

// overwriteAt returns the id and the value of the i-th overwrite of d's
// documents since they were stored (see benchOverwrites).
func overwriteAt(d *Dataset, i int) (string, []byte) {
	j := i % d.Len()
	if (i/d.Len())%2 == 0 {
		return d.IDs[j], d.Alt[j]
	}
	return d.IDs[j], d.Docs[j]
}

// BenchmarkInsertFresh is inserting in the manner of a harness written
// apart from this module: 100k ids in ascending order ("key-%06d"), each
// with a JSON value of 200 bytes whose padding is one long string, stored
// into a store made inside the timer, a new one for every 100k inserts (the
// old one closed outside it). Where BenchmarkInsert's documents have eight
// members, one nested, these have two, so JSON validation weighs less and
// the table's growth from empty, and the store's creation, more.
func BenchmarkInsertFresh(b *testing.B) {
	forEachKind(b, nil, func(b *testing.B, k Kind) {
		ids, docs := insertFreshData(n100k, 200)
		b.ReportAllocs()
		var s Store
		i := len(ids)
		for b.Loop() {
			if i == len(ids) {
				if s != nil {
					b.StopTimer()
					s.Close()
					b.StartTimer()
				}
				s = k.New(Config{})
				i = 0
			}
			s.Set(ids[i], docs[i])
			i++
		}
		s.Close()
	})
}

// insertFreshData returns n ids in ascending order and, for each, a JSON
// document of size bytes: {"id":"key-000042","value":"xxx…"}.
func insertFreshData(n, size int) ([]string, [][]byte) {
	ids := make([]string, n)
	docs := make([][]byte, n)
	for i := range n {
		ids[i] = fmt.Sprintf("key-%06d", i)
		doc := fmt.Appendf(nil, `{"id":%q,"value":"`, ids[i])
		pad := size - len(doc) - len(`"}`)
		for j := range pad {
			doc = append(doc, 'a'+byte((i+j)%26))
		}
		docs[i] = append(doc, `"}`...)
	}
	return ids, docs
}
