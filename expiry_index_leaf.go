package ttlstore

import (
	"math"
	"unsafe"
)

// This file holds the leaves of the expiry index (expiry_index.go) and the
// key that orders their entries. A leaf knows nothing of the tree that files
// it: it holds entries, counts their earliest expiry, and splits in two, and
// the tree files what a split returns.
//
// What a filed leaf promises (expiryIndex.check verifies each, and
// expiry_index_internal_test.go breaks each on purpose to see check catch
// it):
//
//   - It holds 1..leafCap entries, in an array of at most leafCap, in no
//     order.
//   - Every entry's key lies in [low, high): low is the key the tree files
//     it under, high the next leaf's low, or maxKey for the last leaf. The
//     leaves' ranges thus cover the keys without gaps or overlaps, so that
//     the leaf holding a key can be recognised by looking at that leaf
//     alone (the index's hints rely on this).
//   - last is no less than the greatest key of its entries, and less than
//     high.
//   - soon is exactly the earliest expiry second of its entries and how
//     many expire then, in the far tree too, whose keys are coarse.
//   - late is no earlier than the latest expiry second of its entries.
//   - Each entry's lpos is its place in the array, with its tree's tag
//     (0, or farTag in the far tree: expiry_far.go).
//
// The keys of a leaf's entries are not kept in the leaf: a key is read from
// its entry's header (keyOf), so a leaf costs 8 bytes an entry. Keeping the
// expiry beside each pointer would spare a split the loads of the entries'
// headers, but it would cost 4 more bytes an entry, and with the leaves'
// unused room about 5: more than the index's whole margin under issue 25's
// 90 bytes a document, for the 60-second spread at 1M documents (88.4
// measured). A split instead loads all the keys before comparing any, so
// that the processor overlaps the cache misses (see split).

// key orders the entries that can expire: by expiry second, then by _etag
// (the order of writes within a shard), then by address, which makes it
// unique whatever the _etags (the garbage collector does not move entries).
type key struct {
	exp  int64
	etag uint64
	addr uintptr
}

// maxKey is after every entry's key: the high of the last leaf.
var maxKey = key{exp: math.MaxInt64, etag: math.MaxUint64, addr: ^uintptr(0)}

func (a key) less(b key) bool {
	if a.exp != b.exp {
		return a.exp < b.exp
	}
	if a.etag != b.etag {
		return a.etag < b.etag
	}
	return a.addr < b.addr
}

// keyOf is the key of e, which is in the ordered part, in a tree tagged
// tag: its expiry second in the exact tree (tag 0), the second rounded
// down to a multiple of farWidth in the far tree (farTag; see
// expiry_far.go).
func keyOf(e *entry, tag uint8) key {
	exp := expiryOf(e)
	if tag != 0 {
		exp &^= farWidth - 1
	}
	return key{exp: exp, etag: e.etag, addr: uintptr(unsafe.Pointer(e))}
}

// expiryOf is the expiry second of e, which is in the ordered part.
func expiryOf(e *entry) int64 { return e.ts + int64(e.pos) }

// leafCap is the most entries a leaf holds: its array is then 1016 bytes,
// which with the allocator's 8-byte header (see itemsBytes) fill the 1024
// size class. 128 entries, 1024 bytes, took the 1152 class: 9 bytes an
// entry, not 8.
const leafCap = 127

// mallocHeader is the header the Go allocator (1.22 on) puts before an
// object that holds pointers and is over mallocHeaderAbove bytes, inside
// the object's size class.
const (
	mallocHeader      = 8
	mallocHeaderAbove = 512
)

// itemsBytes is the heap an array of n entry pointers takes: its size
// class, the header included. TestItemsBytes checks it against the
// runtime.
func itemsBytes(n int) int {
	if b := n * 8; b > mallocHeaderAbove {
		return allocSize(b + mallocHeader)
	}
	return allocSize(n * 8)
}

// itemsCap returns the room of the array the allocator gives for n entry
// pointers, n at most leafCap: all of its size class but the header, and
// never more than leafCap.
func itemsCap(n int) int {
	if b := n * 8; b > mallocHeaderAbove {
		return (itemsBytes(n) - mallocHeader) / 8
	}
	return itemsBytes(n) / 8
}

