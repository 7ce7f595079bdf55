package bench

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
)

// The second harness style of the read workloads, the way a caller outside
// this module would write one: 100k ids stored in ascending order with
// 200-byte values, and a lookup slice of 100k fresh copies of the ids
// (strings.Clone, made before the timer, one per id, never the stored
// string), walked with a plain index in ascending or in a fixed random
// order. It differs from BenchmarkReadHit's in three ways that matter to
// the hardware: each lookup string is made once (ReadOrder's 1<<20 copies
// are ten per id, scattered), the values are exactly 200 bytes, and the id
// sits either where the bench data set puts it (first) or where many
// documents have it (last), 150-odd bytes further from the start.

// freshValueLen is the length of every value of the fresh workloads.
const freshValueLen = 200

// freshSet is the data of one fresh workload: the stored ids, their
// values (ids[i] inside docs[i]) and the lookups, copies of the ids.
type freshSet struct {
	ids       []string
	docs      [][]byte
	ascending []string // lookups[i] is a copy of ids[i]
	random    []string // the same copies in a fixed random order
}

var freshSets = map[bool]*freshSet{}

// freshData returns the fresh data set of n100k documents with the id
// first (idLast false) or last in each 200-byte JSON value.
func freshData(idLast bool) *freshSet {
	if s, ok := freshSets[idLast]; ok {
		return s
	}
	s := &freshSet{ids: make([]string, n100k), docs: make([][]byte, n100k)}
	for i := range s.ids {
		s.ids[i] = fmt.Sprintf("user-%07d", i)
		s.docs[i] = freshDoc(s.ids[i], idLast)
	}
	s.ascending = make([]string, len(s.ids))
	for i, id := range s.ids {
		s.ascending[i] = strings.Clone(id)
	}
	s.random = make([]string, len(s.ids))
	for i, j := range rand.New(rand.NewPCG(5, 6)).Perm(len(s.ids)) {
		s.random[i] = s.ascending[j]
	}
	freshSets[idLast] = s
	return s
}

// freshDoc is a JSON object of exactly freshValueLen bytes with the given
// id as its first or its last member.
func freshDoc(id string, idLast bool) []byte {
	idMember := fmt.Sprintf(`"id":%q`, id)
	// {"id":"…","pad":"xxx…"} or {"pad":"xxx…","id":"…"}
	pad := freshValueLen - len(`{,"pad":""}`) - len(idMember)
	padMember := `"pad":"` + strings.Repeat("x", pad) + `"`
	doc := "{" + idMember + "," + padMember + "}"
	if idLast {
		doc = "{" + padMember + "," + idMember + "}"
	}
	if len(doc) != freshValueLen {
		panic("bench: fresh document of the wrong length")
	}
	return []byte(doc)
}

// freshStore returns a store of kind k filled with the fresh data set.
func freshStore(k Kind, idLast bool) (Store, *freshSet) {
	d := freshData(idLast)
	s := fixtureStore(fmt.Sprintf("fresh/%s/%v", k.Name, idLast), func() Store {
		s := k.New(Config{})
		Fill(s, d.ids, d.docs)
		return s
	})
	return s, d
}

// forEachFresh runs f for id=first and id=last, order=random and
// order=ascending and every store, with the store and its lookups.
func forEachFresh(b *testing.B, f func(b *testing.B, s Store, lookups []string)) {
	for _, idLast := range []bool{false, true} {
		b.Run(map[bool]string{false: "id=first", true: "id=last"}[idLast], func(b *testing.B) {
			for _, ord := range []string{"random", "ascending"} {
				b.Run("order="+ord, func(b *testing.B) {
					forEachKind(b, nil, func(b *testing.B, k Kind) {
						s, d := freshStore(k, idLast)
						lookups := d.random
						if ord == "ascending" {
							lookups = d.ascending
						}
						f(b, s, lookups)
					})
				})
			}
		})
	}
}

// BenchmarkReadHitFresh measures one read of a live document in a store of
// 100k, looked up with a fresh copy of its id (see freshData), on one
// goroutine.
func BenchmarkReadHitFresh(b *testing.B) {
	forEachFresh(b, func(b *testing.B, s Store, lookups []string) {
		b.ReportAllocs()
		i, misses := 0, 0
		for b.Loop() {
			if !s.Get(lookups[i]) {
				misses++
			}
			if i++; i == len(lookups) {
				i = 0
			}
		}
		if misses > 0 {
			b.Fatalf("%d reads of live documents missed", misses)
		}
	})
}

// BenchmarkReadHitFreshParallel is BenchmarkReadHitFresh on GOMAXPROCS
// goroutines (b.RunParallel), each walking the lookups from its own offset.
func BenchmarkReadHitFreshParallel(b *testing.B) {
	forEachFresh(b, func(b *testing.B, s Store, lookups []string) {
		b.ReportAllocs()
		var start, misses atomic.Int64
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			i := int(start.Add(1)) * 7919 * 131 % len(lookups)
			miss := 0
			for pb.Next() {
				if !s.Get(lookups[i]) {
					miss++
				}
				if i++; i == len(lookups) {
					i = 0
				}
			}
			misses.Add(int64(miss))
		})
		if n := misses.Load(); n > 0 {
			b.Fatalf("%d reads of live documents missed", n)
		}
	})
}
