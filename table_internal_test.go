package ttlstore

import (
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// testEntry makes an entry whose JSON is {"id":"<id>"}.
func testEntry(id string) *entry {
	src := `{"id":"` + id + `"}`
	e, data := newEntry(len(src))
	copy(data, src)
	*e = entry{n: uint32(len(src)), idOff: 7, idLen: uint32(len(id))}
	return e
}

// TestTableAgainstMap runs random puts, overwrites, removes and lookups on a
// table and a Go map side by side, from a pool of ids small enough that
// they collide, overwrite and leave deleted slots, and big enough that the
// table grows and rehashes in place.
func TestTableAgainstMap(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		seed := maphash.MakeSeed()
		tb := table{maxGroups: rapid.SampledFrom([]int{1, 2, 4, defaultMaxGroups}).Draw(rt, "maxGroups")}
		want := map[string]*entry{}
		pool := rapid.IntRange(1, 300).Draw(rt, "pool")
		id := func(label string) string {
			return fmt.Sprintf("k%d", rapid.IntRange(0, pool-1).Draw(rt, label))
		}
		for op := range rapid.IntRange(1, 2000).Draw(rt, "ops") {
			k := id("id")
			h := maphash.String(seed, k)
			switch rapid.IntRange(0, 2).Draw(rt, "op") {
			case 0:
				e := testEntry(k)
				old := tb.put(h, e, seed)
				if old != want[k] {
					rt.Fatalf("put(%q) replaced %p, want %p", k, old, want[k])
				}
				want[k] = e
			case 1:
				e := want[k]
				if e == nil {
					e = testEntry(k) // a stranger with the same id
				}
				if got := tb.remove(h, e); got != (want[k] != nil) {
					rt.Fatalf("remove(%q) = %v", k, got)
				}
				delete(want, k)
			case 2:
				if got := tb.get(h, k); got != want[k] {
					rt.Fatalf("get(%q) = %p, want %p", k, got, want[k])
				}
				if got, ok := tb.find(h, k); got != want[k] || !ok {
					rt.Fatalf("find(%q) = %p, %v, want %p", k, got, ok, want[k])
				}
			}
			if op%50 == 0 {
				if err := tb.check(seed, func(*entry) error { return nil }); err != nil {
					rt.Fatal(err)
				}
			}
		}
		if err := tb.check(seed, func(*entry) error { return nil }); err != nil {
			rt.Fatal(err)
		}
		if tb.len() != len(want) {
			rt.Fatalf("len %d, want %d", tb.len(), len(want))
		}
		for k, e := range want {
			if got := tb.get(maphash.String(seed, k), k); got != e {
				rt.Fatalf("get(%q) = %p, want %p", k, got, e)
			}
		}
	})
}

// A remove by identity leaves a different entry with the same id alone.
func TestTableRemoveIsByIdentity(t *testing.T) {
	seed := maphash.MakeSeed()
	var tb table
	a, b := testEntry("same"), testEntry("same")
	h := maphash.String(seed, "same")
	require.Nil(t, tb.put(h, a, seed))
	require.False(t, tb.remove(h, b))
	require.Equal(t, a, tb.get(h, "same"))
	require.True(t, tb.remove(h, a))
	require.Nil(t, tb.get(h, "same"))
	require.Equal(t, 0, tb.len())
}

// matchH2 finds every byte equal to the tag (false positives allowed only
// above a true match), and never one that is empty or deleted.
func TestMatchH2(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var ctrl uint64
		bytes := make([]uint64, groupSize)
		for i := range bytes {
			bytes[i] = rapid.SampledFrom([]uint64{ctrlEmpty, ctrlDeleted, 0, 1, 0x7F, 0x55, 0x2A}).Draw(rt, "ctrl")
			ctrl |= bytes[i] << (8 * i)
		}
		tag := rapid.SampledFrom([]uint64{0, 1, 0x7F, 0x55, 0x2A}).Draw(rt, "tag")
		m := matchH2(ctrl, tag)
		firstMatch := groupSize
		for i, b := range bytes {
			hit := m>>(8*i)&0x80 != 0
			switch {
			case b == tag && !hit:
				rt.Fatalf("byte %d = %#x missed", i, b)
			case hit && b&0x80 != 0:
				rt.Fatalf("byte %d = %#x (free) matched", i, b)
			case hit && b != tag && i < firstMatch:
				rt.Fatalf("false positive at byte %d below any true match", i)
			}
			if b == tag && i < firstMatch {
				firstMatch = i
			}
		}
		empty, free := matchEmpty(ctrl), matchFree(ctrl)
		for i, b := range bytes {
			if got := empty>>(8*i)&0x80 != 0; got != (b == ctrlEmpty) {
				rt.Fatalf("matchEmpty byte %d = %#x: %v", i, b, got)
			}
			if got := free>>(8*i)&0x80 != 0; got != (b&0x80 != 0) {
				rt.Fatalf("matchFree byte %d = %#x: %v", i, b, got)
			}
		}
	})
}

