package ttlstore

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"
	"unsafe"

	"github.com/google/btree"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// indexEntry makes an entry written at ts with the given _etag.
func indexEntry(id string, ts int64, etag uint64) *entry {
	e := testEntry(id)
	e.ts, e.etag = ts, etag
	return e
}

// spreads are ways for expiries to spread over entries written in turn: the
// i-th entry of n, written at second 1000, expires at spread(i, n).
var spreads = []struct {
	name   string
	spread func(rng *rand.Rand, i, n int) int64
}{
	{"one second", func(_ *rand.Rand, i, n int) int64 { return 4600 }},
	{"60 seconds in turn", func(_ *rand.Rand, i, n int) int64 { return 4600 + int64(i%60) }},
	{"each its own, ascending", func(_ *rand.Rand, i, n int) int64 { return 4600 + int64(i) }},
	{"each its own, descending", func(_ *rand.Rand, i, n int) int64 { return 4600 + int64(n-i) }},
	{"random in a day", func(rng *rand.Rand, i, n int) int64 { return 4600 + rng.Int64N(86400) }},
	{"random in a minute", func(rng *rand.Rand, i, n int) int64 { return 4600 + rng.Int64N(60) }},
}

// TestExpiryIndexAgainstModel runs random inserts, removes, pops, counts,
// listings and lookups of the soonest entry on an index and on a map of
// entries to expiries side by side, with expiries drawn so that many share
// a second or none do, in enough entries that leaves split and merge, and
// checks the index's structure after every change.
// TestEntryHeaderSize checks that the entry's header is still 48 bytes,
// lpos taking a byte of its padding.
func TestEntryHeaderSize(t *testing.T) {
	if entrySize != 48 {
		t.Fatalf("the entry header is %d bytes, want 48", entrySize)
	}
}

func TestExpiryIndexAgainstModel(t *testing.T) {
	t.Run("tree", func(t *testing.T) {
		runIndexModel(t, func() indexUnderTest { x := newExpiryTree(0); return &x }, true)
	})
	t.Run("near and far", func(t *testing.T) {
		runIndexModel(t, func() indexUnderTest { x := newExpiryIndex(); return &x }, false)
	})
}

// indexUnderTest is what TestExpiryIndexAgainstModel runs: an exact tree
// alone, or a shard's index of two.
type indexUnderTest interface {
	insert(e *entry, exp int64)
	remove(e *entry, exp int64)
	check() error
	min() int64
	ascend(fn func(e *entry, exp int64) bool)
	countExpired(now int64) int
	appendLive(now int64, out []*entry) []*entry
	popExpired(now int64, max int, out []slot) []slot
	soonest(except string, others map[string]struct{}) (*entry, int64)
	rebuild(entries []*entry, exp func(*entry) int64)
}

