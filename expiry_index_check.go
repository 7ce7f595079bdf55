package ttlstore

import "fmt"

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
