package ttlstore

import "math"

// This file reads the expiry index (expiry_index.go) in order of expiry,
// for the sweeper (min, popExpired), the listings and Stats (countExpired,
// appendLive), EvictSoonestExpiry (soonest) and SetDefaultTTL (ascend,
// rebuild). What each promises is exact to the second, whatever the
// leaves' order inside: min is the earliest expiry of every entry; a pop
// takes only expired entries, at most max, so that a sweep holds its
// shard's lock for SweepBatch entries and one leaf's scan; a count or a
// listing looks at entries one by one only in the leaf where expired and
// live entries meet. TestExpiryIndexAgainstModel checks each against a
// map of entries to expiries.

// min returns the earliest expiry second, or neverExpires when nothing can
// expire.
func (x *expiryTree) min() int64 {
	if l := x.minLeaf(); l != nil {
		return l.soon.exp
	}
	return neverExpires
}

// popExpired removes up to max entries expired at second now, the earliest
// leaves first, and appends them to out.
func (x *expiryTree) popExpired(now int64, max int, out []slot) []slot {
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
			x.unfile(l, nil)
			continue
		}
		kept := l.items[:0]
		var soon soonest
		for _, e := range l.items {
			if exp := expiryOf(e); max > 0 && isExpired(exp, now) {
				out = append(out, slot{e: e, exp: exp})
				max--
			} else {
				e.lpos = uint8(len(kept)) | x.tag
				kept = append(kept, e)
				soon.add(exp)
			}
		}
		if len(kept) == 0 {
			x.unfile(l, nil)
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
func (x *expiryTree) countExpired(now int64) int {
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
func (x *expiryTree) appendLive(now int64, out []*entry) []*entry {
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
// is except and those whose ids are in others (nil for none), and its
// expiry second; nil and neverExpires when there is none. Ties go any way.
func (x *expiryTree) soonest(except string, others map[string]struct{}) (*entry, int64) {
	var v *entry
	var vk key
	x.tree.Ascend(func(r leafRef) bool {
		for _, e := range r.l.items {
			if k := keyOf(e, x.tag); (v == nil || k.less(vk)) && !excepted(e.key(), except, others) {
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

// excepted reports whether id is except or one of others.
func excepted(id, except string, others map[string]struct{}) bool {
	if id == except {
		return true
	}
	if others == nil {
		return false // (a lookup in a nil map is a call: 14 instructions, twice a victim)
	}
	_, ok := others[id]
	return ok
}

// rebuild replaces the index's contents with entries, each expiring at the
// second exp returns for it.
func (x *expiryTree) rebuild(entries []*entry, exp func(*entry) int64) {
	x.tree.Clear(false)
	// The leaves Clear dropped keep their entries: neither the hints nor
	// last may name one.
	x.last, x.freed = nil, nil
	if x.hints != nil {
		*x.hints = hintTable{}
	}
	clear(x.never.items)
	x.never.items = x.never.items[:0]
	for _, e := range entries {
		x.insert(e, exp(e))
	}
}

// ascend calls fn on each entry with its expiry second, the leaves in
// order but the entries of a leaf in no order, and the entries that cannot
// expire last, until it returns false. fn must not change the index.
func (x *expiryTree) ascend(fn func(e *entry, exp int64) bool) {
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
