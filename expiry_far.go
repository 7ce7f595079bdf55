package ttlstore

import (
	"slices"
	"sync"
)

// expiryIndex is a shard's index of its entries by expiry: two trees of the
// kind expiry_index.go describes, near and far, and the entries that cannot
// expire (near.never).
//
// # Why two trees
//
// The exact tree keeps its cost per insert low when the inserts of a shard
// go to a few places in it: one TTL, or expiries that come in order. Writes
// whose expiries spread over many seconds at once (one TTL and a jitter of
// a minute, or several TTLs) go each to the leaf of its own second, one of
// as many as there are seconds, which the writes in between have pushed out
// of cache: at 1M documents with 60 seconds in turn, an insert cost 1.3x
// one into a shared second (issue 25).
//
// So an entry written to expire farLead seconds or more after its _ts goes
// to the far tree, whose keys round the expiry second down to a multiple of
// farWidth: there, entries whose expiries fall in one farWidth-second
// bucket are in the order they were written (_etag), and a minute of
// spread expiries is one or two places to insert at, as one second is.
// Documents written to expire sooner, which a sweep will soon pop, go to
// near, where they stay exact.
//
// A far entry leaves far by removal, or by a drain: when a sweep finds that
// some far entry has expired, it takes far's first leaves, whole, until
// none of far's entries has expired (about a batch at a time): a leaf
// whose every entry has expired is popped whole, as a sweep that lags or
// a clock moved by a month finds them; the others' entries move to near,
// sorted by exact key so that they go into near in order, and the pop goes
// on in near. With one TTL, far's leaves are in order of expiry too, and
// each is drained when its first entry expires; with a spread, every leaf
// of a bucket holds its first second, and the bucket goes at once. What
// that costs: each far entry a sweep does not pop whole is inserted twice,
// once in far and once in near, the second time by the sweeper, in order.
//
// # What stays exact
//
//   - min is the earliest expiry of every entry: near's, or farSoon, the
//     earliest expiry among far's entries with how many expire then, kept
//     exact as the leaves' soonests are (a far leaf's soonest is exact, its
//     keys are not), and recounted from the first bucket's leaves' headers
//     when its last entry goes.
//   - popExpired takes only expired entries, at most max; it drains first
//     (at most max entries and a leaf's more), then pops near with what
//     is left of max, so a pop may take fewer than max, none even, while
//     far still holds expired entries; but every pop while something has
//     expired drains or takes at least one: a sweep, which pops while min
//     says something has expired, ends. A pop's hold is thus, as the
//     exact tree's, max entries, with two leaves' scans more instead of
//     one.
//   - countExpired, appendLive and soonest look at far's entries one by one
//     only in leaves where expired and live entries may meet, which exist
//     only while a sweep has not yet drained what has expired, and in the
//     leaves of far's first bucket whose soonest could beat near's.
//
// An entry's lpos carries farTag while it is in far, so that a removal
// knows its tree without a search.
type expiryIndex struct {
	near    expiryTree  // exact keys: entries written to expire within farLead of their _ts, drained entries, and never
	far     *expiryTree // keys rounded down to farWidth; nil until an entry goes there
	farSoon soonest     // the earliest expiry among far's entries, exact, and how many expire then; n 0 when far is empty
}

const (
	// farShift makes farWidth: 256 seconds, so that a minute's spread
	// of expiries falls in one bucket three times in four, and in two
	// else.
	farShift = 8
	// farWidth is the far tree's bucket: its keys are expiry seconds
	// rounded down to a multiple of it.
	farWidth = 1 << farShift
	// farTag marks the lpos of an entry in far: a place in a leaf is
	// below leafCap, which is below it.
	farTag = 0x80
)

// farLead is how long after its _ts an entry must expire to go to far:
// sooner than that, a sweep would drain it soon after. It is a variable
// for the tests alone (SetFarLead), which run the rules with every entry
// in far.
var farLead int64 = 2 * farWidth

func newExpiryIndex() expiryIndex {
	return expiryIndex{near: newExpiryTree(0)}
}

