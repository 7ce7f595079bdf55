package ttlstore

import (
	"slices"
	"unsafe"

	"github.com/google/btree"
)

// expiryIndex orders the entries of one shard that can expire by expiry
// second, then entry address (see lessByExpiry), so the entries are unique in
// it and the next to expire is its minimum.
// Entries that never expire are kept out of it. It is guarded by its shard's
// mutex; every method must be called with that mutex held (read methods with
// at least the read lock).
//
// Costs: insert and delete O(log n); popping the k expired entries O(k log n);
// counting them O(k + log n); min O(log n), but callers read the cached
// minimum in shard.minExp instead.
type expiryIndex struct {
	tree *btree.BTreeG[slot]
}

// indexDegree is the B-tree's degree: nodes hold up to 2*32-1 pointers, a
// few cache lines, which keeps the tree shallow (four levels at 1M entries).
const indexDegree = 32

// lessByExpiry orders by expiry second, then by the entry's address. Ties
// on the second are the rule, not the exception (every write in the same
// second with the same TTL makes one), and the tie-break is only there to
// make items unique: the address is unique among live entries, stable (Go's
// heap does not move objects), and costs no memory load, where comparing ids
// would load both entries and their strings. Sweeps visit shards in an order
// set by a random hash seed, so no order among documents expiring in the
// same second was observable anyway.
func lessByExpiry(a, b slot) bool {
	if a.exp != b.exp {
		return a.exp < b.exp
	}
	return uintptr(unsafe.Pointer(a.e)) < uintptr(unsafe.Pointer(b.e))
}

func newExpiryIndex() expiryIndex {
	return expiryIndex{tree: btree.NewG(indexDegree, lessByExpiry)}
}

// insert adds s, which must not be in the index and must be able to expire.
func (x expiryIndex) insert(s slot) { x.tree.ReplaceOrInsert(s) }

// remove deletes s; its exp must be the value it was inserted with.
func (x expiryIndex) remove(s slot) { x.tree.Delete(s) }

// len is the number of entries that can expire.
func (x expiryIndex) len() int { return x.tree.Len() }

// min returns the earliest expiry second, or neverExpires when empty.
func (x expiryIndex) min() int64 {
	if s, ok := x.tree.Min(); ok {
		return s.exp
	}
	return neverExpires
}

// popExpired removes up to max entries expired at second now, earliest
// first, and appends them to out.
func (x expiryIndex) popExpired(now int64, max int, out []slot) []slot {
	for n := 0; n < max; n++ {
		s, ok := x.tree.Min()
		if !ok || !isExpired(s.exp, now) {
			break
		}
		x.tree.DeleteMin()
		out = append(out, s)
	}
	return out
}

// countExpired counts the entries expired at second now.
func (x expiryIndex) countExpired(now int64) int {
	n := 0
	x.tree.Ascend(func(s slot) bool {
		if !isExpired(s.exp, now) {
			return false
		}
		n++
		return true
	})
	return n
}

// rebuild replaces the index's contents with the slots of docs that can
// expire, after their exp fields were recomputed. Sorting first and then
// inserting in order costs less than inserting at random.
func (x *expiryIndex) rebuild(docs map[string]slot) {
	items := make([]slot, 0, len(docs))
	for _, s := range docs {
		if s.exp != neverExpires {
			items = append(items, s)
		}
	}
	slices.SortFunc(items, func(a, b slot) int {
		switch {
		case lessByExpiry(a, b):
			return -1
		case lessByExpiry(b, a):
			return 1
		}
		return 0
	})
	x.tree.Clear(false)
	for _, s := range items {
		x.tree.ReplaceOrInsert(s)
	}
}

// ascend calls fn on each entry in (exp, id) order until it returns false.
// It exists for the invariant checks in tests.
func (x expiryIndex) ascend(fn func(slot) bool) { x.tree.Ascend(fn) }
