package ttlstore

import (
	"errors"
	"strconv"
)

// A bounded collection: Options.MaxDocuments and Options.MaxBytes cap what
// the collection holds, and Options.Eviction says what a write does at the
// cap. The bound is one budget for the whole collection, kept in two
// counters that writers reserve from with compare-and-swap, so no write can
// take the collection past it, however many writers there are. A write that
// finds no room makes it, when it can, without letting go of its shard's
// lock (makeRoomLocked): when nothing has expired, it evicts what the policy
// says from its own shard, or from another whose lock is free (TryLock),
// and goes on. Otherwise it releases its shard's lock and makes room
// (makeRoom): it sweeps expired documents first, then evicts as the policy
// says, then tries again. Eviction never waits for a lock while it holds
// another, so it cannot deadlock with writers. Before it evicts, a write
// checks that evicting all the policy may evict could make its room
// (canMake), so that a write refused evicts nothing, but in races. What a
// write sweeps and evicts is reported to OnExpire and OnEvict at its end,
// once it holds no room, so that those may write in turn (see
// limits.filing).
//
// This file is the mode's face: EvictionPolicy, SetLimits and the checks
// of the bounds and of a document's weight. The mechanism is in
// bound_budget.go (weights, and the counters writers reserve from),
// bound_room.go (making room for a write, and reporting what it removed),
// bound_evict.go (evicting one document) and bound_floor.go (the lower
// bound on expiries that tells a write at the bound nothing has expired).
// The EvictColdest policy itself is eviction.go.

// EvictionPolicy says what a write does when the collection is at
// Options.MaxDocuments or Options.MaxBytes. Whatever the policy, expired
// documents not yet swept are removed first (and reported to OnExpire): they
// are gone already, as far as any reader can tell.
//
// A write evicts only when evicting what the policy may evict would make
// its room; otherwise it is refused with ErrFull and evicts nothing. So a
// write refused, or failing for another reason, leaves evictions behind it
// only in a race: while it made room, with its shard's lock let go, other
// calls ran that took its victims or the room they left (concurrent writes
// making room or filling it with documents that cannot expire, a SetLimits
// lowering the bounds, a SetDefaultTTL making documents unable to expire),
// or changed its id (ErrConflict, ErrNotFound, ErrPreconditionFailed on its
// next look); or a durable collection's log failed (ErrIO). Those
// evictions stand, and are reported as any others. A write that runs
// alone, with no other call at the same time, is refused before it evicts
// anything.
type EvictionPolicy uint8

const (
	// NoEviction, the zero value, refuses a write that needs room with
	// ErrFull and changes nothing: storage semantics, as Azure Cosmos DB
	// and Redis's noeviction have them. No live document is ever removed
	// but by its expiry or a Delete. A write that needs no more room (an
	// overwrite with a document as heavy or lighter) always goes in.
	NoEviction EvictionPolicy = iota

	// EvictColdest evicts the documents least likely to be read again, to
	// keep the hot set: cache semantics. Every write is stored and
	// readable at once. The policy is W-TinyLFU, as in Caffeine and otter:
	// a new document enters a small window of the most recent writes; a
	// document leaving the window is kept only if it has been read (or
	// written) more often than the coldest document of the main part,
	// judged by a sketch of recent frequencies that also remembers
	// documents already evicted; documents read again while in the main
	// part are protected. Reads only bump a counter in the document: they
	// take no lock for the policy. Writes of every kind take the policy's
	// one mutex, briefly. Of the 40 bytes of overhead that
	// Document.Weight counts for every policy, 16 stand for a document's
	// place in the policy's tables (its queues, its sketch and its ghosts
	// of recent evictions); what the tables hold beyond that (they are
	// powers of two, up to twice what they need), and beyond what a new
	// collection's held, counts against MaxBytes as well, so that the
	// heap stays within 10 % of MaxBytes (TestBoundHoldsHeap): documents
	// of about 90 bytes then fill 94 % of MaxBytes. A new collection's
	// tables, not counted, are its sketch (32 KiB, or 8 bytes a document
	// of MaxDocuments if more) and about 512 bytes.
	//
	// The sketch and the ghosts hash ids with a fixed seed, as Caffeine's do:
	// a workload replayed in the same order, from one goroutine, keeps the
	// same documents and has the same hit ratio in every run, and a test sees
	// the same evictions each time. Where documents expire, that holds while
	// expired documents are swept before a write needs room (Sweep after each
	// move of a mock clock, with ManualSweep): the sweep that makes a write's
	// room stops once it has the room, and takes the expired documents in the
	// order of the table's shards, which its random seed places, so which stay
	// to be evicted may differ (TestEvictColdestSameInEveryRun). W-TinyLFU
	// carries one sketch collision that turns a duel far, so that with a seed
	// drawn for each collection (Options.RandomizeEviction, and every
	// collection before 2026-12-07) two runs of a workload differ: by up to
	// 0.3 points of hit ratio on 98 of the 112 public trace rows of
	// docs/bounded.md, up to about 1.6 on a few (a database trace and large
	// disk traces at a small share of their keys). A fixed seed lets ids be
	// chosen to collide in the sketch, so that one-off documents look popular
	// and are admitted over the hot set; where clients choose the ids, set
	// RandomizeEviction.
	EvictColdest

	// EvictSoonestExpiry evicts the documents that would expire soonest,
	// as Redis's volatile-ttl does: a session cache that must shed load
	// loses the sessions closest to their end. Documents that cannot
	// expire are never evicted; when they leave no room for the write,
	// even with every other document evicted, the write is refused with
	// ErrFull, as under NoEviction, and evicts nothing. (A write that
	// replaces the id's document does not count that one among those it
	// may evict.)
	EvictSoonestExpiry
)

