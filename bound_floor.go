package ttlstore

import (
	"sync"
	"sync/atomic"
)

// expiryFloor is a second at or before the expiry of every document in the
// collection: while the clock is before it, nothing has expired. A write at
// the bound must sweep expired documents before it evicts a live one, and
// learns that there are none from one atomic load here instead of reading
// the 128 shards' minExp (earliestExpiry), whose cache lines the writes to
// those shards keep taking away (5% of a write that evicts, measured).
//
// The floor may be too early (the document that set it may be gone), never
// too late. Indexing a document calls lower, which costs one atomic load
// unless the document expires before the floor; refresh raises the floor
// to the shards' earliest expiry, which a write at the bound does when it
// finds the floor passed (see sweepForRoom).
//
// refresh reads the shards without their locks, so a document indexed
// meanwhile, after refresh read its shard, must not be missed: while a
// refresh is under way, watch is neverExpires and every lower takes mu and
// counts in seq, and the refresh raises the floor only if seq has not
// changed. A lower that read watch before refresh set it had stored its
// shard's minExp before that (sync/atomic's operations are sequentially
// consistent), so refresh reads it.
type expiryFloor struct {
	// floor is the bound. It is written with mu held, read without.
	floor atomic.Int64
	// watch is the expiry below which lower must take mu: floor, or
	// neverExpires while a refresh is under way. It is written with mu
	// held, read without.
	watch atomic.Int64

	// mu protects seq and refreshing, and orders the writes of floor and
	// watch. No lock may be taken while it is held.
	mu sync.Mutex
	// seq counts the lowers that took mu and the ends of refreshes: a
	// refresh that finds it changed raises nothing.
	seq uint64
	// refreshing counts the refreshes under way.
	refreshing int
}

// init sets the floor for a collection with no documents.
func (f *expiryFloor) init() {
	f.floor.Store(neverExpires)
	f.watch.Store(neverExpires)
}

// lower takes account of a document that expires at exp. It must be called
// after exp is in its shard's minExp (indexLocked), under the shard's lock.
func (f *expiryFloor) lower(exp int64) {
	if exp < f.watch.Load() {
		f.lowerSlow(exp)
	}
}

func (f *expiryFloor) lowerSlow(exp int64) {
	f.mu.Lock()
	f.seq++
	if exp < f.floor.Load() {
		f.floor.Store(exp)
		if f.refreshing == 0 {
			f.watch.Store(exp)
		}
	}
	f.mu.Unlock()
}

// expiredBy reports whether a document may have expired at second now:
// false means none has.
func (f *expiryFloor) expiredBy(now int64) bool { return isExpired(f.floor.Load(), now) }

// refresh sets the floor to what scan returns, the earliest expiry of the
// shards read without their locks, unless a document was indexed before
// the floor meanwhile, and returns it.
func (f *expiryFloor) refresh(scan func() int64) int64 {
	f.mu.Lock()
	f.refreshing++
	f.watch.Store(neverExpires)
	seq := f.seq
	f.mu.Unlock()

	m := scan()

	f.mu.Lock()
	f.refreshing--
	if f.seq == seq {
		f.floor.Store(m)
	}
	f.seq++ // a refresh under way alongside raises nothing
	if f.refreshing == 0 {
		f.watch.Store(f.floor.Load())
	}
	f.mu.Unlock()
	return m
}