// leaf is entries of the ordered part whose keys lie in [low, high), in no
// order. Its fields are in the order insert reads them: the bounds it
// checks a hint against, then the array it appends to. It is 120 bytes, in
// the 128-byte size class.
type leaf struct {
	low   key      // the leaf's key in the tree: no greater than its entries', and fixed
	high  key      // the next leaf's low, maxKey for the last: greater than its entries'
	items []*entry // 1..leafCap entries; cap no more than leafCap; nil once unfiled
	soon  soonest  // the earliest expiry of items, exact
	last  key      // no less than the greatest key of items, less than high
	// late is no earlier than the latest expiry of items: the latest
	// when it was last counted, which a removal leaves. In the far tree,
	// whose keys round the expiry down, it tells a leaf all expired
	// without loading its entries (expiryIndex.countExpired, appendLive),
	// where its bucket's end would not before the bucket is over.
	late int64
}

// holds reports whether k lies in l's range, l being filed.
func (l *leaf) holds(k key) bool {
	return len(l.items) > 0 && !k.less(l.low) && k.less(l.high)
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

// recount sets l.soon and l.late from l's entries.
func (l *leaf) recount() {
	l.soon, l.late = soonest{}, math.MinInt64
	for _, e := range l.items {
		exp := expiryOf(e)
		l.soon.add(exp)
		l.late = max(l.late, exp)
	}
}

// least returns the least key of l's entries, l being in a tree tagged
// tag.
func (l *leaf) least(tag uint8) key {
	k := keyOf(l.items[0], tag)
	for _, e := range l.items[1:] {
		if ek := keyOf(e, tag); ek.less(k) {
			k = ek
		}
	}
	return k
}

// newLeaf returns a leaf of a tree tagged tag holding only e, whose key is
// k and expiry exp, with range [k, high).
func newLeaf(k, high key, e *entry, exp int64, tag uint8) *leaf {
	l := &leaf{low: k, high: high, last: k, items: make([]*entry, 1, 8), soon: soonest{exp: exp, n: 1}, late: exp}
	l.items[0] = e
	e.lpos = tag
	return l
}

// add appends e, whose key k lies in l's range and which expires at exp,
// to l, which is not full and in a tree tagged tag.
func (l *leaf) add(k key, e *entry, exp int64, tag uint8) {
	e.lpos = uint8(len(l.items)) | tag
	if len(l.items) < cap(l.items) {
		l.items = append(l.items, e) // inlined: appendItems is a call
	} else {
		l.items = appendItems(l.items, e)
	}
	l.soon.add(exp)
	l.late = max(l.late, exp)
	if l.last.less(k) {
		l.last = k
	}
}

// remove takes out the entry at i, which expires at exp, and reports
// whether that left l empty. The last entry takes its place (and learns
// it: lpos, with the tag of l's tree).
func (l *leaf) remove(i int, exp int64, tag uint8) (empty bool) {
	last := len(l.items) - 1
	if i != last {
		moved := l.items[last]
		l.items[i] = moved
		moved.lpos = uint8(i) | tag
	}
	l.items[last] = nil
	l.items = l.items[:last]
	if last == 0 {
		return true
	}
	if exp == l.soon.exp {
		if l.soon.n--; l.soon.n == 0 {
			l.recount() // the last to expire at its earliest second
		}
	}
	return false
}

// place tells each entry of items from the one at from on its place
// there (lpos), in a tree tagged tag.
func place(items []*entry, from int, tag uint8) {
	for i := from; i < len(items); i++ {
		items[i].lpos = uint8(i) | tag
	}
}

// appendItems appends es to the leaf items s, growing s, if it must, by
// doubling but to no more than leafCap, and to the room of an allocator's
// size class (itemsCap), so that a leaf's array wastes no room past
// leafCap and none to rounding. The entries keep their places, but es,
// whose lpos the caller sets.
func appendItems(s []*entry, es ...*entry) []*entry {
	if n := len(s) + len(es); n > cap(s) {
		c := min(max(n, 2*cap(s), 8), leafCap)
		s = append(make([]*entry, 0, itemsCap(c)), s...)
	}
	return append(s, es...)
}

// keyed is an entry with its key, for splitting.
type keyed struct {
	k key
	e *entry
}

// split divides l, which is full, and e, whose key k lies in l's range but
// not after its last, between l and a new leaf after it, which it returns
// for the tree to file: the entries up to e stay in l, so that entries
// written after e in order of expiry (another second's, or another TTL's)
// go on at the end of l. But neither keeps under a quarter of them: if e
// is nearer an end than that, the split is at a quarter, in key order.
// The new leaf's range is the rest of l's. l is in a tree tagged tag.
func (l *leaf) split(k key, e *entry, tag uint8) *leaf {
	var buf [leafCap + 1]keyed
	all := buf[:len(l.items)+1]
	// Every key is loaded before any is compared, so that no branch
	// waits on a load: the processor then overlaps the loads' cache
	// misses (entries are scattered over the heap).
	for i, f := range l.items {
		all[i] = keyed{keyOf(f, tag), f}
	}
	all[len(l.items)] = keyed{k, e}
	rank := 0       // how many entries of l come before e
	shared := false // whether an entry after e has e's key's exp
	for _, f := range all[:len(l.items)] {
		if f.k.less(k) {
			rank++
		} else if f.k.exp == k.exp {
			shared = true
		}
	}
	pivot, at := k, rank+1 // the greatest key that stays in l, and how many stay
	q := leafCap / 4
	switch {
	case at >= q && at <= len(all)-q:
	case tag != 0 && at > len(all)-q && at < len(all) && !shared:
		// In the far tree, what comes after e is a later bucket's:
		// split there, however few, so that e's bucket goes on at
		// the end of l and the later one's in the new leaf (unless
		// nothing comes after e: l's last, a bound, can be after
		// every entry once some are removed). At a
		// quarter, both would go on mixed, and split again every
		// 97 of e's bucket's inserts (a minute's spread across a
		// bucket's end: 5 splits a shard in 100k documents).
	default:
		at = min(max(at, q), len(all)-q)
		pivot = nthKey(all, at-1)
	}
	r := &leaf{low: maxKey, high: l.high, last: l.last}
	left := make([]*entry, 0, itemsCap(at))
	right := make([]*entry, 0, itemsCap(len(all)-at))
	var lsoon, rsoon soonest
	llate, rlate := int64(math.MinInt64), int64(math.MinInt64)
	for _, f := range all {
		exp := exact(f.k, f.e, tag)
		if pivot.less(f.k) {
			f.e.lpos = uint8(len(right)) | tag
			right = append(right, f.e)
			r.low = minKey(r.low, f.k)
			rsoon.add(exp)
			rlate = max(rlate, exp)
		} else {
			f.e.lpos = uint8(len(left)) | tag
			left = append(left, f.e)
			lsoon.add(exp)
			llate = max(llate, exp)
		}
	}
	r.items, r.soon, r.late = right, rsoon, rlate
	l.items, l.soon, l.last, l.high, l.late = left, lsoon, pivot, r.low, llate
	return r
}

// exact is the expiry second of e, whose key in a tree tagged tag is k:
// k's own in the exact tree, where it costs no load.
func exact(k key, e *entry, tag uint8) int64 {
	if tag == 0 {
		return k.exp
	}
	return expiryOf(e)
}

func minKey(a, b key) key {
	if b.less(a) {
		return b
	}
	return a
}

// nthKey returns the key of all that n of its keys come before, n within
// all, reordering all: a quickselect, a third of the time of the sort it
// replaced in splits near an end of a leaf. The keys must be unique.
func nthKey(all []keyed, n int) key {
	lo, hi := 0, len(all)-1
	for lo < hi {
		p := all[lo+(hi-lo)/2].k
		i, j := lo, hi
		for i <= j {
			for all[i].k.less(p) {
				i++
			}
			for p.less(all[j].k) {
				j--
			}
			if i <= j {
				all[i], all[j] = all[j], all[i]
				i++
				j--
			}
		}
		// Now all[lo:j+1] are no greater than p, all[i:hi+1] no less,
		// and what lies between is p.
		switch {
		case n <= j:
			hi = j
		case n >= i:
			lo = i
		default:
			return all[n].k
		}
	}
	return all[n].k
}