// String returns the policy's name, as in the Go source.
func (p EvictionPolicy) String() string {
	switch p {
	case NoEviction:
		return "NoEviction"
	case EvictColdest:
		return "EvictColdest"
	case EvictSoonestExpiry:
		return "EvictSoonestExpiry"
	}
	return "EvictionPolicy(" + strconv.Itoa(int(p)) + ")"
}

// checkLimits validates the bounds for op ("new", "set limits", ...).
func checkLimits(op string, maxDocs int, maxBytes int64) error {
	switch {
	case maxDocs < 0:
		return newErrorDetail(op, "", ErrInvalidOptions, "MaxDocuments "+strconv.Itoa(maxDocs)+" is negative")
	case maxBytes < 0:
		return newErrorDetail(op, "", ErrInvalidOptions, "MaxBytes "+strconv.FormatInt(maxBytes, 10)+" is negative")
	}
	return nil
}

// checkWeight returns ErrTooLarge for a document heavier than MaxBytes by
// itself: no eviction could make room for it.
func (c *Collection) checkWeight(op string, e *entry) error {
	if max := c.lim.maxBytes.Load(); max > 0 {
		if w := weigh(e); w > max {
			return newErrorDetail(op, e.key(), ErrTooLarge, "it weighs "+strconv.FormatInt(w, 10)+
				" bytes (see Document.Weight), more than MaxBytes "+strconv.FormatInt(max, 10))
		}
	}
	return nil
}

// SetLimits changes Options.MaxDocuments and Options.MaxBytes (0 for no
// bound). When the collection holds more than the new bounds, expired
// documents are swept and then, under an evicting policy, live documents
// are evicted until it fits, on the caller's goroutine, each reported to
// OnExpire or OnEvict. Under NoEviction nothing live is removed: writes
// that need room are refused until deletes and expiry bring the usage under
// the bounds; so too under EvictSoonestExpiry once only documents that
// cannot expire are left. A write needs room only for what it adds to
// memory: one that replaces a version of its id in place, live or expired
// but not yet swept, adds no document, and goes in at a bound below the
// usage as long as it leaves the collection no further over it. One over an
// expired version that needs room all the same (its weight grows at a
// MaxBytes it is at) brings a document back, and is judged as a new
// document with the expired versions swept: under NoEviction it is
// refused unless the live documents leave it room, whichever expired
// documents the sweep for its room happened to take first.
//
// It returns ErrInvalidOptions for a negative bound (changing nothing),
// ErrClosed after Close, and ErrIO when a durable collection could not log
// an eviction: the new bounds are then in force, the evictions logged
// before the failure stand, and writes fail with ErrIO from then on.
func (c *Collection) SetLimits(maxDocuments int, maxBytes int64) error {
	const op = "set limits"
	if err := checkLimits(op, maxDocuments, maxBytes); err != nil {
		return err
	}
	if c.closed.Load() {
		return newError(op, "", ErrClosed)
	}
	if maxBytes > 0 && c.lim.cold != nil {
		c.lim.cold.chargeTo(&c.lim.policyBytes) // counted before the bound is in force
	}
	c.lim.maxDocs.Store(int64(maxDocuments))
	c.lim.maxBytes.Store(maxBytes)
	return c.shrink(op)
}

// shrink brings the collection within its bounds, as far as its policy
// allows.
func (c *Collection) shrink(op string) error {
	var r room
	err := c.makeRoom(op, "", -1, -1, 0, 0, 0, &r)
	c.lim.release(r.docs, r.bytes) // nothing to put in it
	r.give(&c.lim)
	c.lim.ended()
	if errors.Is(err, ErrFull) {
		err = nil // writes are refused until the usage falls
	}
	if err2 := c.synced(r.lsn); err == nil {
		err = err2
	}
	c.reportEvicted(&r) // holding nothing: OnEvict may write
	return err
}
