package ttlstore

import (
	"math"
	"slices"

	"github.com/google/btree"
)

// expiryTree orders the entries of one shard that can expire by expiry
// second, so that the earliest is found at once, and keeps the entries that
// cannot expire apart (never). Every entry of the shard is in exactly one of
// the two, so the live entries can be listed without visiting the expired
// ones, and the sweeper, which looks only at the ordered part, never sees an
// entry that cannot expire (R10).
//
// A shard's index (expiryIndex, expiry_far.go) is two trees: near, exact
// as this comment describes, and far, tagged farTag, whose keys round the
// expiry second down to farWidth so that expiries spread over a minute are
// inserted at one or two places (see "Spread expiries" below). In the far
// tree a leaf's soonest stays exact, but its keys, low, high and last are
// coarse, and only expiry_far.go reads it.
//
// The tree is three files: this one keeps the tree (placing and removing
// entries, finding a key's leaf), expiry_index_leaf.go the leaves and the
// key, expiry_index_scan.go what is read in order of expiry (the earliest
// second, pops, counts, listings), and expiry_index_check.go checks the
// structure for tests.
//
// # What it promises
//
//   - Exactness: min is the earliest expiry second of its entries;
//     popExpired(now, max) removes min(max, expired) entries, all expired
//     at now, and nothing else; countExpired, appendLive and soonest agree
//     with a map of entries to expiries (TestExpiryIndexAgainstModel). This
//     is what makes a sweep remove each document at its second (R1–R21).
//   - A bounded hold: a pop looks at the entries it takes and at most one
//     leaf's more, so a sweep holds its shard's lock for SweepBatch entries
//     and leafCap more loads.
//   - Memory: an entry costs the ordered part 8 bytes and its share of its
//     leaf's unused room and header and of the google/btree: about 10 bytes
//     when entries come in order of expiry, up to about 13 in random order,
//     however many share a second (TestExpiryIndexBytesPerEntry); a shard
//     of hintLeaves leaves or more adds 1.1 KiB of hints (1 KiB, and the
//     allocator's header, in its 1152-byte class).
//   - Inserts: an insert loads no entry but its own, except when it splits
//     a leaf (at most once every leafCap/4 inserts into it); it finds its
//     leaf without a search when the last insert at its expiry second left
//     the leaf there and it still holds the key's range, or when the key
//     goes in the last leaf (TestExpiryIndexHints).
//
// It is guarded by its shard's mutex; every method must be called with that
// mutex held (read methods with at least the read lock).
//
// # How
//
// The ordered part is a B+-tree of entry pointers whose leaves are not
// sorted inside. Entries have unique keys (expiry second, then _etag, then
// address), and each leaf holds up to leafCap entries whose keys lie in its
// range, from its low key to the next leaf's, in no order. A google/btree
// files the leaves by low key, the key beside the pointer so that a search
// loads no leaf. A leaf's low key is fixed once filed (it only goes down,
// for the first leaf, by refiling it), so that removals, which raise a
// leaf's least key, never touch the google/btree; the leaf keeps its
// earliest expiry second apart (soon), exact, with how many of its entries
// expire then, so that a removal looks at the leaf's other entries only
// when it takes the last of those. A leaf holds no expiry of its own
// entries: an entry's expiry is its _ts plus the offset the index keeps in
// the entry's pos (for an entry in never, pos is its place there, so
// removing one is a swap with the last).
//
// Memory is why it is a tree of entries rather than of seconds: a tree of
// one bucket per second cost 50 bytes more per entry when every entry had
// a second of its own. A full leaf that takes an entry after all of its
// own (entries written in order of expiry do: one TTL, or each second's in
// turn) stays full and a new leaf takes the entry; a full leaf that takes
// one in its midst splits in two where the entry goes, but no nearer
// either end than a quarter. A leaf emptied below a quarter by removals
// merges with a neighbour that has room for it, or moves to a smaller
// array. Leaves' arrays grow by doubling up to leafCap.
//
// Each leaf knows its whole range, low and high, so that a write can tell
// from the leaf alone that its key belongs there. That is what the hints
// are for: once a shard has hintLeaves leaves, the index remembers, for
// each expiry second modulo hintSlots, the leaf where the last insert at
// that second went, unless it went to the last leaf, which the index
// remembers apart and tries first. Writes whose expiries spread over a few dozen seconds
// (a few TTLs, or one TTL and a jitter) go each to the leaf that holds its
// second's newest entries, a different one each time: without the hints
// each searched the google/btree, a quarter of the index's time in
// BenchmarkExpirySpread's 60-second row at 1M documents. A hint costs a
// comparison when it misses, and it is never wrong: the leaf it names is
// used only if the key lies in that leaf's range and the leaf is still
// filed (unfiling empties a leaf).
//
// What needs an order within a leaf loads the leaf's entries (up to
// leafCap, independent loads that the processor overlaps): a split
// partitions the leaf's keys at the new one (or at a quarter, found by a
// quickselect); a removal of the last entry of a leaf's earliest second
// finds the next earliest; and the leaf where expired and live entries
// meet, if they do meet in a leaf, which popping, counting the expired and
// listing the live entries filter (listing 100k documents of which half
// have expired unswept costs about 1.3x what one bucket per second cost,
// for that filter in each of the 128 shards).
//
// # Spread expiries
//
// Inserts whose expiries spread over many seconds at once cost more than
// inserts that share one in an exact tree, which is why a shard keeps a
// far tree for expiries farLead or more after their _ts (expiry_far.go);
// what follows is the exact tree's cost, which near still pays for
// spread expiries under farLead seconds away. With one
// second (or seconds in order, each after the last) every insert of a
// shard goes to its last leaf, which stays in cache. With 60 seconds in
// turn each insert goes to its second's leaf, one of 60 a shard, which the
// writes in between have pushed out of cache. BenchmarkExpiryIndexSpread
// (the index alone, 1M entries) puts the difference at about 100 ns an
// insert: some 40 in splits, which come about once a second a shard while
// the seconds part ways (a second's leaf that also holds the next second's
// first entries splits when it fills), each loading 127 cold entries'
// keys and allocating both halves; some 30 in finding the leaf (the hint,
// the leaf's bounds); some 20 in appending to a cold array and growing it.
// Holding a second's entries in its hint's cache line, so that the leaf
// is touched once in seven inserts, measured no better, and was not kept.
// The garbage collector pays too: a leaf of one second points to entries
// written 60 apart, in as many spans, where a shared second's leaf points
// to entries written in turn. docs/performance.md has the measurements.
//
// # Costs
//
// n the entries and L (n/leafCap to 4n/leafCap) the leaves: insert O(1)
// when a hint or the last leaf takes it, else O(log L), and O(leafCap) for
// a split, which comes at most once every leafCap/4 inserts into a leaf;
// remove O(1) when a hint, the first or the last leaf or the last
// removal's leaf finds its leaf, else O(log L), and O(leafCap) for a
// recount of the leaf's earliest second when it takes the last entry of it
// (the entry's place in its leaf's array is in its header, lpos: a removal
// loads the array's slot and the last slot, whose entry takes the place,
// where searching the array by address loaded half of its 1016 bytes, some
// 5 cache misses and 270 instructions of an evicting write at the bound
// with a TTL, measured with cachegrind);
// the earliest expiry O(log L); popping k expired entries O(k + leafCap +
// log L); counting the expired entries O(log L + expired leaves +
// leafCap); listing the live entries O(live + log L + leafCap).
//
// # Why not in internal/
//
// The index reads the entry's header (ts, etag, pos) and address for every
// key it makes, inlined. In a package of its own it would take the entry
// as a type parameter, whose methods Go calls through a dictionary (every
// pointer type shares one shape), not inlined, for every key of every
// split, removal and filter; or the entry's header would have to become an
// exported type of that package, embedded in entry, which changes
// document.go and its callers. It keeps a narrow surface instead: the
// methods in these files, and never.items, which SetDefaultTTL and the
// invariants read.
type expiryTree struct {
	tree  *btree.BTreeG[leafRef] // the leaves, by low key
	hints *hintTable             // nil until the tree has held hintLeaves leaves
	last  *leaf                  // the last leaf when locate last searched; taken only while its high is maxKey and it is filed
	freed *leaf                  // the leaf of the last removal; taken only while it holds the key (see remove)
	never neverSet               // the entries that cannot expire
	tag   uint8                  // 0, or farTag in the far tree, whose keys are coarse: in every key, and every lpos
}