// runIndexModel is TestExpiryIndexAgainstModel on the indexes mk makes. A
// pop of the exact tree takes min(max, expired) entries; one of the index
// of two may take fewer while it drains far (at least one, or some of far,
// each time), and pops until none is expired end.
func runIndexModel(t *testing.T, mk func() indexUnderTest, exactPops bool) {
	maxOps := 600
	if raceRepeat(t) {
		maxOps = 60 // no goroutines here: repeats under -race add little
	}
	rapid.Check(t, func(rt *rapid.T) {
		x := mk()
		model := map[*entry]int64{}
		var held []*entry // the entries in model, for drawing one
		etag := uint64(0)
		now := int64(1000)
		width := rapid.SampledFrom([]int64{1, 3, 60, 1000, 10_000}).Draw(rt, "width")
		never := rapid.Float64Range(0, 0.2).Draw(rt, "never")
		check := func(op string) {
			if err := x.check(); err != nil {
				rt.Fatalf("after %s: %v", op, err)
			}
			want := neverExpires
			for _, exp := range model {
				want = min(want, exp)
			}
			if got := x.min(); got != want {
				rt.Fatalf("after %s: min %d, want %d", op, got, want)
			}
			n := 0
			x.ascend(func(e *entry, exp int64) bool {
				if model[e] != exp {
					rt.Fatalf("after %s: ascend gives %q at %d, want %d", op, e.key(), exp, model[e])
				}
				n++
				return true
			})
			if n != len(model) {
				rt.Fatalf("after %s: ascend gives %d entries, want %d", op, n, len(model))
			}
		}
		drop := func(e *entry) {
			delete(model, e)
			i := slices.Index(held, e)
			held[i] = held[len(held)-1]
			held = held[:len(held)-1]
		}
		for i := range rapid.IntRange(1, maxOps).Draw(rt, "ops") {
			switch op := rapid.IntRange(0, 9).Draw(rt, "op"); {
			case op < 5: // insert, in bursts so that leaves fill
				for range rapid.IntRange(1, 200).Draw(rt, "burst") {
					etag++
					e := indexEntry(fmt.Sprintf("d%d", etag), now-rapid.Int64Range(0, 2).Draw(rt, "age"), etag*numShards)
					exp := neverExpires
					if rapid.Float64Range(0, 1).Draw(rt, "p") >= never {
						exp = e.ts + 1 + rapid.Int64Range(0, width-1).Draw(rt, "ttl")
					}
					x.insert(e, exp)
					model[e] = exp
					held = append(held, e)
				}
				check("insert")
			case op < 7 && len(held) > 0: // remove
				for range rapid.IntRange(1, 100).Draw(rt, "burst") {
					if len(held) == 0 {
						break
					}
					e := held[rapid.IntRange(0, len(held)-1).Draw(rt, "victim")]
					x.remove(e, model[e])
					drop(e)
				}
				check("remove")
			case op == 7: // time passes, and a sweep pops a batch
				now += rapid.Int64Range(0, width).Draw(rt, "step")
				max := rapid.IntRange(1, 300).Draw(rt, "max")
				expired := 0
				for _, exp := range model {
					if isExpired(exp, now) {
						expired++
					}
				}
				if got := x.countExpired(now); got != expired {
					rt.Fatalf("op %d: countExpired(%d) = %d, want %d", i, now, got, expired)
				}
				live := x.appendLive(now, nil)
				if len(live) != len(model)-expired {
					rt.Fatalf("op %d: appendLive gives %d, want %d", i, len(live), len(model)-expired)
				}
				for _, e := range live {
					if isExpired(model[e], now) {
						rt.Fatalf("op %d: appendLive gives %q, expired at %d", i, e.key(), model[e])
					}
				}
				// A pop; and, one time in two, a sweep: pops until
				// nothing has expired, each a batch.
				sweep := rapid.Bool().Draw(rt, "sweep")
				// Each round pops one expired entry at least, or drains
				// one far leaf (one entry at least) to near: every
				// entry drained once and every expired one popped once
				// bound the rounds. (len(model)+2 did not: a sweep with
				// max 1 of 905 entries, nearly all expired, some in far,
				// took 907 rounds and more.)
				rounds := 2*len(model) + 2
				for round := 0; ; round++ {
					popped := x.popExpired(now, max, nil)
					if exactPops && len(popped) != min(max, expired) || len(popped) > min(max, expired) {
						rt.Fatalf("op %d: popped %d of %d expired, max %d", i, len(popped), expired, max)
					}
					for _, sl := range popped {
						if exp, ok := model[sl.e]; !ok || exp != sl.exp || !isExpired(exp, now) {
							rt.Fatalf("op %d: popped %q at %d (model: %d, %v) at %d", i, sl.e.key(), sl.exp, exp, ok, now)
						}
						drop(sl.e)
					}
					expired -= len(popped)
					check("popExpired")
					if !sweep || !isExpired(x.min(), now) {
						break
					}
					if round > rounds {
						rt.Fatalf("op %d: %d pops of %d have not taken the %d expired", i, round, max, expired)
					}
				}
				if sweep && expired != 0 {
					rt.Fatalf("op %d: a sweep left %d expired", i, expired)
				}
			case op == 8 && len(held) > 0: // the soonest, but for one
				except := held[rapid.IntRange(0, len(held)-1).Draw(rt, "except")].key()
				var others map[string]struct{} // a batch's other ids
				for range rapid.IntRange(0, 3).Draw(rt, "others") {
					if others == nil {
						others = map[string]struct{}{}
					}
					others[held[rapid.IntRange(0, len(held)-1).Draw(rt, "other")].key()] = struct{}{}
				}
				want := neverExpires
				for e, exp := range model {
					if _, other := others[e.key()]; e.key() != except && !other {
						want = min(want, exp)
					}
				}
				v, exp := x.soonest(except, others)
				switch {
				case want == neverExpires && v != nil:
					rt.Fatalf("op %d: soonest but %q is %q, want none", i, except, v.key())
				case want != neverExpires && (v == nil || exp != want || model[v] != want || excepted(v.key(), except, others)):
					rt.Fatalf("op %d: soonest but %q is %v at %d, want one at %d", i, except, v != nil, exp, want)
				}
			case op == 9: // a new DefaultTTL: every expiry moves
				shift := rapid.Int64Range(-5, 5).Draw(rt, "shift")
				for e, exp := range model {
					if exp != neverExpires && exp-e.ts+shift >= 1 {
						model[e] = exp + shift
					}
				}
				x.rebuild(held, func(e *entry) int64 { return model[e] })
				check("rebuild")
			}
		}
	})
}