// insert adds e, which expires at exp.
func (x *expiryIndex) insert(e *entry, exp int64) {
	if exp == neverExpires || exp-e.ts < farLead {
		x.near.insert(e, exp)
		return
	}
	if x.far == nil {
		t := newExpiryTree(farTag)
		x.far = &t
	}
	x.far.insert(e, exp)
	x.farSoon.add(exp)
}

// remove deletes e, which must have been inserted with expiry exp.
func (x *expiryIndex) remove(e *entry, exp int64) {
	if exp == neverExpires || e.lpos&farTag == 0 {
		x.near.remove(e, exp)
		return
	}
	x.far.remove(e, exp)
	x.farGone(soonest{exp: exp, n: 1})
}

// farGone takes from farSoon entries that left far: s.n of them expiring
// at s.exp, and others later. When the last at farSoon's second goes, it
// recounts.
func (x *expiryIndex) farGone(s soonest) {
	if s.exp == x.farSoon.exp {
		if x.farSoon.n -= s.n; x.farSoon.n == 0 {
			x.recountFar()
		}
	}
}

// recountFar sets farSoon from the leaves of far's first bucket: no entry
// of a leaf filed under a key after the earliest expiry found can expire
// sooner, since an entry's key is at most its expiry.
func (x *expiryIndex) recountFar() {
	x.farSoon = soonest{}
	x.far.tree.Ascend(func(r leafRef) bool {
		if x.farSoon.n > 0 && r.low.exp > x.farSoon.exp {
			return false
		}
		x.farSoon.merge(r.l.soon)
		return true
	})
}

// min returns the earliest expiry second, or neverExpires when nothing can
// expire.
func (x *expiryIndex) min() int64 {
	m := x.near.min()
	if x.farSoon.n > 0 && x.farSoon.exp < m {
		return x.farSoon.exp
	}
	return m
}

// farDue reports whether some entry in far has expired at second now.
func (x *expiryIndex) farDue(now int64) bool {
	return x.farSoon.n > 0 && isExpired(x.farSoon.exp, now)
}

// drain takes far's first leaves, whole, while some far entry has expired
// at second now, until it has looked at max entries: it appends to out,
// up to max, the entries of a leaf whose every entry has expired (a sweep
// that lags, or a clock moved a long way), and stops at such a leaf that
// does not fit, for the next pop to take whole; it moves the others'
// entries to near, where a pop finds the expired ones (and so those of an
// expired leaf larger than max). It returns out and how many entries it
// took from far, appended or moved.
// Entries written in order of expiry (one TTL) fill far's leaves in that
// order, so each leaf is drained when its own first entry expires; a
// spread fills every leaf of a bucket with its first second, so the bucket
// is drained whole when that second comes.
func (x *expiryIndex) drain(now int64, max int, out []slot) (_ []slot, looked int) {
	if !x.farDue(now) {
		return out, 0
	}
	popped := 0
	buf := drainBufs.Get().(*[]keyed)
	moved := (*buf)[:0]
drain:
	for popped+len(moved) < max && x.farDue(now) {
		l := x.far.minLeaf()
		whole := isExpired(bucketEnd(l.last), now) || allExpired(l.items, now)
		switch {
		case whole && popped+len(l.items) <= max:
			for _, e := range l.items {
				out = append(out, slot{e: e, exp: expiryOf(e)})
			}
			popped += len(l.items)
		case whole && popped+len(moved) > 0:
			break drain // the next pop takes it whole
		default:
			// Not all expired, or more than max: near's pop takes
			// what has expired of it, max at a time.
			for _, e := range l.items {
				moved = append(moved, keyed{keyOf(e, 0), e})
			}
		}
		x.far.unfile(l, nil)
		x.farGone(l.soon)
	}
	// In order of exact key, so that each goes where the last went. One
	// TTL's entries come in order already.
	if !slices.IsSortedFunc(moved, compareKeyed) {
		slices.SortFunc(moved, compareKeyed)
	}
	for _, m := range moved {
		x.near.insert(m.e, m.k.exp)
	}
	looked = popped + len(moved)
	clear(moved)
	*buf = moved[:0]
	drainBufs.Put(buf)
	return out, looked
}

// drainBufs hold the entries a drain moves, reused: a sweep drains in
// every batch while far has expired entries.
var drainBufs = sync.Pool{New: func() any { return new([]keyed) }}

