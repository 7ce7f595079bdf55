package ttlstore

// A Typed view's cache of decoded values, and how it follows the
// collection. What it promises: a value cached for an entry is the decoding
// of exactly that entry; nothing stays cached for an entry the collection
// no longer stores; at most one value is cached per stored document; and
// CacheLen and CacheBytes count exactly what the tables hold.
//
// A view's cache is split like the collection, in numShards parts by the
// same hash of the id, and part i is guarded by the collection's
// shards[i].mu. So a typed read is a Collection.Read that, under the same
// read lock, also finds the value cached for the entry it read: one lock,
// and the cache's slot is loaded before the collection's table is probed,
// so that the two memory accesses overlap rather than follow each other
// (see Typed.read).
//
// A value is filed under its id's hash and its entry (the pointer). Entries
// are immutable and a write makes a new one, so a value is always the
// decoding of exactly the entry it is filed with. A value is filed only
// while its entry is the one stored under its id (checked under the write
// lock, in store), and the collection tells every view of each entry it
// replaces or removes (typedViews.forget, called after the removal, with no
// lock held), which drops that entry's value and no other: nothing stays
// cached for an entry that is gone. Holding the entry keeps its memory
// alive, so its address cannot be reused for another entry while it is
// cached.

import (
	"math/bits"
	"reflect"
	"sync"
	"sync/atomic"
)

// typedShard is one part of a Typed view's cache: a hash table of decoded
// values, open addressing with linear probing, the values in the slots. A
// Go map would do, but a hit costs it two or three cache misses (control
// word, key, value, each in a line of its own), where a slot here is one;
// and a lookup can load the slot before it knows which entry it looks for
// (see Typed.Read). Its collection shard's mu guards it.
type typedShard[T any] struct {
	// slots has a power-of-two length, or is nil while the shard is
	// empty. An empty slot has a nil e. A value sits at its home slot
	// (see home) or after it, with no empty slot between. A value is
	// never written after it is filed: readers get copies.
	slots []typedSlot[T]
	// hashes[i] is the hash of the id of slots[i].e. It is apart from
	// the slots, which reads do not need it in: a slot is then 8 bytes
	// more than a T, which for a T of 56, 120 or 248 bytes fills whole
	// cache lines.
	hashes []uint64
	n      int
	_      [8]byte // the next shard's header in another cache line
}

// typedSlot is one slot of a typedShard: a value and the entry it was
// decoded from.
type typedSlot[T any] struct {
	e *entry
	v T
}

// minTypedSlots is the size of a shard's table when it is first filled.
const minTypedSlots = 16

// home is the slot where a value for an id with hash h goes first: the top
// bits of h (the bottom ones pick the shard). The table must not be nil.
func (sh *typedShard[T]) home(h uint64) int {
	return int(h >> (64 - bits.Len(uint(len(sh.slots)-1))))
}

// find returns the slot holding the value of e, probing from the slot at
// (e's home, or after it), or nil.
func (sh *typedShard[T]) find(e *entry, at int) *typedSlot[T] {
	mask := len(sh.slots) - 1
	for i := at; ; i = (i + 1) & mask {
		switch sl := &sh.slots[i]; sl.e {
		case e:
			return sl
		case nil:
			return nil
		}
	}
}

// get returns the value filed for e, whose id has hash h.
func (sh *typedShard[T]) get(h uint64, e *entry) (T, bool) {
	if sh.slots != nil {
		if sl := sh.find(e, sh.home(h)); sl != nil {
			return sl.v, true
		}
	}
	var zero T
	return zero, false
}

// put files v for e, whose id has hash h, unless a value for e is filed
// already, and reports whether it did. The lock must be held for writing.
func (sh *typedShard[T]) put(h uint64, e *entry, v T) bool {
	if (sh.n+1)*4 > len(sh.slots)*3 {
		sh.resize(max(minTypedSlots, 2*len(sh.slots)))
	}
	mask := len(sh.slots) - 1
	i := sh.home(h)
	for ; sh.slots[i].e != nil; i = (i + 1) & mask {
		if sh.slots[i].e == e {
			return false
		}
	}
	sh.slots[i] = typedSlot[T]{e: e, v: v}
	sh.hashes[i] = h
	sh.n++
	return true
}

// remove takes the value filed for e, whose id has hash h, out, if there
// is one, and reports whether there was. The lock must be held for writing.
func (sh *typedShard[T]) remove(h uint64, e *entry) bool {
	if sh.slots == nil {
		return false
	}
	mask := len(sh.slots) - 1
	i := sh.home(h)
	for ; sh.slots[i].e != e; i = (i + 1) & mask {
		if sh.slots[i].e == nil {
			return false
		}
	}
	// Close the gap: move back each value after it that the empty slot
	// would otherwise cut off from its home.
	for j := (i + 1) & mask; sh.slots[j].e != nil; j = (j + 1) & mask {
		k := sh.home(sh.hashes[j])
		// The value at j stays if its home is cyclically in (i, j].
		if i <= j && i < k && k <= j || i > j && (i < k || k <= j) {
			continue
		}
		sh.slots[i], sh.hashes[i] = sh.slots[j], sh.hashes[j]
		i = j
	}
	sh.slots[i], sh.hashes[i] = typedSlot[T]{}, 0
	sh.n--
	switch {
	case sh.n == 0:
		sh.slots, sh.hashes = nil, nil
	case len(sh.slots) > minTypedSlots && sh.n*4 < len(sh.slots):
		sh.resize(len(sh.slots) / 2)
	}
	return true
}