// With one group per subtable the table splits again and again; every entry
// stays findable, and the directory stays well formed.
func TestTableSplits(t *testing.T) {
	seed := maphash.MakeSeed()
	tb := table{maxGroups: 1}
	var es []*entry
	for i := range 2000 {
		e := testEntry(fmt.Sprintf("id-%d", i))
		es = append(es, e)
		require.Nil(t, tb.put(maphash.String(seed, e.id()), e, seed))
	}
	require.GreaterOrEqual(t, tb.depth, uint(8), "2000 entries in subtables of 8 slots")
	require.NoError(t, tb.check(seed, func(*entry) error { return nil }))
	for _, e := range es {
		h := maphash.String(seed, e.id())
		require.Equal(t, e, tb.get(h, e.id()))
		require.True(t, tb.remove(h, e))
	}
	require.Equal(t, 0, tb.len())
	require.NoError(t, tb.check(seed, func(*entry) error { return nil }))
}

// TestTableFindDuringWrites reads without the lock while a writer, holding
// it, inserts, replaces and removes entries in a table that grows, splits
// and rehashes all the while (subtables of 1, 2 or 128 groups). An id that is
// in the table throughout must always be found, as one of the entries stored
// under it; an id never stored must never be. Under -race it also checks
// that readers and the writer share memory only through atomics.
func TestTableFindDuringWrites(t *testing.T) {
	for _, maxGroups := range []int{1, 2, defaultMaxGroups} {
		t.Run(fmt.Sprint("maxGroups=", maxGroups), func(t *testing.T) {
			seed := maphash.MakeSeed()
			tb := table{maxGroups: maxGroups}
			var mu sync.Mutex
			// The stable ids, each with every entry ever stored under it.
			const stable = 64
			versions := make([][]*entry, stable)
			hashes := make([]uint64, stable)
			for i := range stable {
				e := testEntry(fmt.Sprintf("stable-%d", i))
				hashes[i] = maphash.String(seed, e.id())
				versions[i] = []*entry{e}
				tb.put(hashes[i], e, seed)
			}
			const rounds = 5000
			var stop atomic.Bool
			var wg sync.WaitGroup
			var inconclusive atomic.Int64
			for r := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := r; !stop.Load(); i++ {
						k := i % stable
						e, ok := tb.find(hashes[k], versions[k][0].id())
						if !ok {
							inconclusive.Add(1)
							continue
						}
						if e == nil {
							t.Errorf("find(%q) = nil, but it was in the table throughout", versions[k][0].id())
							return
						}
						if e.id() != versions[k][0].id() {
							t.Errorf("find(%q) = an entry of %q", versions[k][0].id(), e.id())
							return
						}
						if e, _ := tb.find(maphash.String(seed, "never"), "never"); e != nil {
							t.Errorf("find(never) = %q", e.id())
							return
						}
					}
				}()
			}
			// The writer: churn of other ids (so the table grows, splits
			// and leaves deleted slots), and replacements of the stable
			// ones. versions is only appended to, and only the first
			// element is read by the readers, so the writer may grow it.
			var churn []*entry
			for i := range rounds {
				mu.Lock()
				e := testEntry(fmt.Sprintf("churn-%d", i))
				tb.put(maphash.String(seed, e.id()), e, seed)
				churn = append(churn, e)
				if i%3 == 0 && len(churn) > 100 {
					old := churn[0]
					churn = churn[1:]
					tb.remove(maphash.String(seed, old.id()), old)
				}
				if i%7 == 0 {
					k := i % stable
					e := testEntry(versions[k][0].id())
					tb.put(hashes[k], e, seed)
				}
				mu.Unlock()
			}
			stop.Store(true)
			wg.Wait()
			require.NoError(t, tb.check(seed, func(*entry) error { return nil }))
			t.Logf("depth %d, %d entries, %d inconclusive finds", tb.depth, tb.len(), inconclusive.Load())
		})
	}
}