// allExpired reports whether every entry of es has expired at second now.
func allExpired(es []*entry, now int64) bool {
	for _, e := range es {
		if !isExpired(expiryOf(e), now) {
			return false
		}
	}
	return true
}

// compareKeyed orders by key (key.less), for the slices package.
func compareKeyed(a, b keyed) int {
	switch {
	case a.k.less(b.k):
		return -1
	case b.k.less(a.k):
		return 1
	}
	return 0
}

// popExpired removes up to max entries expired at second now and appends
// them to out: far's due leaves first (drain), then, with what is left of
// max after the entries drained, near's expired entries, the earliest
// leaves first. So a pop looks at max entries and two leaves' more at
// most, as the exact tree's does with one leaf's more.
func (x *expiryIndex) popExpired(now int64, max int, out []slot) []slot {
	out, looked := x.drain(now, max, out)
	if looked >= max {
		return out
	}
	return x.near.popExpired(now, max-looked, out)
}

// countExpired counts the entries expired at second now.
func (x *expiryIndex) countExpired(now int64) int {
	n := x.near.countExpired(now)
	if !x.farDue(now) {
		return n
	}
	x.far.tree.Ascend(func(r leafRef) bool {
		if r.low.exp > now {
			return false // every key after, and so every expiry
		}
		switch l := r.l; {
		case !isExpired(l.soon.exp, now):
		case isExpired(min(bucketEnd(l.last), l.late), now):
			n += len(l.items)
		default:
			for _, e := range l.items {
				if isExpired(expiryOf(e), now) {
					n++
				}
			}
		}
		return true
	})
	return n
}

// bucketEnd is the last second a far entry whose key is k can expire at.
func bucketEnd(k key) int64 { return k.exp | (farWidth - 1) }

// appendLive appends the entries not expired at second now to out.
func (x *expiryIndex) appendLive(now int64, out []*entry) []*entry {
	out = x.near.appendLive(now, out)
	if x.far == nil {
		return out
	}
	due := x.farDue(now)
	x.far.tree.Ascend(func(r leafRef) bool {
		switch l := r.l; {
		case !due || r.low.exp > now || !isExpired(l.soon.exp, now):
			out = append(out, l.items...)
		case isExpired(min(bucketEnd(l.last), l.late), now):
			// All expired.
		default:
			for _, e := range l.items {
				if !isExpired(expiryOf(e), now) {
					out = append(out, e)
				}
			}
		}
		return true
	})
	return out
}

// soonest returns the entry that expires soonest but for the one whose id
// is except and those whose ids are in others (nil for none), and its
// expiry second; nil and neverExpires when there is none. Ties go any way.
// It looks in far only when far's earliest expiry beats near's answer, and
// there only at the leaves whose soonest does.
func (x *expiryIndex) soonest(except string, others map[string]struct{}) (*entry, int64) {
	v, best := x.near.soonest(except, others)
	if x.farSoon.n == 0 || x.farSoon.exp >= best {
		return v, best
	}
	x.far.tree.Ascend(func(r leafRef) bool {
		if r.low.exp >= best {
			return false // no entry of it or after expires sooner
		}
		if r.l.soon.exp >= best {
			return true
		}
		for _, e := range r.l.items {
			if exp := expiryOf(e); exp < best && !excepted(e.key(), except, others) {
				v, best = e, exp
			}
		}
		return true
	})
	return v, best
}

// rebuild replaces the index's contents with entries, each expiring at the
// second exp returns for it.
func (x *expiryIndex) rebuild(entries []*entry, exp func(*entry) int64) {
	x.near.rebuild(nil, nil)
	x.far, x.farSoon = nil, soonest{}
	for _, e := range entries {
		x.insert(e, exp(e))
	}
}

// ascend calls fn on each entry with its expiry second, in no order, until
// it returns false. fn must not change the index.
func (x *expiryIndex) ascend(fn func(e *entry, exp int64) bool) {
	more := true
	x.near.ascend(func(e *entry, exp int64) bool {
		more = fn(e, exp)
		return more
	})
	if more && x.far != nil {
		x.far.ascend(fn)
	}
}
