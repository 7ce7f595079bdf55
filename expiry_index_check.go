package ttlstore

import (
	"fmt"
	"math"
)

// check verifies the expiry index's structure, each promise that
// expiry_index_leaf.go and the hints make, and returns an error naming the
// first one broken:
//
//   - every filed leaf holds 1..leafCap entries, in an array of at most
//     leafCap;
//   - it is filed under its low key, which is no greater than its
//     entries' keys;
//   - its entries' keys are no greater than its last, and its last is less
//     than its high;
//   - its high is the next leaf's low key, or maxKey for the last leaf;
//   - its soonest is exactly its entries' earliest expiry and their count;
//   - a leaf a hint names is filed, or unfiled and empty; and last, if it
//     names a leaf that is not empty and whose high is maxKey, names the
//     last leaf;
//   - each entry that cannot expire is at its pos in never.
//
// It is for tests: checkInvariants runs it, and
// TestExpiryIndexCheckCatches breaks each promise to see it fail.
func (x *expiryTree) check() error {
	var err error
	var prev *leaf
	x.tree.Ascend(func(r leafRef) bool {
		err = x.checkLeaf(r, prev)
		prev = r.l
		return err == nil
	})
	if err != nil {
		return err
	}
	if prev != nil && prev.high != maxKey {
		return fmt.Errorf("the last leaf's high is %+v, not the greatest key", prev.high)
	}
	if x.hints != nil {
		for _, h := range x.hints {
			if h.l == nil || h.l.items == nil {
				continue
			}
			if r, ok := x.tree.Get(leafRef{low: h.l.low}); !ok || r.l != h.l {
				return fmt.Errorf("the hint for second %d names a leaf of %d entries that is not filed", h.exp, len(h.l.items))
			}
		}
	}
	if t := x.last; t != nil && t.items != nil && t.high == maxKey {
		if r, ok := x.tree.Max(); !ok || r.l != t {
			return fmt.Errorf("last names a leaf of %d entries, not the last leaf", len(t.items))
		}
	}
	for pos, e := range x.never.items {
		if int(e.pos) != pos {
			return fmt.Errorf("%q is at %d among the entries that never expire but has pos %d", e.key(), pos, e.pos)
		}
	}
	return nil
}

// checkLeaf verifies the leaf r files, which comes after prev (nil for the
// first), for check.
func (x *expiryTree) checkLeaf(r leafRef, prev *leaf) error {
	l := r.l
	if len(l.items) == 0 || cap(l.items) > leafCap {
		return fmt.Errorf("a leaf holds %d entries in room for %d", len(l.items), cap(l.items))
	}
	var soon soonest
	late := int64(math.MinInt64)
	for _, e := range l.items {
		soon.add(expiryOf(e))
		late = max(late, expiryOf(e))
	}
	switch least := l.least(x.tag); {
	case r.low != l.low:
		return fmt.Errorf("a leaf with low key %+v is filed under %+v", l.low, r.low)
	case least.less(l.low):
		return fmt.Errorf("a leaf's low key %+v is after its least %+v", l.low, least)
	case !l.last.less(l.high):
		return fmt.Errorf("a leaf's last %+v is not before its high %+v", l.last, l.high)
	case prev != nil && prev.high != l.low:
		return fmt.Errorf("a leaf's high %+v is not the next leaf's low key %+v", prev.high, l.low)
	case l.soon != soon:
		return fmt.Errorf("a leaf's soonest is %+v, its entries' %+v", l.soon, soon)
	case l.late < late:
		return fmt.Errorf("a leaf's late is %d, before its entries' latest %d", l.late, late)
	}
	for i, e := range l.items {
		if k := keyOf(e, x.tag); l.last.less(k) {
			return fmt.Errorf("%q has key %+v, after its leaf's last %+v", e.key(), k, l.last)
		}
		if e.lpos != uint8(i)|x.tag {
			return fmt.Errorf("%q is at %d of its leaf, its lpos says %d (tag %d)", e.key(), i, e.lpos, x.tag)
		}
	}
	return nil
}

// check verifies both trees (expiryTree.check), that far holds no entry
// that cannot expire, and that farSoon is exactly the earliest expiry of
// far's entries and their count.
func (x *expiryIndex) check() error {
	if err := x.near.check(); err != nil {
		return fmt.Errorf("near: %w", err)
	}
	var soon soonest
	if x.far != nil {
		if err := x.far.check(); err != nil {
			return fmt.Errorf("far: %w", err)
		}
		if n := len(x.far.never.items); n > 0 {
			return fmt.Errorf("far holds %d entries that never expire", n)
		}
		x.far.ascend(func(_ *entry, exp int64) bool {
			soon.add(exp)
			return true
		})
	}
	if soon != x.farSoon {
		return fmt.Errorf("far's soonest is %+v, its entries' %+v", x.farSoon, soon)
	}
	return nil
}
