package bench

import (
	"testing"
)

// BenchmarkInsert measures storing one new document in a store that starts
// empty: it cycles over 100k ids and replaces the store by an empty one
// (outside the timer) every 100k inserts, so every Set inserts a new id and
// the cost of growing the store from 0 to 100k is spread over the inserts.
func BenchmarkInsert(b *testing.B) {
	d := Data(n100k)
	forEachKind(b, nil, func(b *testing.B, k Kind) {
		dropFixture()
		b.ReportAllocs()
		s := k.New(Config{})
		i := 0
		for b.Loop() {
			if i == d.Len() {
				b.StopTimer()
				s.Close()
				s = k.New(Config{})
				i = 0
				b.StartTimer()
			}
			s.Set(d.IDs[i], d.Docs[i])
			i++
		}
		s.Close()
	})
}

// BenchmarkOverwrite measures storing a new value under an id that is live in
// a store of 100k documents: each id's value alternates between two
// documents of the same size. In ttlstore the document's expiry index entry
// moves on every write.
func BenchmarkOverwrite(b *testing.B) {
	d := Data(n100k)
	forEachKind(b, nil, func(b *testing.B, k Kind) {
		s, _ := filled(k, n100k, Config{})
		b.ReportAllocs()
		// Continue the alternation from where the previous -count run left
		// it, so each write changes the value.
		i := overwriteNext[k.Name]
		for b.Loop() {
			j := i % d.Len()
			if (i/d.Len())%2 == 0 {
				s.Set(d.IDs[j], d.Alt[j])
			} else {
				s.Set(d.IDs[j], d.Docs[j])
			}
			i++
		}
		overwriteNext[k.Name] = i
		if !s.Get(d.IDs[0]) {
			b.Fatalf("%s lost a document", k.Name)
		}
	})
}

var overwriteNext = map[string]int{}