// indexBytes is the heap the ordered part of x holds: its leaves and their
// arrays, its hints, and the google/btree's nodes (counted as full:
// 2*indexDegree-1 pointers and as many children, and the node). Objects
// that hold pointers and are over 512 bytes count the allocator's header.
func indexBytes(x *expiryTree) int {
	b := 0
	x.tree.Ascend(func(r leafRef) bool {
		b += allocSize(int(unsafe.Sizeof(*r.l))) + itemsBytes(cap(r.l.items))
		return true
	})
	if x.hints != nil {
		b += allocSize(int(unsafe.Sizeof(*x.hints)) + mallocHeader)
	}
	perNode := allocSize(64) + allocSize((2*indexDegree-1)*int(unsafe.Sizeof(leafRef{}))) + allocSize(2*indexDegree*8)
	nodes := x.tree.Len()/(indexDegree-1) + 1
	return b + nodes*perNode
}

// TestExpiryIndexBytesPerEntry checks that an entry costs the index about
// the same however the expiries spread: at most 16 bytes, and 10.5 when the
// entries come in order of expiry, whether they share seconds or not (9.7,
// and 10.1 for 60 seconds in turn), in an exact tree and in a far one
// (9.7 for each, but 10.6 for descending expiries). Leaves of 128 entries, whose 1024-byte
// arrays took the 1152 class with the allocator's header, cost 10.6 and
// 11.1, counted as indexBytes counts now.
func TestExpiryIndexBytesPerEntry(t *testing.T) {
	if raceRepeat(t) {
		t.Skip("deterministic, and checked by the first run")
	}
	const n = 100_000
	for _, tag := range []uint8{0, farTag} {
		for _, sp := range spreads {
			t.Run(fmt.Sprintf("tag=%d/%s", tag, sp.name), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(1, 2))
				x := newExpiryTree(tag)
				for i := range n {
					e := indexEntry(fmt.Sprint(i), 1000, uint64(i+1)*numShards)
					x.insert(e, sp.spread(rng, i, n))
				}
				require.NoError(t, x.check())
				perEntry := float64(indexBytes(&x)) / n
				t.Logf("%.1f bytes an entry, %d leaves", perEntry, x.tree.Len())
				require.LessOrEqual(t, perEntry, 16.0)
				switch {
				case sp.name == "random in a day" || sp.name == "random in a minute":
				case tag != 0 && sp.name == "each its own, descending":
					// Buckets in descending order, each
					// ascending inside: 10.6.
					require.LessOrEqual(t, perEntry, 11.0)
				default:
					require.LessOrEqual(t, perEntry, 10.5)
				}
			})
		}
	}
}

// hintedIndex returns an index of n entries written at second 1000 whose
// expiries take the 60 seconds from 4600 in turn, and ten that never
// expire: enough leaves (n of 3,000 or more) for it to keep hints.
func hintedIndex(t *testing.T, n int) (*expiryTree, []*entry) {
	t.Helper()
	x := newExpiryTree(0)
	es := make([]*entry, 0, n+10)
	for i := range n + 10 {
		e := indexEntry(fmt.Sprint(i), 1000, uint64(i+1)*numShards)
		exp := 4600 + int64(i%60)
		if i >= n {
			exp = neverExpires
		}
		x.insert(e, exp)
		es = append(es, e)
	}
	require.NoError(t, x.check())
	require.GreaterOrEqual(t, x.tree.Len(), hintLeaves)
	require.NotNil(t, x.hints)
	return &x, es
}

// leaves returns x's leaves in order.
func leaves(x *expiryTree) []*leaf {
	var ls []*leaf
	x.tree.Ascend(func(r leafRef) bool {
		ls = append(ls, r.l)
		return true
	})
	return ls
}

