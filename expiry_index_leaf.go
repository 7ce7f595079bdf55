package ttlstore

import (
	"slices"
	"unsafe"
)

// This file holds the leaves of the expiry index (expiry_index.go) and the
// key that orders their entries.

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