// leafRef is a leaf as the google/btree holds it: with its low key beside
// it, so that a search compares keys in the tree's nodes without loading
// the leaves.
type leafRef struct {
	low key
	l   *leaf
}

// neverSet is the entries that cannot expire, each at its pos.
type neverSet struct {
	items []*entry
}

// hintSlots is how many expiry seconds the hints remember, by the second
// modulo hintSlots: enough for a minute's worth of seconds in turn.
const hintSlots = 64

// hintLeaves is how many leaves a shard's tree must have before it keeps
// hints: up to 31 leaves fit in one node of the google/btree, where a
// search is short; and 32 leaves hold at least 992 entries (a collection
// of some 130k documents), usually 2,000 to 4,000, so that the hints' 1.1 KiB
// costs a byte an entry or less, usually under half.
const hintLeaves = 32

// hintTable is, for each slot, the expiry second of the last insert whose
// second fell in the slot and the leaf it went to.
type hintTable [hintSlots]struct {
	exp int64
	l   *leaf
}

// indexDegree is the google/btree's degree: it holds leaves, which are few.
const indexDegree = 16

func leafLess(a, b leafRef) bool { return a.low.less(b.low) }

// newExpiryTree returns an empty tree tagged tag: 0 for exact keys, farTag
// for the far tree's coarse ones (expiry_far.go).
func newExpiryTree(tag uint8) expiryTree {
	// A small free list: leaves come and go every leafCap/4 entries at
	// most, and the default list (32 nodes) would cost 256 bytes in each
	// of the numShards shards of every collection.
	tree := btree.NewWithFreeListG(indexDegree, leafLess, btree.NewFreeListG[leafRef](2))
	return expiryTree{tree: tree, tag: tag}
}

