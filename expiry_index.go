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
// ones, and the sweeper, which looks only at the ordered part, never sees
// an entry that cannot expire (R10).
//
// The ordered part is a B+-tree of entry pointers whose leaves are not
// sorted inside. Entries have unique keys (expiry second, then _etag, then
// address: see key), and each leaf holds up to leafCap entries whose keys
// lie between its first key, the least of them, and the next leaf's first
// key, in no order; a google/btree files the leaves by first key. A leaf
// holds no expiry of its own entries: an entry's expiry is its _ts plus the
// offset the index keeps in the entry's pos (for an entry in never, pos is
// its place there, so removing one is a swap with the last).
//
// Memory is why it is a tree of entries rather than of seconds: an entry
// costs its pointer in a leaf, 8 bytes, plus its share of the leaf's unused
// room and of the leaf's header (80 bytes) and place in the google/btree,
// however the expiries spread (a tree of one bucket per second cost 50
// bytes more per entry when every entry had a second of its own). A full
// leaf that takes an entry after all of its own (entries written in order
// of expiry do: one TTL, or each second's in turn) stays full and a new leaf
// takes the entry, so such entries cost about 9 bytes; a full leaf that
// takes one in its midst splits in two where the entry goes, but no nearer
// either end than a quarter (about 12 bytes an entry for entries written in
// random order of expiry). A leaf emptied below a quarter by removals merges
// with a neighbour that has room for it. Leaves' arrays grow by doubling up
// to leafCap.
//
// Leaves are unsorted so that a write loads no entry but its own: finding
// its leaf compares the keys the leaves hold, and it appends. What needs an
// order within a leaf loads the leaf's entries (up to leafCap, independent
// loads that the processor overlaps): a split sorts the leaf's keys; a
// removal of a leaf's least entry finds the next least; and the leaf where
// expired and live entries meet, which popping, counting the expired and
// listing the live entries filter.
//
// It is guarded by its shard's mutex; every method must be called with that
// mutex held (read methods with at least the read lock).
//
// Costs, n the entries and L (n/leafCap to 4n/leafCap) the leaves: insert
// O(log L), and O(leafCap log leafCap) for a split, which comes at most once
// every leafCap/4 inserts into a leaf; remove O(log L + leafCap) (it finds
// the entry by address in its leaf's array); the earliest expiry O(log L);
// popping k expired entries O(k + leafCap + log L); counting the expired
// entries O(log L + expired leaves + leafCap); listing the live entries
// O(live + log L + leafCap).
type expiryIndex struct {
	tree  *btree.BTreeG[*leaf] // the leaves, by first key
	never neverSet             // the entries that cannot expire
	probe leaf                 // a key for lookups by writers, so that they do not allocate
}

// leafCap is the most entries a leaf holds: its array is then 1024 bytes,
// one of the allocator's size classes.
const leafCap = 128

