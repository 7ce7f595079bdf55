package ttlstore

import (
	"fmt"
	"math"
	"slices"
	"unsafe"

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

// leafCap is the most entries a leaf holds: its array is then 1024 bytes,
// one of the allocator's size classes.
const leafCap = 128

// leaf is entries of the ordered part whose keys lie from low to the next
// leaf's low, in no order.
type leaf struct {
	low   key      // the leaf's key in the tree: no greater than its entries', and fixed
	last  key      // no less than the greatest key of items
	items []*entry // 1..leafCap entries; cap no more than leafCap
	soon  soonest  // the earliest expiry of items, exact
}

// soonest is the earliest expiry second of some entries and how many
// expire then: removing an entry from a leaf needs to look at the others
// only when it was the last of them to expire at the earliest second.
type soonest struct {
	exp int64
	n   int
}

// add counts an entry expiring at exp.
func (s *soonest) add(exp int64) {
	switch {
	case s.n == 0 || exp < s.exp:
		s.exp, s.n = exp, 1
	case exp == s.exp:
		s.n++
	}
}

// merge counts the entries t counts.
func (s *soonest) merge(t soonest) {
	switch {
	case s.n == 0 || t.exp < s.exp:
		*s = t
	case t.exp == s.exp:
		s.n += t.n
	}
}

// recount sets l.soon from l's entries.
func (l *leaf) recount() {
	l.soon = soonest{}
	for _, e := range l.items {
		l.soon.add(expiryOf(e))
	}
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

// key orders the entries that can expire: by expiry second, then by _etag
// (the order of writes within a shard), then by address, which makes it
// unique whatever the _etags (the garbage collector does not move entries).
type key struct {
	exp  int64
	etag uint64
	addr uintptr
}

func (a key) less(b key) bool {
	if a.exp != b.exp {
		return a.exp < b.exp
	}
	if a.etag != b.etag {
		return a.etag < b.etag
	}
	return a.addr < b.addr
}

func (a key) compare(b key) int {
	switch {
	case a.less(b):
		return -1
	case b.less(a):
		return 1
	}
	return 0
}

func minKey(a, b key) key {
	if b.less(a) {
		return b
	}
	return a
}

// keyOf is the key of e, which is in the ordered part.
func keyOf(e *entry) key {
	return key{exp: expiryOf(e), etag: e.etag, addr: uintptr(unsafe.Pointer(e))}
}

// expiryOf is the expiry second of e, which is in the ordered part.
func expiryOf(e *entry) int64 { return e.ts + int64(e.pos) }

// least returns the least key of l's entries.
func (l *leaf) least() key {
	k := keyOf(l.items[0])
	for _, e := range l.items[1:] {
		if ek := keyOf(e); ek.less(k) {
			k = ek
		}
	}
	return k
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

// keyed is an entry with its key, for sorting.
type keyed struct {
	k key
	e *entry
}

// split divides l, which is full, and e, whose key k lies within l's, into
// l and a new leaf after it, at e: the entries up to e stay in l, so that
// entries written after e in order of expiry (another second's, or another
// TTL's) go on at the end of l. But neither keeps under a quarter of them.
func (x *expiryIndex) split(l *leaf, k key, e *entry) {
	var buf [leafCap + 1]keyed
	all := buf[:0]
	rank := 0 // how many entries of l come before e
	for _, f := range l.items {
		fk := keyOf(f)
		if fk.less(k) {
			rank++
		}
		all = append(all, keyed{fk, f})
	}
	all = append(all, keyed{k, e})
	r := &leaf{low: l.last, last: l.last}
	l.soon = soonest{}
	if at := rank + 1; at >= leafCap/4 && at <= len(all)-leafCap/4 {
		// At e: one pass puts each entry on its side.
		l.items = make([]*entry, 0, allocSize(at*8)/8)
		r.items = make([]*entry, 0, allocSize((len(all)-at)*8)/8)
		for _, f := range all {
			if k.less(f.k) {
				r.items = append(r.items, f.e)
				r.low = minKey(r.low, f.k)
				r.soon.add(f.k.exp)
			} else {
				l.items = append(l.items, f.e)
				l.soon.add(f.k.exp)
			}
		}
		l.last = k
	} else {
		// Nearer an end than a quarter: at a quarter, in key order.
		at = min(max(at, leafCap/4), len(all)-leafCap/4)
		slices.SortFunc(all, func(a, b keyed) int { return a.k.compare(b.k) })
		l.items = make([]*entry, 0, allocSize(at*8)/8)
		for _, f := range all[:at] {
			l.items = append(l.items, f.e)
			l.soon.add(f.k.exp)
		}
		r.items = make([]*entry, 0, allocSize((len(all)-at)*8)/8)
		for _, f := range all[at:] {
			r.items = append(r.items, f.e)
			r.soon.add(f.k.exp)
		}
		r.low, l.last = all[at].k, all[at-1].k
	}
	x.file(r)
}

// appendItems appends es to the leaf items s, growing s, if it must, by
// doubling but to no more than leafCap, and to the capacity of an
// allocator's size class, so that a leaf's array wastes no room past
// leafCap and none to rounding.
func appendItems(s []*entry, es ...*entry) []*entry {
	if n := len(s) + len(es); n > cap(s) {
		c := min(max(n, 2*cap(s), 8), leafCap)
		c = max(allocSize(c*8)/8, n)
		s = append(make([]*entry, 0, c), s...)
	}
	return append(s, es...)
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

// min returns the earliest expiry second, or neverExpires when nothing can
// expire.
func (x *expiryIndex) min() int64 {
	if l := x.minLeaf(); l != nil {
		return l.soon.exp
	}
	return neverExpires
}

// popExpired removes up to max entries expired at second now, the earliest
// leaves first, and appends them to out.
func (x *expiryIndex) popExpired(now int64, max int, out []slot) []slot {
	for max > 0 {
		l := x.minLeaf()
		if l == nil || !isExpired(l.soon.exp, now) {
			break
		}
		if len(l.items) <= max && isExpired(l.last.exp, now) {
			// All of it, expired: no entry stays to be moved.
			for _, e := range l.items {
				out = append(out, slot{e: e, exp: expiryOf(e)})
			}
			max -= len(l.items)
			x.unfile(l)
			continue
		}
		kept := l.items[:0]
		var soon soonest
		for _, e := range l.items {
			if exp := expiryOf(e); max > 0 && isExpired(exp, now) {
				out = append(out, slot{e: e, exp: exp})
				max--
			} else {
				kept = append(kept, e)
				soon.add(exp)
			}
		}
		if len(kept) == 0 {
			x.unfile(l)
			continue
		}
		clear(l.items[len(kept):])
		l.items, l.soon = kept, soon
		// Either max is reached, or l keeps an entry that is not
		// expired, and so do the leaves after it.
		break
	}
	return out
}

// countExpired counts the entries expired at second now.
func (x *expiryIndex) countExpired(now int64) int {
	n := 0
	var cur *leaf
	x.tree.Ascend(func(r leafRef) bool {
		if !isExpired(r.l.soon.exp, now) {
			return false
		}
		if cur != nil {
			// Every entry of cur is before l's, expired.
			n += len(cur.items)
		}
		cur = r.l
		return true
	})
	switch {
	case cur == nil:
	case isExpired(cur.last.exp, now):
		n += len(cur.items)
	default:
		for _, e := range cur.items {
			if isExpired(expiryOf(e), now) {
				n++
			}
		}
	}
	return n
}

// appendLive appends the entries not expired at second now to out, without
// looking at the expired ones but those in the leaf where expired and live
// ones meet.
func (x *expiryIndex) appendLive(now int64, out []*entry) []*entry {
	// The last leaf filed at or before the last key of second now: the
	// leaves before it hold only expired entries, those after it only
	// live ones.
	last := leafRef{low: key{exp: now, etag: math.MaxUint64, addr: ^uintptr(0)}}
	var meet *leaf
	x.tree.DescendLessOrEqual(last, func(r leafRef) bool {
		meet = r.l
		return false
	})
	if meet == nil {
		x.tree.Ascend(func(r leafRef) bool {
			out = append(out, r.l.items...)
			return true
		})
	} else {
		switch {
		case isExpired(meet.last.exp, now):
			// All expired.
		case !isExpired(meet.soon.exp, now):
			out = append(out, meet.items...)
		default:
			for _, e := range meet.items {
				if !isExpired(expiryOf(e), now) {
					out = append(out, e)
				}
			}
		}
		x.tree.AscendGreaterOrEqual(leafRef{low: meet.low}, func(r leafRef) bool {
			if r.l != meet {
				out = append(out, r.l.items...)
			}
			return true
		})
	}
	return append(out, x.never.items...)
}

// soonest returns the entry that expires soonest but for the one whose id
// is except, and its expiry second; nil and neverExpires when there is
// none. Ties go any way.
func (x *expiryIndex) soonest(except string) (*entry, int64) {
	var v *entry
	var vk key
	x.tree.Ascend(func(r leafRef) bool {
		for _, e := range r.l.items {
			if k := keyOf(e); (v == nil || k.less(vk)) && e.id() != except {
				v, vk = e, k
			}
		}
		return v == nil // a later leaf's entries all come after
	})
	if v == nil {
		return nil, neverExpires
	}
	return v, vk.exp
}

// rebuild replaces the index's contents with entries, each expiring at the
// second exp returns for it.
func (x *expiryIndex) rebuild(entries []*entry, exp func(*entry) int64) {
	x.tree.Clear(false)
	clear(x.never.items)
	x.never.items = x.never.items[:0]
	for _, e := range entries {
		x.insert(e, exp(e))
	}
}

// ascend calls fn on each entry with its expiry second, the leaves in
// order but the entries of a leaf in no order, and the entries that cannot
// expire last, until it returns false. fn must not change the index.
func (x *expiryIndex) ascend(fn func(e *entry, exp int64) bool) {
	more := true
	x.tree.Ascend(func(r leafRef) bool {
		for _, e := range r.l.items {
			if more = fn(e, expiryOf(e)); !more {
				break
			}
		}
		return more
	})
	for _, e := range x.never.items {
		if more && !fn(e, neverExpires) {
			return
		}
	}
}

// check verifies the index's structure: every leaf holds 1..leafCap
// entries in an array of at most leafCap, is filed under its low key, no
// greater than its entries' keys, which are no greater than its last and
// come before the next leaf's low; its soonest is exact; each entry in
// never is at its pos. It is for tests (checkInvariants).
func (x *expiryIndex) check() error {
	var err error
	var prev *leaf
	var prevMax key
	x.tree.Ascend(func(r leafRef) bool {
		l := r.l
		if len(l.items) == 0 || cap(l.items) > leafCap {
			err = fmt.Errorf("a leaf holds %d entries in room for %d", len(l.items), cap(l.items))
			return false
		}
		var soon soonest
		for _, e := range l.items {
			soon.add(expiryOf(e))
		}
		switch least := l.least(); {
		case r.low != l.low:
			err = fmt.Errorf("a leaf with low key %+v is filed under %+v", l.low, r.low)
		case l.soon != soon:
			err = fmt.Errorf("a leaf's soonest is %+v, its entries' %+v", l.soon, soon)
		case least.less(l.low):
			err = fmt.Errorf("a leaf's low key %+v is after its least %+v", l.low, least)
		case prev != nil && !prevMax.less(l.low):
			err = fmt.Errorf("a leaf holds %+v, not before the next leaf's low key %+v", prevMax, l.low)
		}
		if err != nil {
			return false
		}
		prevMax = l.low
		for _, e := range l.items {
			k := keyOf(e)
			if l.last.less(k) {
				err = fmt.Errorf("%q has key %+v, after its leaf's last %+v", e.id(), k, l.last)
				return false
			}
			if prevMax.less(k) {
				prevMax = k
			}
		}
		prev = l
		return true
	})
	for pos, e := range x.never.items {
		if err == nil && int(e.pos) != pos {
			err = fmt.Errorf("%q is at %d among the entries that never expire but has pos %d", e.id(), pos, e.pos)
		}
	}
	return err
}