// locate returns the leaf whose range holds k; nil when k comes before
// every leaf's, or there are none. It tries the last leaf (entries written
// in order of expiry go there, and it stays in cache), then the hint for
// k's second, then the first leaf (the oldest entries of one TTL are
// there: rewriting documents in the order they were written removes each
// from it), and then searches.
func (x *expiryTree) locate(k key) *leaf {
	if t := x.last; t != nil && t.high == maxKey && t.items != nil && !k.less(t.low) {
		return t
	}
	if x.hints != nil {
		if h := &x.hints[x.slot(k.exp)]; h.exp == k.exp && h.l != nil && h.l.holds(k) {
			return h.l
		}
	}
	f, ok := x.tree.Min()
	if !ok {
		return nil
	}
	if f.l.holds(k) {
		return f.l
	}
	r, _ := x.tree.Max()
	x.last = r.l
	if !k.less(r.low) {
		return r.l
	}
	var l *leaf
	x.tree.DescendLessOrEqual(leafRef{low: k}, func(r leafRef) bool {
		l = r.l
		return false
	})
	return l
}

// hint remembers that the last insert at second exp went to l. The last
// leaf needs no hint: locate tries it first.
func (x *expiryTree) hint(exp int64, l *leaf) {
	if x.hints != nil && l.high != maxKey {
		h := &x.hints[x.slot(exp)]
		h.exp, h.l = exp, l
	}
}

// slot is the hint for a key whose exp is exp: in the far tree, whose
// keys' exps are multiples of farWidth, by bucket.
func (x *expiryTree) slot(exp int64) uint64 {
	if x.tag != 0 {
		exp >>= farShift
	}
	return uint64(exp) % hintSlots
}

// file adds l to the tree, under l.low; the caller has set the high of the
// leaf before it, if any, to l.low.
func (x *expiryTree) file(l *leaf) {
	x.tree.ReplaceOrInsert(leafRef{low: l.low, l: l})
	if x.hints == nil && x.tree.Len() >= hintLeaves {
		x.hints = new(hintTable)
	}
}

// unfile removes l from the tree, and empties it so that no hint takes it
// for a filed leaf. prev is the leaf before it, whose range takes over l's;
// nil if l is the first.
func (x *expiryTree) unfile(l, prev *leaf) {
	if prev != nil {
		prev.high = l.high
	}
	x.tree.Delete(leafRef{low: l.low})
	l.items = nil
	if x.freed == l {
		x.freed = nil
	}
}

// minLeaf returns the first leaf, nil if there is none.
func (x *expiryTree) minLeaf() *leaf {
	r, _ := x.tree.Min()
	return r.l
}

// next returns the leaf after l, nil if l is the last.
func (x *expiryTree) next(l *leaf) *leaf {
	if l.high == maxKey {
		return nil
	}
	r, _ := x.tree.Get(leafRef{low: l.high})
	return r.l
}

// prev returns the leaf before l, nil if l is the first (found without a
// search: the first leaf is where rewrites in the order of writing drain
// their old entries, merging on every removal once it is below a quarter).
func (x *expiryTree) prev(l *leaf) *leaf {
	if first, _ := x.tree.Min(); first.l == l {
		return nil
	}
	var prev *leaf
	x.tree.DescendLessOrEqual(leafRef{low: l.low}, func(r leafRef) bool {
		if r.l == l {
			return true
		}
		prev = r.l
		return false
	})
	return prev
}