// leaf is entries of the ordered part whose keys lie from first to the
// next leaf's first, in no order.
type leaf struct {
	first key      // the least key of items
	last  key      // no less than the greatest key of items
	items []*entry // 1..leafCap entries; cap no more than leafCap
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

func leafLess(a, b *leaf) bool { return a.first.less(b.first) }

func newExpiryIndex() expiryIndex {
	// A small free list: leaves come and go every leafCap/4 entries at
	// most, and the default list (32 nodes) would cost 256 bytes in each
	// of the numShards shards of every collection.
	tree := btree.NewWithFreeListG(indexDegree, leafLess, btree.NewFreeListG[*leaf](2))
	return expiryIndex{tree: tree}
}

// leafFor returns the leaf where k belongs: the last whose first key is not
// after k, or the first leaf if k comes before them all; nil when there is
// no leaf. It uses x.probe, so the caller must hold the write lock.
func (x *expiryIndex) leafFor(k key) *leaf {
	x.probe.first = k
	var l *leaf
	x.tree.DescendLessOrEqual(&x.probe, func(m *leaf) bool {
		l = m
		return false
	})
	if l == nil {
		l, _ = x.tree.Min()
	}
	return l
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
	l, ok := x.tree.Max()
	switch {
	case !ok:
		x.addLeaf(k, e)
		return
	case k.less(l.first):
		// Not in the last leaf (entries written in order of expiry
		// are): look it up.
		l = x.leafFor(k)
	}
	switch {
	case len(l.items) < leafCap:
		l.items = appendItems(l.items, e)
		if k.less(l.first) {
			// Only the first leaf takes a key before its own: the
			// order of the leaves stands.
			l.first = k
		}
		if l.last.less(k) {
			l.last = k
		}
	case l.last.less(k) || k.less(l.first):
		// Full, and e comes after all of its entries, or before the
		// first leaf: e starts a leaf of its own.
		x.addLeaf(k, e)
	default:
		x.split(l, k, e)
	}
}

// addLeaf files a new leaf holding e, whose key is k.
func (x *expiryIndex) addLeaf(k key, e *entry) {
	l := &leaf{first: k, last: k, items: make([]*entry, 1, 8)}
	l.items[0] = e
	x.tree.ReplaceOrInsert(l)
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
	r := &leaf{last: l.last}
	if at := rank + 1; at >= leafCap/4 && at <= len(all)-leafCap/4 {
		// At e: one pass puts each entry on its side.
		l.items = make([]*entry, 0, allocSize(at*8)/8)
		r.items = make([]*entry, 0, allocSize((len(all)-at)*8)/8)
		r.first = l.last
		for _, f := range all {
			if k.less(f.k) {
				r.items = append(r.items, f.e)
				if f.k.less(r.first) {
					r.first = f.k
				}
			} else {
				l.items = append(l.items, f.e)
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
		}
		r.items = make([]*entry, 0, allocSize((len(all)-at)*8)/8)
		for _, f := range all[at:] {
			r.items = append(r.items, f.e)
		}
		r.first, l.last = all[at].k, all[at-1].k
	}
	x.tree.ReplaceOrInsert(r)
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
		x.tree.Delete(l)
		return
	case k == l.first:
		l.first = l.least() // later, but before the next leaf's first
	}
	if len(l.items) < leafCap/4 {
		x.merge(l)
	}
}

// merge moves the entries of l, a leaf emptied below a quarter, into a
// neighbour that has room for them, or the next leaf's into l; failing
// that, it moves them to a smaller array if theirs is mostly empty.
func (x *expiryIndex) merge(l *leaf) {
	var prev, next *leaf
	x.tree.AscendGreaterOrEqual(l, func(m *leaf) bool {
		if m == l {
			return true
		}
		next = m
		return false
	})
	if next != nil && len(l.items)+len(next.items) <= leafCap {
		l.items = appendItems(l.items, next.items...)
		l.last = next.last
		x.tree.Delete(next)
		return
	}
	x.tree.DescendLessOrEqual(l, func(m *leaf) bool {
		if m == l {
			return true
		}
		prev = m
		return false
	})
	if prev != nil && len(prev.items)+len(l.items) <= leafCap {
		prev.items = appendItems(prev.items, l.items...)
		prev.last = l.last
		x.tree.Delete(l)
		return
	}
	if cap(l.items) > 4*len(l.items) {
		l.items = appendItems(make([]*entry, 0, 2*len(l.items)), l.items...)
	}
}

// min returns the earliest expiry second, or neverExpires when nothing can
// expire.
func (x *expiryIndex) min() int64 {
	if l, ok := x.tree.Min(); ok {
		return l.first.exp
	}
	return neverExpires
}

// popExpired removes up to max entries expired at second now, the earliest
// leaves first, and appends them to out.
func (x *expiryIndex) popExpired(now int64, max int, out []slot) []slot {
	for max > 0 {
		l, ok := x.tree.Min()
		if !ok || !isExpired(l.first.exp, now) {
			break
		}
		kept := l.items[:0]
		for _, e := range l.items {
			if exp := expiryOf(e); max > 0 && isExpired(exp, now) {
				out = append(out, slot{e: e, exp: exp})
				max--
			} else {
				kept = append(kept, e)
			}
		}
		clear(l.items[len(kept):])
		if len(kept) == 0 {
			x.tree.Delete(l)
			continue
		}
		l.items = kept
		l.first = l.least()
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
	x.tree.Ascend(func(l *leaf) bool {
		if !isExpired(l.first.exp, now) {
			return false
		}
		if cur != nil {
			// Every entry of cur is before l's first, expired.
			n += len(cur.items)
		}
		cur = l
		return true
	})
	if cur != nil {
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
// ones meet. from is scratch space for the lookup (not x.probe: readers
// share the index under the read lock).
func (x *expiryIndex) appendLive(now int64, from *leaf, out []*entry) []*entry {
	// The last leaf whose first entry is expired: the leaves before it
	// hold only expired entries, those after it only live ones.
	from.first = key{exp: now, etag: math.MaxUint64, addr: ^uintptr(0)}
	var meet *leaf
	x.tree.DescendLessOrEqual(from, func(l *leaf) bool {
		meet = l
		return false
	})
	if meet == nil {
		x.tree.Ascend(func(l *leaf) bool {
			out = append(out, l.items...)
			return true
		})
	} else {
		for _, e := range meet.items {
			if !isExpired(expiryOf(e), now) {
				out = append(out, e)
			}
		}
		x.tree.AscendGreaterOrEqual(meet, func(l *leaf) bool {
			if l != meet {
				out = append(out, l.items...)
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
	x.tree.Ascend(func(l *leaf) bool {
		for _, e := range l.items {
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
	x.tree.Ascend(func(l *leaf) bool {
		for _, e := range l.items {
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
// entries in an array of at most leafCap, is filed under its entries' least
// key, and its entries' keys are no greater than its last and come before
// the next leaf's first; each entry in never is at its pos. It is for tests
// (checkInvariants).
func (x *expiryIndex) check() error {
	var err error
	var prev *leaf
	var prevMax key
	x.tree.Ascend(func(l *leaf) bool {
		if len(l.items) == 0 || cap(l.items) > leafCap {
			err = fmt.Errorf("a leaf holds %d entries in room for %d", len(l.items), cap(l.items))
			return false
		}
		if least := l.least(); l.first != least {
			err = fmt.Errorf("a leaf is filed under %+v, its least key is %+v", l.first, least)
			return false
		}
		if prev != nil && !prevMax.less(l.first) {
			err = fmt.Errorf("a leaf holds %+v, not before the next leaf's first key %+v", prevMax, l.first)
			return false
		}
		prevMax = l.first
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
