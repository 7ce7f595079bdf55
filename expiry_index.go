package ttlstore

import "github.com/google/btree"

// expiryIndex groups the entries of one shard by expiry second: one bucket
// per second that some entry expires at, in a B-tree ordered by second so
// that the earliest is its minimum, plus one bucket outside the tree (never)
// for the entries that cannot expire. Every entry of the shard is in exactly
// one bucket, so the live entries can be listed without visiting the
// expired ones, and the sweeper, which looks only at the tree, never sees an
// entry that cannot expire (R10).
//
// Expiry seconds are shared by many entries (every write in the same second
// under the same TTL makes one), so there are far fewer buckets than entries
// and the B-tree stays small. Within a bucket, entries sit in a slice in no
// order; each entry's pos is its place there, so removing one is a swap with
// the last.
//
// It is guarded by its shard's mutex; every method must be called with that
// mutex held (read methods with at least the read lock).
//
// Costs: insert O(1) when the bucket is the one last inserted into (the
// usual case) and O(log b) otherwise, b the number of buckets; remove
// O(log b); popping k expired entries O(k + log b); counting the expired
// entries O(log b + expired buckets); listing the live entries O(live + log b).
type expiryIndex struct {
	tree  *btree.BTreeG[*bucket]
	never bucket  // the entries that cannot expire; exp is neverExpires
	last  *bucket // the bucket in tree last inserted into, nil if it was removed
	probe bucket  // a key for lookups by writers, so that they do not allocate
}

// bucket holds the entries that expire at one second.
type bucket struct {
	exp   int64
	items []*entry
}

// indexDegree is the B-tree's degree: buckets are few, so it stays shallow.
const indexDegree = 16

func bucketLess(a, b *bucket) bool { return a.exp < b.exp }

func newExpiryIndex() expiryIndex {
	// A small free list: buckets come and go once a second at most, and
	// the default list (32 nodes) would cost 256 bytes in each of the
	// numShards shards of every collection.
	tree := btree.NewWithFreeListG(indexDegree, bucketLess, btree.NewFreeListG[*bucket](2))
	return expiryIndex{tree: tree, never: bucket{exp: neverExpires}}
}

// find returns the bucket for exp, nil when there is none. It uses x.probe,
// so the caller must hold the write lock.
func (x *expiryIndex) find(exp int64) *bucket {
	if exp == neverExpires {
		return &x.never
	}
	if b := x.last; b != nil && b.exp == exp {
		return b
	}
	x.probe.exp = exp
	b, _ := x.tree.Get(&x.probe)
	return b
}

// insert adds e, which expires at exp, to its bucket.
func (x *expiryIndex) insert(e *entry, exp int64) {
	b := x.find(exp)
	if b == nil {
		b = &bucket{exp: exp}
		x.tree.ReplaceOrInsert(b)
	}
	if b != &x.never {
		x.last = b
	}
	e.pos = int32(len(b.items))
	b.items = append(b.items, e)
}

// remove deletes e from the bucket for exp, which must be the expiry it was
// inserted with.
func (x *expiryIndex) remove(e *entry, exp int64) {
	b := x.find(exp)
	last := len(b.items) - 1
	moved := b.items[last]
	b.items[e.pos] = moved
	moved.pos = e.pos
	b.items[last] = nil
	b.items = b.items[:last]
	if last == 0 && b != &x.never {
		x.drop(b)
	}
}

// drop removes the empty bucket b from the tree.
func (x *expiryIndex) drop(b *bucket) {
	x.tree.Delete(b)
	if x.last == b {
		x.last = nil
	}
}

// min returns the earliest expiry second, or neverExpires when nothing can
// expire.
func (x *expiryIndex) min() int64 {
	if b, ok := x.tree.Min(); ok {
		return b.exp
	}
	return neverExpires
}

// popExpired removes up to max entries expired at second now, earliest
// second first, and appends them to out.
func (x *expiryIndex) popExpired(now int64, max int, out []slot) []slot {
	for max > 0 {
		b, ok := x.tree.Min()
		if !ok || !isExpired(b.exp, now) {
			break
		}
		k := min(max, len(b.items))
		rest := len(b.items) - k
		for _, e := range b.items[rest:] {
			out = append(out, slot{e: e, exp: b.exp})
		}
		clear(b.items[rest:])
		b.items = b.items[:rest]
		max -= k
		if rest == 0 {
			x.drop(b)
		}
	}
	return out
}

// countExpired counts the entries expired at second now.
func (x *expiryIndex) countExpired(now int64) int {
	n := 0
	x.tree.Ascend(func(b *bucket) bool {
		if !isExpired(b.exp, now) {
			return false
		}
		n += len(b.items)
		return true
	})
	return n
}

// appendLive appends the entries not expired at second now to out, without
// looking at the expired ones. from is scratch space for the lookup (not
// x.probe: readers share the index under the read lock).
func (x *expiryIndex) appendLive(now int64, from *bucket, out []*entry) []*entry {
	if now < neverExpires-1 {
		from.exp = now + 1
		x.tree.AscendGreaterOrEqual(from, func(b *bucket) bool {
			out = append(out, b.items...)
			return true
		})
	}
	return append(out, x.never.items...)
}

// rebuild replaces the index's contents with entries, each expiring at the
// second exp returns for it.
func (x *expiryIndex) rebuild(entries []*entry, exp func(*entry) int64) {
	x.tree.Clear(false)
	x.last = nil
	clear(x.never.items)
	x.never.items = x.never.items[:0]
	for _, e := range entries {
		x.insert(e, exp(e))
	}
}

// ascend calls fn on each bucket in order of expiry, the bucket of entries
// that cannot expire last, until it returns false.
func (x *expiryIndex) ascend(fn func(*bucket) bool) {
	more := true
	x.tree.Ascend(func(b *bucket) bool {
		more = fn(b)
		return more
	})
	if more {
		fn(&x.never)
	}
}