// insert adds e, which expires at exp.
func (x *expiryTree) insert(e *entry, exp int64) {
	if exp == neverExpires {
		e.pos = int32(len(x.never.items))
		x.never.items = append(x.never.items, e)
		return
	}
	off := exp - e.ts
	if off < math.MinInt32 || off > math.MaxInt32 {
		// expiryAt makes exp ts + ttl, ttl an int32, or neverExpires.
		panic("ttlstore: expiry index: expiry not within an int32 of _ts")
	}
	e.pos = int32(off)
	k := keyOf(e, x.tag)
	l := x.locate(k)
	switch {
	case l == nil:
		l = x.insertFirst(k, e, exp)
	case len(l.items) < leafCap:
		l.add(k, e, exp, x.tag)
	case l.last.less(k):
		// Full, and e comes after all of its entries: e starts a
		// leaf of its own, which takes the rest of l's range.
		n := newLeaf(k, l.high, e, exp, x.tag)
		l.high = k
		x.file(n)
		l = n
	default:
		r := l.split(k, e, x.tag)
		x.file(r)
		if r.holds(k) {
			l = r
		}
	}
	x.hint(k.exp, l)
}

// insertFirst adds e, whose key k comes before every leaf's range and which
// expires at exp, and returns the leaf it went to: a leaf of its own if the first is full
// (entries written in reverse order of expiry) or there is none, else the
// first, refiled under k.
func (x *expiryTree) insertFirst(k key, e *entry, exp int64) *leaf {
	first := x.minLeaf()
	if first == nil || len(first.items) == leafCap {
		high := maxKey
		if first != nil {
			high = first.low
		}
		l := newLeaf(k, high, e, exp, x.tag)
		x.file(l)
		return l
	}
	x.tree.Delete(leafRef{low: first.low})
	first.low = k
	x.file(first)
	first.add(k, e, exp, x.tag)
	return first
}

// remove deletes e, which must have been inserted with expiry exp.
func (x *expiryTree) remove(e *entry, exp int64) {
	if exp == neverExpires {
		items := x.never.items
		last := len(items) - 1
		moved := items[last]
		items[e.pos] = moved
		moved.pos = e.pos
		items[last] = nil
		x.never.items = items[:last]
		return
	}
	// Removals often come in order of expiry (evictions of the oldest
	// documents, deletes of a queue's head): the next one's leaf is
	// often the last one's, which then saves a search of the tree.
	k := keyOf(e, x.tag)
	l := x.freed
	if l == nil || !l.holds(k) {
		l = x.locate(k)
		x.freed = l
	}
	i := -1
	if l != nil {
		// e's place, if lpos still holds it; else look for e by
		// address: the leaf's pointers are in one array.
		if p := int(e.lpos &^ x.tag); p < len(l.items) && l.items[p] == e {
			i = p
		} else {
			i = slices.Index(l.items, e)
		}
	}
	if i < 0 {
		panic("ttlstore: expiry index: removing an entry it does not hold")
	}
	switch {
	case l.remove(i, exp, x.tag):
		x.unfile(l, x.prev(l))
	case len(l.items) < leafCap/4:
		x.merge(l)
	}
}

// absorb moves the entries of from, the leaf after into, into it, and
// unfiles from.
func (x *expiryTree) absorb(into, from *leaf) {
	n := len(into.items)
	into.items = appendItems(into.items, from.items...)
	place(into.items, n, x.tag)
	into.soon.merge(from.soon)
	into.late = max(into.late, from.late)
	into.last = from.last
	x.unfile(from, into)
}

// merge moves the entries of l, a leaf emptied below a quarter, into a
// neighbour that has room for them, or the next leaf's into l; failing
// that, it moves them to a smaller array if theirs is mostly empty.
func (x *expiryTree) merge(l *leaf) {
	if next := x.next(l); next != nil && len(l.items)+len(next.items) <= leafCap {
		x.absorb(l, next)
		return
	}
	if prev := x.prev(l); prev != nil && len(prev.items)+len(l.items) <= leafCap {
		x.absorb(prev, l)
		return
	}
	if cap(l.items) > 4*len(l.items) {
		l.items = appendItems(make([]*entry, 0, 2*len(l.items)), l.items...)
	}
}