// TestExpiryIndexCheckCatches breaks, in an index otherwise well formed,
// each promise check makes, one at a time, and checks that check reports
// it: a check that cannot fail would make every test that runs it (the
// invariants after every mutating test) prove nothing about the index.
func TestExpiryIndexCheckCatches(t *testing.T) {
	cases := []struct {
		name    string
		breakIt func(x *expiryTree, ls []*leaf, es []*entry)
		want    string
	}{
		{"a leaf over leafCap", func(x *expiryTree, ls []*leaf, _ []*entry) {
			ls[3].items = append(make([]*entry, 0, 2*leafCap), ls[3].items...)
		}, "in room for"},
		{"an empty leaf filed", func(x *expiryTree, ls []*leaf, _ []*entry) {
			ls[3].items = ls[3].items[:0]
		}, "holds 0 entries"},
		{"a leaf filed under a key not its low", func(x *expiryTree, ls []*leaf, _ []*entry) {
			ls[3].low.etag--
		}, "is filed under"},
		{"a leaf's low after its least key", func(x *expiryTree, ls []*leaf, _ []*entry) {
			x.tree.Delete(leafRef{low: ls[3].low})
			ls[3].low = ls[3].last
			x.tree.ReplaceOrInsert(leafRef{low: ls[3].low, l: ls[3]})
		}, "is after its least"},
		{"a leaf's last not before its high", func(x *expiryTree, ls []*leaf, _ []*entry) {
			ls[3].last = ls[3].high
		}, "is not before its high"},
		{"a leaf's high short of the next leaf's low", func(x *expiryTree, ls []*leaf, _ []*entry) {
			ls[3].high = ls[3].last
			ls[3].high.addr++
		}, "is not the next leaf's low"},
		{"the last leaf's high short of maxKey", func(x *expiryTree, ls []*leaf, _ []*entry) {
			l := ls[len(ls)-1]
			l.high = l.last
			l.high.addr++
		}, "the last leaf's high"},
		{"a leaf's soonest miscounted", func(x *expiryTree, ls []*leaf, _ []*entry) {
			ls[3].soon.n++
		}, "soonest"},
		{"a leaf's late before an entry's expiry", func(x *expiryTree, ls []*leaf, _ []*entry) {
			ls[3].late = ls[3].soon.exp - 1
		}, "late"},
		{"an entry after its leaf's last", func(x *expiryTree, ls []*leaf, _ []*entry) {
			ls[3].last = ls[3].least(0)
		}, "after its leaf's last"},
		{"a hint naming a leaf not filed", func(x *expiryTree, ls []*leaf, es []*entry) {
			x.hints[5].l = &leaf{low: ls[3].low, items: []*entry{es[0]}}
		}, "not filed"},
		{"last naming a leaf not filed", func(x *expiryTree, ls []*leaf, es []*entry) {
			x.last = &leaf{low: ls[len(ls)-1].low, high: maxKey, items: []*entry{es[0]}}
		}, "not the last leaf"},
		{"an entry that never expires away from its pos", func(x *expiryTree, _ []*leaf, _ []*entry) {
			x.never.items[2].pos = 7
		}, "never expire"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x, es := hintedIndex(t, 5000)
			c.breakIt(x, leaves(x), es)
			err := x.check()
			require.Error(t, err)
			require.Contains(t, err.Error(), c.want)
		})
	}
}