// resize moves the values to a new table of size slots, a power of two.
func (sh *typedShard[T]) resize(size int) {
	old, oldHashes := sh.slots, sh.hashes
	sh.slots, sh.hashes = make([]typedSlot[T], size), make([]uint64, size)
	mask := size - 1
	for j, sl := range old {
		if sl.e == nil {
			continue
		}
		h := oldHashes[j]
		i := sh.home(h)
		for sh.slots[i].e != nil {
			i = (i + 1) & mask
		}
		sh.slots[i], sh.hashes[i] = sl, h
	}
}

// typedCache is what the collection tells of the entries it removes: a
// Typed view's cache, whatever its type.
type typedCache interface {
	forget(e *entry)
	forgetAll(removed []slot)
}

// typedViews is a Collection's registry of its Typed views.
type typedViews struct {
	// mu protects byType, and serializes changes to caches.
	mu sync.Mutex
	// byType holds the *Typed[T] of each type T a view was made for.
	byType map[reflect.Type]any
	// caches is every view's cache, nil while there is none, so that the
	// collection's writes pay one load to learn that there is nothing to
	// tell. It is replaced, never changed, when a view is added.
	caches atomic.Pointer[[]typedCache]
}

// forget tells every view that e is no longer stored: a write replaced it,
// or a delete, Touch, sweep or purge removed it. It must be called after
// the removal, with no lock held.
// It is inlined: without views it costs one load and a branch.
func (v *typedViews) forget(e *entry) {
	if cs := v.caches.Load(); cs != nil {
		forgetIn(*cs, e)
	}
}

// forgetAll is forget for every entry of removed.
func (v *typedViews) forgetAll(removed []slot) {
	if cs := v.caches.Load(); cs != nil && len(removed) > 0 {
		forgetAllIn(*cs, removed)
	}
}

// forgetIn and forgetAllIn are the work of forget and forgetAll, kept out
// of line so that those are inlined into the collection's calls.
//
//go:noinline
func forgetIn(caches []typedCache, e *entry) {
	for _, c := range caches {
		c.forget(e)
	}
}

//go:noinline
func forgetAllIn(caches []typedCache, removed []slot) {
	for _, c := range caches {
		c.forgetAll(removed)
	}
}

// store caches v as the decoding of e, whose id has hash h, if e is still
// the entry stored under its id (expired or not) and no value is cached for
// it yet. Checked under the lock that removals take, this is what keeps the
// values of removed entries out: a removal either comes first, and then e
// is not filed, or comes after, and then its forget finds e's value.
func (t *Typed[T]) store(h uint64, e *entry, v T) {
	s := &t.c.shards[h&(numShards-1)]
	sh := &t.shards[h&(numShards-1)]
	s.mu.Lock()
	slots := len(sh.slots)
	if s.docs.get(h, e.id()) == e && sh.put(h, e, v) {
		t.n.Add(1)
		t.bytes.Add(t.valueSize(e) + int64(len(sh.slots)-slots)*t.slotSize)
	}
	s.mu.Unlock()
}

// forget drops the value cached for e, if any.
func (t *Typed[T]) forget(e *entry) {
	if t.n.Load() == 0 {
		// Nothing to drop. (A value for e filed concurrently would have
		// been filed before e was removed, and counted, under the lock
		// the removal took before this call.)
		return
	}
	s, h := t.c.shardFor(e.id())
	s.mu.Lock()
	t.removeLocked(h, e)
	s.mu.Unlock()
}

// forgetAll is forget for every entry of removed, taking each shard's lock
// once for a run of entries of one shard (a sweep's batch is one run).
func (t *Typed[T]) forgetAll(removed []slot) {
	if t.n.Load() == 0 {
		return
	}
	var locked *shard
	for _, sl := range removed {
		s, h := t.c.shardFor(sl.e.id())
		if s != locked {
			if locked != nil {
				locked.mu.Unlock()
			}
			s.mu.Lock()
			locked = s
		}
		t.removeLocked(h, sl.e)
	}
	if locked != nil {
		locked.mu.Unlock()
	}
}

// removeLocked drops the value cached for e, whose id has hash h, if any.
// The collection shard's mu must be held for writing.
func (t *Typed[T]) removeLocked(h uint64, e *entry) {
	sh := &t.shards[h&(numShards-1)]
	slots := len(sh.slots)
	if sh.remove(h, e) {
		t.n.Add(-1)
		t.bytes.Add(-t.valueSize(e) + int64(len(sh.slots)-slots)*t.slotSize)
	}
}

// valueSize is what the value cached for e counts in CacheBytes beyond its
// slot: the length of e's JSON, if a T can refer to memory of its own.
func (t *Typed[T]) valueSize(e *entry) int64 {
	if t.heap {
		return int64(e.n)
	}
	return 0
}
