package ttlstore

import (
	"math"
	"slices"

	"github.com/google/btree"
)

// expiryIndex orders the entries of one shard that can expire by expiry
// second, so that the earliest is found at once, and keeps the entries that
// cannot expire apart (never). Every entry of the shard is in exactly one of
// the two, so the live entries can be listed without visiting the expired
// ones, and the sweeper, which looks only at the ordered part, never sees an
// entry that cannot expire (R10).
//
// The ordered part is a B+-tree of entry pointers whose leaves are not
// sorted inside. Entries have unique keys (expiry second, then _etag, then
// address: see key), and each leaf holds up to leafCap entries whose keys
// lie from its low key to the next leaf's low key, in no order. A
// google/btree files the leaves by low key, the key beside the pointer so
// that a search loads no leaf. A leaf's low key is fixed once filed (it only
// goes down, for the first leaf, by refiling it), so that removals, which
// raise a leaf's least key, never touch the google/btree; the leaf keeps its
// earliest expiry second apart (soon), exact, with how many of its entries
// expire then, so that a removal looks at the leaf's other entries only when
// it takes the last of those. A leaf holds no expiry of its own entries: an
// entry's expiry is its _ts plus the offset the index keeps in the entry's
// pos (for an entry in never, pos is its place there, so removing one is a
// swap with the last).
//
// Memory is why it is a tree of entries rather than of seconds: an entry
// costs its pointer in a leaf, 8 bytes, plus its share of the leaf's unused
// room, of the leaf's header (96 bytes) and of its 32 bytes in the
// google/btree, however the expiries spread (a tree of one bucket per second
// cost 50 bytes more per entry when every entry had a second of its own). A
// full leaf that takes an entry after all of its own (entries written in
// order of expiry do: one TTL, or each second's in turn) stays full and a
// new leaf takes the entry, so such entries cost about 9.5 bytes; a full
// leaf that takes one in its midst splits in two where the entry goes, but
// no nearer either end than a quarter (about 13 bytes an entry for entries
// written in random order of expiry). A leaf emptied below a quarter by
// removals merges with a neighbour that has room for it, or moves to a
// smaller array. Leaves' arrays grow by doubling up to leafCap.
//
// Leaves are unsorted so that a write loads no entry but its own: finding
// its leaf compares keys in the google/btree, and it appends. What needs an
// order within a leaf loads the leaf's entries (up to leafCap, independent
// loads that the processor overlaps): a split partitions the leaf's keys at
// the new one (sorts them if that is nearer an end than a quarter); a
// removal of the last entry of a leaf's earliest second finds the next
// earliest; and the leaf where expired and live entries meet, if they do
// meet in a leaf, which popping, counting the expired and listing the live
// entries filter (listing 100k documents of which half have expired unswept
// costs about 1.3x what one bucket per second cost, for that filter in each
// of the 128 shards). That time is the price of the memory: writes that fill
// many leaves in turn (60 expiry seconds in turn, say) split a leaf every 32
// to 128 writes, at a few microseconds each.
//
// It is guarded by its shard's mutex; every method must be called with that
// mutex held (read methods with at least the read lock).
//
// Costs, n the entries and L (n/leafCap to 4n/leafCap) the leaves: insert
// O(log L), and O(leafCap) for a split (O(leafCap log leafCap) near an end),
// which comes at most once every leafCap/4 inserts into a leaf; remove O(log
// L + leafCap) (it finds the entry by address in its leaf's array); the
// earliest expiry O(log L); popping k expired entries O(k + leafCap + log
// L); counting the expired entries O(log L + expired leaves + leafCap);
// listing the live entries O(live + log L + leafCap).
type expiryIndex struct {
	tree  *btree.BTreeG[leafRef] // the leaves, by low key
	never neverSet               // the entries that cannot expire
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

// indexDegree is the google/btree's degree: it holds leaves, which are few.
const indexDegree = 16

func leafLess(a, b leafRef) bool { return a.low.less(b.low) }

func newExpiryIndex() expiryIndex {
	// A small free list: leaves come and go every leafCap/4 entries at
	// most, and the default list (32 nodes) would cost 256 bytes in each
	// of the numShards shards of every collection.
	tree := btree.NewWithFreeListG(indexDegree, leafLess, btree.NewFreeListG[leafRef](2))
	return expiryIndex{tree: tree}
}

// leafFor returns the leaf where k belongs: the last whose low key is not
// after k; nil when k comes before them all.
func (x *expiryIndex) leafFor(k key) *leaf {
	var l *leaf
	x.tree.DescendLessOrEqual(leafRef{low: k}, func(r leafRef) bool {
		l = r.l
		return false
	})
	return l
}

// file adds l to the tree, under l.low.
func (x *expiryIndex) file(l *leaf) { x.tree.ReplaceOrInsert(leafRef{low: l.low, l: l}) }

// unfile removes l from the tree.
func (x *expiryIndex) unfile(l *leaf) {
	x.tree.Delete(leafRef{low: l.low})
	l.items = nil
}

// minLeaf returns the first leaf, nil if there is none.
func (x *expiryIndex) minLeaf() *leaf {
	r, _ := x.tree.Min()
	return r.l
}

// insert adds e, which expires at exp.
func (x *expiryIndex) insert(e *entry, exp int64) {
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
	k := keyOf(e)
	r, ok := x.tree.Max()
	l := r.l
	switch {
	case !ok:
		x.addLeaf(k, e)
		return
	case k.less(r.low):
		// Not in the last leaf (entries written in order of expiry
		// are): look it up.
		if l = x.leafFor(k); l == nil {
			// Before every leaf: e starts a leaf of its own if the
			// first is full (entries written in reverse order of
			// expiry), else the first is filed under k now.
			if l = x.minLeaf(); len(l.items) == leafCap {
				x.addLeaf(k, e)
				return
			}
			x.tree.Delete(leafRef{low: l.low})
			l.low = k
			x.file(l)
		}
	}
	switch {
	case len(l.items) < leafCap:
		l.items = appendItems(l.items, e)
		l.soon.add(k.exp)
		if l.last.less(k) {
			l.last = k
		}
	case l.last.less(k):
		// Full, and e comes after all of its entries: e starts a
		// leaf of its own.
		x.addLeaf(k, e)
	default:
		x.split(l, k, e)
	}
}

// addLeaf files a new leaf holding e, whose key is k.
func (x *expiryIndex) addLeaf(k key, e *entry) {
	l := &leaf{low: k, last: k, items: make([]*entry, 1, 8), soon: soonest{exp: k.exp, n: 1}}
	l.items[0] = e
	x.file(l)
}

// remove deletes e, which must have been inserted with expiry exp.
func (x *expiryIndex) remove(e *entry, exp int64) {
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
	k := keyOf(e)
	l := x.leafFor(k)
	// Look for e by address: the leaf's pointers are in one array.
	i := slices.Index(l.items, e)
	if i < 0 {
		panic("ttlstore: expiry index: removing an entry it does not hold")
	}
	last := len(l.items) - 1
	l.items[i] = l.items[last]
	l.items[last] = nil
	l.items = l.items[:last]
	switch {
	case last == 0:
		x.unfile(l)
		return
	case k.exp == l.soon.exp:
		if l.soon.n--; l.soon.n == 0 {
			l.recount() // the last to expire at its earliest second
		}
	}
	if len(l.items) < leafCap/4 {
		x.merge(l)
	}
}

// absorb moves the entries of from, the leaf after into, into it, and
// unfiles from.
func (x *expiryIndex) absorb(into, from *leaf) {
	into.items = appendItems(into.items, from.items...)
	into.soon.merge(from.soon)
	into.last = from.last
	x.unfile(from)
}

// merge moves the entries of l, a leaf emptied below a quarter, into a
// neighbour that has room for them, or the next leaf's into l; failing
// that, it moves them to a smaller array if theirs is mostly empty.
func (x *expiryIndex) merge(l *leaf) {
	var prev, next *leaf
	x.tree.AscendGreaterOrEqual(leafRef{low: l.low}, func(r leafRef) bool {
		if r.l == l {
			return true
		}
		next = r.l
		return false
	})
	if next != nil && len(l.items)+len(next.items) <= leafCap {
		x.absorb(l, next)
		return
	}
	x.tree.DescendLessOrEqual(leafRef{low: l.low}, func(r leafRef) bool {
		if r.l == l {
			return true
		}
		prev = r.l
		return false
	})
	if prev != nil && len(prev.items)+len(l.items) <= leafCap {
		x.absorb(prev, l)
		return
	}
	if cap(l.items) > 4*len(l.items) {
		l.items = appendItems(make([]*entry, 0, 2*len(l.items)), l.items...)
	}
}