// TestExpiryIndexHints checks the hints' promises: an insert or removal at
// a second an insert went to last finds its leaf without the google/btree,
// and so does one after every key; a hint that names the wrong leaf, or a
// leaf no longer filed, is not taken; and after a rebuild no hint, nor
// last, names a leaf of the old tree.
func TestExpiryIndexHints(t *testing.T) {
	t.Run("found without a search", func(t *testing.T) {
		x, _ := hintedIndex(t, 5000)
		for s := int64(4600); s < 4660; s++ {
			// A key after the second's last entry, as the next write at
			// it would have: the hint finds its leaf with the tree
			// emptied.
			k := key{exp: s, etag: math.MaxUint64 - 1}
			var want *leaf
			x.tree.DescendLessOrEqual(leafRef{low: k}, func(r leafRef) bool {
				want = r.l
				return false
			})
			tree := x.tree
			x.tree = btree.NewG(indexDegree, leafLess)
			got := x.locate(k)
			x.tree = tree
			require.NotNil(t, got, "second %d: no hint", s)
			require.Same(t, want, got, "second %d", s)
		}
	})
	t.Run("the last leaf found without a search", func(t *testing.T) {
		x, _ := hintedIndex(t, 5000)
		k := key{exp: 4700}
		want := x.locate(k) // searches, and remembers the last leaf
		tree := x.tree
		x.tree = btree.NewG(indexDegree, leafLess)
		got := x.locate(k)
		x.tree = tree
		require.NotNil(t, got)
		require.Same(t, want, got)
	})
	t.Run("never wrong", func(t *testing.T) {
		x, es := hintedIndex(t, 5000)
		ls := leaves(x)
		for i := range x.hints {
			// Every hint names the first leaf, or one no longer filed.
			x.hints[i].l = ls[0]
			if i%2 == 1 {
				x.hints[i].l = &leaf{low: key{}, high: maxKey}
			}
		}
		for _, e := range es[:5000] {
			k := keyOf(e, 0)
			got := x.locate(k)
			require.True(t, got.holds(k), "%q went to a leaf whose range does not hold it", e.key())
		}
		for i := range 2000 {
			e := indexEntry(fmt.Sprint("more", i), 1001, uint64(10_000+i)*numShards)
			x.insert(e, 4600+int64(i%60))
		}
		for _, e := range es[:2500] {
			x.remove(e, expiryOf(e))
		}
		require.NoError(t, x.check())
	})
	t.Run("cleared by a rebuild", func(t *testing.T) {
		x, es := hintedIndex(t, 5000)
		require.NotNil(t, x.locate(maxKey), "last names the last leaf")
		x.rebuild(es[:100], func(e *entry) int64 { return 9000 })
		require.NoError(t, x.check())
		var got []*entry
		x.ascend(func(e *entry, exp int64) bool {
			require.Equal(t, int64(9000), exp)
			got = append(got, e)
			return true
		})
		require.ElementsMatch(t, es[:100], got, "every entry rebuilt is in the tree")
	})
}

// BenchmarkExpiryIndexSpread inserts into the index alone what
// BenchmarkExpirySpread's collections insert: n entries of 90-byte
// documents written at one second, an hour before they expire (so in the
// far tree, expiry_far.go; tree=exact inserts into exact trees alone, as
// before the far tree), each to one of numShards indexes drawn
// at random with the _etags of each in turn, expiring at one second, at 60
// in turn, or each at its own. ns/op is one insert. Without the JSON, the
// table and the garbage collector (off while the timer runs), it shows
// what a spread costs the index, with a tenth of the collection's noise.
func BenchmarkExpiryIndexSpread(b *testing.B) {
	spreads := []struct {
		name string
		exp  func(i int) int64
	}{
		{"shared", func(int) int64 { return 4600 }},
		{"60s", func(i int) int64 { return 4600 + int64(i%60) }},
		{"distinct", func(i int) int64 { return 4600 + int64(i) }},
	}
	for _, n := range []int{100_000, 1_000_000} {
		for _, sp := range spreads {
			b.Run(fmt.Sprintf("spread=%s/n=%dk", sp.name, n/1000), func(b *testing.B) {
				benchIndexSpread(b, n, sp.exp, func() indexUnderTest { x := newExpiryIndex(); return &x })
			})
			b.Run(fmt.Sprintf("spread=%s/n=%dk/tree=exact", sp.name, n/1000), func(b *testing.B) {
				benchIndexSpread(b, n, sp.exp, func() indexUnderTest { x := newExpiryTree(0); return &x })
			})
		}
	}
}

// benchIndexSpread is a row of BenchmarkExpiryIndexSpread: n inserts into
// numShards indexes that mk makes.
func benchIndexSpread(b *testing.B, n int, exp func(i int) int64, mk func() indexUnderTest) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	rng := rand.New(rand.NewPCG(1, 2))
	shards := make([]uint8, n)
	for i := range shards {
		shards[i] = uint8(rng.IntN(numShards))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		runtime.GC()
		es := make([]*entry, n)
		for i := range es {
			es[i], _ = newEntry(90)
			es[i].ts = 1000
		}
		var xs [numShards]indexUnderTest
		var etags [numShards]uint64
		for i := range xs {
			xs[i] = mk()
		}
		b.StartTimer()
		for i, e := range es {
			s := shards[i]
			etags[s]++
			e.etag = etags[s]
			xs[s].insert(e, exp(i))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/op")
}
