package ttlstore

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// fullLeaf returns a leaf of leafCap entries written at second 1000, the
// i-th expiring at exp(i) with _etag i+1, with the range [low, high) of
// its keys, and its entries.
func fullLeaf(exp func(i int) int64) (*leaf, []*entry) {
	es := make([]*entry, leafCap)
	l := &leaf{low: maxKey, high: maxKey, items: make([]*entry, 0, leafCap)}
	for i := range es {
		e := indexEntry(fmt.Sprint(i), 1000, uint64(i+1))
		e.pos = int32(exp(i) - e.ts)
		es[i] = e
		k := keyOf(e, 0)
		l.low = minKey(l.low, k)
		l.add(k, e, expiryOf(e), 0)
	}
	return l, es
}

// TestLeafSplit splits full leaves, whose expiries share one second, span
// a few or many, at a new entry drawn anywhere in them, and checks what
// split promises: every entry is kept, once; the parts are in key order
// and their ranges take l's, the first still under l's low key; each part
// keeps a quarter of the entries or more; where that allows, the cut is
// just after the new entry, which stays in l with the entries before it;
// each part's last and soonest are exact or bounds as check wants them.
func TestLeafSplit(t *testing.T) {
	if raceRepeat(t) {
		t.Skip("one goroutine: a repeat under -race finds nothing the first run did not (see raceRepeat)")
	}
	rapid.Check(t, func(rt *rapid.T) {
		width := rapid.SampledFrom([]int64{1, 2, 60, 100_000}).Draw(rt, "width")
		exps := rapid.SliceOfN(rapid.Int64Range(0, width-1), leafCap, leafCap).Draw(rt, "exps")
		l, es := fullLeaf(func(i int) int64 { return 2000 + exps[i] })
		low, high := l.low, l.high
		// The new entry: any second within the leaf's, an _etag that
		// puts it among or after the others of that second.
		e := indexEntry("new", 1000, rapid.Uint64Range(0, leafCap+1).Draw(rt, "etag"))
		e.pos = int32(2000 + rapid.Int64Range(0, width-1).Draw(rt, "exp") - e.ts)
		k := keyOf(e, 0)
		if !k.less(l.last) || k.less(low) {
			rt.Skip("not within the leaf's keys")
		}
		rank := 0
		for _, f := range es {
			if keyOf(f, 0).less(k) {
				rank++
			}
		}

		r := l.split(k, e, 0)

		all := append(slices.Clone(l.items), r.items...)
		require.ElementsMatch(rt, append(es, e), all, "the parts hold every entry once")
		q := leafCap / 4
		require.GreaterOrEqual(rt, len(l.items), q)
		require.GreaterOrEqual(rt, len(r.items), q)
		if rank+1 >= q && rank+1 <= leafCap+1-q {
			require.Equal(rt, rank+1, len(l.items), "cut just after the new entry")
			require.Equal(rt, k, l.last)
		}
		require.Equal(rt, low, l.low, "l keeps its low key")
		require.Equal(rt, r.low, l.high, "r takes up where l ends")
		require.Equal(rt, high, r.high, "r ends where l did")
		for _, part := range []*leaf{l, r} {
			var soon soonest
			for _, f := range part.items {
				fk := keyOf(f, 0)
				require.False(rt, fk.less(part.low), "a key before its part's low")
				require.False(rt, part.last.less(fk), "a key after its part's last")
				require.True(rt, fk.less(part.high), "a key not before its part's high")
				soon.add(fk.exp)
			}
			require.Equal(rt, soon, part.soon)
		}
		require.Equal(rt, r.low, r.least(0), "r's low is its least key")
	})
}

