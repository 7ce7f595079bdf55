package ttlstore

import (
	"slices"

	"github.com/google/btree"
)

// expiryIndex orders the entries of one shard that can expire by (exp, id),
// so the entries are unique in it and the next to expire is its minimum.
// Entries that never expire are kept out of it. It is guarded by its shard's
// mutex; every method must be called with that mutex held (read methods with
// at least the read lock).
//
// Costs: insert and delete O(log n); popping the k expired entries O(k log n);
// counting them O(k + log n); min O(log n), but callers read the cached
// minimum in shard.minExp instead.
type expiryIndex struct {
	tree *btree.BTreeG[*entry]
}

// indexDegree is the B-tree's degree: nodes hold up to 2*32-1 pointers, a
// few cache lines, which keeps the tree shallow (four levels at 1M entries).
const indexDegree = 32

func lessByExpiry(a, b *entry) bool {
	if a.exp != b.exp {
		return a.exp < b.exp
	}
	return a.id < b.id
}

func newExpiryIndex() expiryIndex {
	return expiryIndex{tree: btree.NewG(indexDegree, lessByExpiry)}
}

// insert adds e, which must not be in the index and must be able to expire.
func (x expiryIndex) insert(e *entry) { x.tree.ReplaceOrInsert(e) }

// remove deletes e; its exp must be the value it was inserted with.
func (x expiryIndex) remove(e *entry) { x.tree.Delete(e) }

// len is the number of entries that can expire.
func (x expiryIndex) len() int { return x.tree.Len() }

// min returns the earliest expiry second, or neverExpires when empty.
func (x expiryIndex) min() int64 {
	if e, ok := x.tree.Min(); ok {
		return e.exp
	}
	return neverExpires
}

// popExpired removes up to max entries expired at second now, earliest
// first, and appends them to out.
func (x expiryIndex) popExpired(now int64, max int, out []*entry) []*entry {
	for n := 0; n < max; n++ {
		e, ok := x.tree.Min()
		if !ok || !isExpired(e.exp, now) {
			break
		}
		x.tree.DeleteMin()
		out = append(out, e)
	}
	return out
}

// countExpired counts the entries expired at second now.
func (x expiryIndex) countExpired(now int64) int {
	n := 0
	x.tree.Ascend(func(e *entry) bool {
		if !isExpired(e.exp, now) {
			return false
		}
		n++
		return true
	})
	return n
}

// rebuild replaces the index's contents with the entries of docs that can
// expire, after their exp fields were recomputed. Sorting first and then
// inserting in order costs less than inserting at random.
func (x *expiryIndex) rebuild(docs map[string]*entry) {
	items := make([]*entry, 0, len(docs))
	for _, e := range docs {
		if e.exp != neverExpires {
			items = append(items, e)
		}
	}
	slices.SortFunc(items, func(a, b *entry) int {
		switch {
		case lessByExpiry(a, b):
			return -1
		case lessByExpiry(b, a):
			return 1
		}
		return 0
	})
	x.tree.Clear(false)
	for _, e := range items {
		x.tree.ReplaceOrInsert(e)
	}
}

// ascend calls fn on each entry in (exp, id) order until it returns false.
// It exists for the invariant checks in tests.
func (x expiryIndex) ascend(fn func(*entry) bool) { x.tree.Ascend(fn) }