// TestLeafSplitAtBucketEnd checks that a full leaf of the far tree whose
// last entries are of a later bucket than a new entry's splits just after
// the new entry, however few come after it, so that neither part holds
// two buckets: a minute's spread across a bucket's end otherwise split
// every 97 inserts into the earlier bucket. Its exact-tree twin (seconds
// for buckets) still splits at a quarter.
func TestLeafSplitAtBucketEnd(t *testing.T) {
	for _, tag := range []uint8{farTag, 0} {
		const early, late = 118, 9 // entries of each bucket, late ones written among the early
		l := &leaf{low: maxKey, high: maxKey, items: make([]*entry, 0, leafCap)}
		for i := range early + late {
			e := indexEntry(fmt.Sprint(i), 1000, uint64(i+1))
			exp := int64(4352 + farWidth - 10 + i%3) // the early bucket's last seconds
			if i%14 == 13 {
				exp = 4352 + 2*farWidth - 10 // the late bucket
			}
			if tag == 0 {
				exp = 5000 + int64(i%14/13) // seconds for buckets
			}
			e.pos = int32(exp - e.ts)
			k := keyOf(e, tag)
			l.low = minKey(l.low, k)
			l.add(k, e, exp, tag)
		}
		require.Len(t, l.items, leafCap)
		e := indexEntry("new", 1000, leafCap+1)
		e.pos = int32(l.least(tag).exp - e.ts)
		r := l.split(keyOf(e, tag), e, tag)
		if tag == 0 {
			require.Equal(t, leafCap/4, len(r.items), "the exact tree keeps the quarter")
			continue
		}
		require.Len(t, r.items, late, "the later bucket alone in the new leaf")
		for _, f := range r.items {
			require.Equal(t, int64(4352+farWidth), keyOf(f, tag).exp)
		}
		require.Equal(t, keyOf(e, tag), l.last)
	}
	t.Run("nothing after the new entry", func(t *testing.T) {
		// A full far leaf whose last, a bound, is after every entry
		// (removals leave it so), and a new entry after all of them:
		// the quarter split, not one that leaves the new leaf empty.
		l, _ := fullLeaf(func(i int) int64 { return 4352 + int64(i%3) })
		for _, f := range l.items {
			f.lpos |= farTag
		}
		l.low = l.least(farTag)
		l.last = key{exp: 4352 + farWidth}
		e := indexEntry("new", 1000, leafCap+1)
		e.pos = int32(4353 - e.ts)
		r := l.split(keyOf(e, farTag), e, farTag)
		require.LessOrEqual(t, len(l.items), leafCap)
		require.Equal(t, leafCap/4, len(r.items))
	})
}

// TestNthKey checks the quickselect against a sort, on keys that share
// seconds and _etags (the address makes them unique).
func TestNthKey(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, leafCap+1).Draw(rt, "n")
		all := make([]keyed, n)
		for i := range all {
			all[i].k = key{
				exp:  rapid.Int64Range(0, 3).Draw(rt, "exp"),
				etag: rapid.Uint64Range(0, 3).Draw(rt, "etag"),
				addr: uintptr(i),
			}
		}
		sorted := slices.Clone(all)
		slices.SortFunc(sorted, func(a, b keyed) int {
			if a.k.less(b.k) {
				return -1
			}
			return 1
		})
		i := rapid.IntRange(0, n-1).Draw(rt, "i")
		require.Equal(rt, sorted[i].k, nthKey(all, i))
	})
}

// TestLeafRemoveKeepsSoonest removes entries from a leaf one by one, in an
// order drawn at random, and checks its soonest after each against a
// count of the entries left.
func TestLeafRemoveKeepsSoonest(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		exps := rapid.SliceOfN(rapid.Int64Range(0, 5), leafCap, leafCap).Draw(rt, "exps")
		l, _ := fullLeaf(func(i int) int64 { return 2000 + exps[i] })
		for len(l.items) > 1 {
			i := rapid.IntRange(0, len(l.items)-1).Draw(rt, "i")
			require.False(rt, l.remove(i, expiryOf(l.items[i]), 0))
			var soon soonest
			for _, f := range l.items {
				soon.add(expiryOf(f))
			}
			require.Equal(rt, soon, l.soon)
		}
		require.True(rt, l.remove(0, expiryOf(l.items[0]), 0), "the last entry empties the leaf")
	})
}

// TestItemsBytes checks itemsBytes and itemsCap against the runtime: the
// heap that arrays of n entry pointers take, for every n up to leafCap and
// for leafCap+1, whose array would be 1024 bytes and take the 1152 size
// class (the allocator's header); and that the room itemsCap gives fills
// the same class.
func TestItemsBytes(t *testing.T) {
	if raceRepeat(t) {
		t.Skip("deterministic, and checked by the first run")
	}
	const k = 256 // arrays a measure
	arrays := make([][]*entry, k)
	measure := func(n int) float64 {
		// The least of three measures: an allocation elsewhere in the
		// process can only add to one.
		least := math.Inf(1)
		for range 3 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for i := range arrays {
				arrays[i] = make([]*entry, n)
			}
			runtime.ReadMemStats(&after)
			least = min(least, float64(after.TotalAlloc-before.TotalAlloc)/k)
		}
		return least
	}
	for n := 1; n <= leafCap+1; n++ {
		got := measure(n)
		if want := float64(itemsBytes(n)); got != want {
			t.Fatalf("an array of %d pointers takes %.1f bytes, itemsBytes says %v", n, got, want)
		}
		if n > leafCap {
			continue
		}
		c := itemsCap(n)
		if c < n || c > leafCap || itemsBytes(c) != itemsBytes(n) {
			t.Fatalf("itemsCap(%d) = %d: not in [%d, leafCap] and the same class (%d bytes, %d)", n, c, n, itemsBytes(c), itemsBytes(n))
		}
	}
	require.Equal(t, 1024, itemsBytes(leafCap), "a full leaf's array fills the 1024 class")
	require.Equal(t, 1152, itemsBytes(leafCap+1))
}
