package ttlstore

import (
	"encoding/json"
	"errors"
	"hash/maphash"
	"iter"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ttlstore/ttlstore/internal/jsonscan"
)

// Defaults for the Options fields whose zero value means "the default".
const (
	// DefaultSweepInterval is the shortest time between two background
	// sweeps when Options.SweepInterval is zero.
	DefaultSweepInterval = time.Second

	// DefaultSweepBatch is the most documents a sweep deletes from one shard
	// before it releases the shard's lock, when Options.SweepBatch is zero.
	DefaultSweepBatch = 256

	// DefaultMaxDocumentSize is the largest document, in bytes of JSON, when
	// Options.MaxDocumentSize is zero: 2 MiB, as in Azure Cosmos DB.
	DefaultMaxDocumentSize = 2 << 20

	// ManualSweep, as Options.SweepInterval, starts no background sweeper:
	// expired documents stay in memory (invisible) until the caller runs
	// Sweep.
	ManualSweep time.Duration = -1
)

// Limits on a document that are not configurable (R8).
const (
	// MaxIDLength is the longest id, in bytes of UTF-8.
	MaxIDLength = 1023

	// MaxDepth is the deepest nesting of objects and arrays a document may
	// have; the document itself is level 1.
	MaxDepth = 128
)

// Options configures a Collection. The zero value is a working default: TTL
// off, the wall clock, a background sweeper, documents up to 2 MiB.
type Options struct {
	// DefaultTTL is the collection's default time to live, in seconds:
	// nil turns TTL off (nothing expires, documents' own ttl is ignored);
	// TTL(Never) turns it on with no default (only documents with their own
	// ttl expire); TTL(n), 1 <= n <= MaxTTL, makes documents without a ttl
	// expire n seconds after their last write. Other values make New fail
	// with ErrInvalidTTL.
	DefaultTTL *int32

	// Clock is the source of time. Tests pass a *clock.Mock and move time
	// with Add; the background sweeper then sets no timers on it, but reads
	// it every few milliseconds of real time while something can expire,
	// so a jump of any length costs one sweep (see the package
	// documentation). nil means the wall clock as read at New, advanced
	// from then on by the monotonic clock (as time.Since measures), so that
	// a step of the system clock can neither bring expired documents back
	// nor expire live ones early; inside a testing/synctest bubble it is
	// the bubble's virtual clock.
	Clock Clock

	// SweepInterval is the shortest time between two background sweeps, so
	// that deletions coalesce. The sweeper otherwise sleeps until the
	// earliest expiry it knows of. Zero means DefaultSweepInterval;
	// ManualSweep (any negative value) starts no background sweeper.
	SweepInterval time.Duration

	// SweepBatch is the most documents a sweep deletes from one shard while
	// holding its lock; it bounds how long a sweep can stall readers and
	// writers. Zero means DefaultSweepBatch; negative values make New fail.
	SweepBatch int

	// MaxDocumentSize is the largest document accepted, in bytes of JSON as
	// passed to the write (after marshaling, for a Go value). Zero means
	// DefaultMaxDocumentSize; negative values and values above
	// math.MaxInt32 (2 GiB) make New fail. It governs writes only: Open
	// loads every document its directory holds, even one larger than the
	// limit (written under a larger one), and keeps it until it is
	// replaced, deleted or expires.
	MaxDocumentSize int

	// OnExpire, when not nil, is called once for every document removed from
	// memory because it expired: by a sweep, by SetDefaultTTL's purge, or by
	// a write that reuses the id of an expired document. It is called
	// without any lock held, on the goroutine doing the removal (the
	// background sweeper, or the caller of Sweep, SetDefaultTTL or the
	// write), one document at a time. It may call any of the Collection's
	// methods, writes that need room at MaxDocuments or MaxBytes included,
	// except Close from the background sweeper's goroutine, which would wait
	// for itself: a call that reports holds no lock and no room a write
	// could wait for. A write reports what it removed at its end, after it
	// stored its own document (or gave up) and, in a durable collection,
	// once the removals' log records are as durable as its own. Explicit
	// deletes are not reported.
	OnExpire func(Document)

	// MaxDocuments bounds how many documents the collection holds, expired
	// documents not yet swept included; zero means no bound. It is one
	// budget for the whole collection. What a write does at the bound is
	// Eviction's to say. Negative values make New fail. SetLimits changes it.
	MaxDocuments int

	// MaxBytes bounds the total weight of the documents the collection
	// holds, expired documents not yet swept included; zero means no
	// bound. A document's weight is close to the heap it holds: see
	// Document.Weight. A document heavier than MaxBytes by itself is
	// refused with ErrTooLarge. Negative values make New fail. SetLimits
	// changes it.
	MaxBytes int64

	// Eviction is what a write does when it would take the collection past
	// MaxDocuments or MaxBytes. Expired documents not yet swept always go
	// first; then the zero value, NoEviction, refuses the write with
	// ErrFull, while the other policies evict live documents (see
	// EvictionPolicy). Values other than the named ones make New fail.
	Eviction EvictionPolicy

	// OnEvict, when not nil, is called once for every live document
	// removed to make room under MaxDocuments or MaxBytes, with the same
	// rules as OnExpire: without any lock held, on the goroutine doing the
	// removal (the writer, or the caller of SetLimits or Open), one
	// document at a time; it may call any of the Collection's methods,
	// writes that need room included (they evict, or are refused with
	// ErrFull, as from any goroutine). A write reports what it evicted at
	// its end, before it returns: once its own document is stored (a Read
	// of it finds it), or once it has given up and given back the room
	// its evictions made. A refused write has evicted nothing, but in the
	// races EvictionPolicy lists. Expired documents removed to make room
	// are reported to OnExpire, not here.
	OnEvict func(Document)

	// Sync is a durable collection's policy for syncing its log: the zero
	// value, SyncAlways, returns from a write only once it would survive a
	// power loss. See SyncPolicy for what the others may lose. New ignores
	// it.
	Sync SyncPolicy
}

// numShards is how many independently locked parts the documents are split
// into, by a hash of the id, so that goroutines working on different
// documents seldom wait for each other. It is 128 rather than fewer so that,
// while a sweep holds one shard's lock, under 1% of reads land on it: with 32
// shards 3% did, and a mass expiry raised the p99 of reads a hundredfold.
const numShards = 128

// shard holds the documents whose id hashes to it.
type shard struct {
	// mu protects docs and index, and the pos field of their entries;
	// but Read looks up docs without it (see table).
	mu sync.RWMutex
	// docs maps each id to its entry.
	docs  table
	index expiryIndex
	// minExp is index.min(), cached so that sweeps can skip the shard
	// without taking mu. It is written with mu held. It points into
	// Collection.minExps.
	minExp *atomic.Int64
	// etag is the last _etag the shard issued; mu protects it. Shard i
	// issues the _etags equal to i modulo numShards, so that shards never
	// issue the same one and a write need not share a counter with the
	// writes of other shards.
	etag uint64
	// size is docs.len(), cached so that the calls that visit every shard
	// (Stats, All, Query) can skip an empty one without taking mu: a
	// small collection leaves most of its shards empty. It is written
	// with mu held.
	size atomic.Int32
	_    [64]byte // keeps neighbouring shards' mutexes off one cache line
}

// Collection is an in-memory collection of JSON documents that expire by
// Azure Cosmos DB's time-to-live rules. Create one with New; the zero value
// is not usable.
//
// A Collection is safe for concurrent use by any number of goroutines. Every
// method that reads returns what was true at one instant between its call and
// its return; see the package documentation for what iteration guarantees.
type Collection struct {
	clock    Clock
	mono     *monoClock    // the clock, when it is the default one: read without an interface call
	waiter   waiter        // how the background sweeper waits on clock
	interval time.Duration // > 0 with a background sweeper, < 0 without
	batch    int
	maxSize  int
	onExpire func(Document)
	onEvict  func(Document)
	seed     maphash.Seed
	// def is the DefaultTTL, 0 for off. It is written with policyMu and
	// every shard's mu held, so holding either is enough to read it stably.
	def atomic.Int32
	// redefining is odd while SetDefaultTTL changes the DefaultTTL and
	// re-files the documents, and grows by 2 with each change: Read, which
	// takes no lock, uses it to tell that its look was not cut in two by a
	// change (R12).
	redefining atomic.Uint64
	closed     atomic.Bool

	// The fields above are read by every call and seldom written; the
	// ones below are written by writes (lim's usage) or reads (counts).
	// The pads keep them on cache lines of their own, so that a write
	// does not take from every other core the line their reads need.
	_ [64]byte

	// lim is the bound and the usage (bound.go).
	lim limits
	_   [64]byte

	// policyMu is held for writing by SetDefaultTTL (which then takes every
	// shard's mu as well) and for reading by the calls that look at every
	// shard (All, Query, Len, Stats), so that each of those sees one
	// DefaultTTL from start to end.
	policyMu sync.RWMutex
	_        [64]byte
	// counts counts the reads' hits and misses.
	counts readCounts

	shards [numShards]shard
	// minExps are the shards' minExp side by side, 16 cache lines that
	// only a change of a shard's earliest expiry writes: the calls that
	// read every shard's (the sweeper, a write at the bound) read them
	// rather than 128 lines of the shards, which every write to a shard
	// takes from the other processors.
	minExps [numShards]atomic.Int64

	swept atomic.Uint64 // documents removed because they expired

	// d is the durable mode's state; nil for a collection made by New.
	d *durable

	loads loadTable // ReadOrLoad's loads in progress (readthrough.go); the zero value is ready

	// views are the Typed views' caches (typed.go), told of every entry
	// replaced or removed, after the removal and with no lock held. The
	// zero value has none.
	views typedViews

	closeOnce sync.Once
	done      chan struct{} // closed by Close: the sweeper must stop
	stopped   chan struct{} // closed by the sweeper when it has stopped
	wake      chan struct{} // tells the sweeper an earlier expiry exists
	// armed is the expiry second the sweeper's timer waits for: writes of
	// documents expiring sooner wake it. neverExpires while it is idle (so
	// any expiry wakes it); math.MinInt64 while it waits for SweepInterval
	// to pass, when no expiry can make it fire sooner.
	armed atomic.Int64
}

// New returns a Collection configured by opts and starts its background
// sweeper (unless opts.SweepInterval is ManualSweep). Call Close to stop the
// sweeper. It returns an error matching ErrInvalidTTL for a bad DefaultTTL
// and ErrInvalidOptions for other fields out of range.
func New(opts Options) (*Collection, error) {
	c, def, err := newCollection("new", opts)
	if err != nil {
		return nil, err
	}
	c.def.Store(def)
	c.start()
	return c, nil
}

// newCollection checks opts and returns an empty Collection with TTL off
// and no goroutine started, and the DefaultTTL opts asks for.
func newCollection(op string, opts Options) (*Collection, int32, error) {
	def, err := checkDefaultTTL(op, opts.DefaultTTL)
	if err != nil {
		return nil, 0, err
	}
	switch {
	case opts.SweepBatch < 0:
		return nil, 0, newErrorDetail(op, "", ErrInvalidOptions, "SweepBatch "+strconv.Itoa(opts.SweepBatch)+" is negative")
	case opts.MaxDocumentSize < 0:
		return nil, 0, newErrorDetail(op, "", ErrInvalidOptions, "MaxDocumentSize "+strconv.Itoa(opts.MaxDocumentSize)+" is negative")
	case opts.MaxDocumentSize > math.MaxInt32:
		// An entry keeps lengths and offsets in 32 bits.
		return nil, 0, newErrorDetail(op, "", ErrInvalidOptions, "MaxDocumentSize "+strconv.Itoa(opts.MaxDocumentSize)+" is more than 2147483647")
	case opts.Sync > SyncNever:
		return nil, 0, newErrorDetail(op, "", ErrInvalidOptions, "Sync "+opts.Sync.String()+" is not a SyncPolicy")
	case opts.Eviction > EvictSoonestExpiry:
		return nil, 0, newErrorDetail(op, "", ErrInvalidOptions, "Eviction "+opts.Eviction.String()+" is not an EvictionPolicy")
	}
	if err := checkLimits(op, opts.MaxDocuments, opts.MaxBytes); err != nil {
		return nil, 0, err
	}
	c := &Collection{
		clock:    opts.Clock,
		interval: opts.SweepInterval,
		batch:    opts.SweepBatch,
		maxSize:  opts.MaxDocumentSize,
		onExpire: opts.OnExpire,
		onEvict:  opts.OnEvict,
		seed:     maphash.MakeSeed(),
		done:     make(chan struct{}),
		stopped:  make(chan struct{}),
		wake:     make(chan struct{}, 1),
	}
	if c.clock == nil {
		c.mono = newMonoClock()
		c.clock = c.mono
	}
	c.waiter = newWaiter(c.clock)
	if c.interval == 0 {
		c.interval = DefaultSweepInterval
	}
	if c.batch == 0 {
		c.batch = DefaultSweepBatch
	}
	if c.maxSize == 0 {
		c.maxSize = DefaultMaxDocumentSize
	}
	// Start the _etag sequences at a random point, so that _etags from
	// different collections (or runs) do not look alike. Below 2^62, so
	// that they never wrap and a durable collection can resume after the
	// largest one it finds.
	c.resumeEtags(rand.Uint64() >> 2)
	c.lim.maxDocs.Store(int64(opts.MaxDocuments))
	c.lim.maxBytes.Store(opts.MaxBytes)
	c.lim.policy = opts.Eviction
	c.lim.done = sync.NewCond(&c.lim.roomMu)
	c.lim.floor.init()
	if opts.Eviction == EvictColdest {
		c.lim.cold = newColdest(c.seed, opts.MaxDocuments, c.reads, &c.lim.filing)
	}
	c.armed.Store(neverExpires)
	for i := range c.shards {
		s := &c.shards[i]
		s.index = newExpiryIndex()
		s.minExp = &c.minExps[i]
		s.minExp.Store(neverExpires)
	}
	return c, def, nil
}

// reads returns the hits and misses counted by reads since New.
func (c *Collection) reads() (hits, misses uint64) { return c.counts.sum() }

// start starts the background sweeper, unless there is to be none.
func (c *Collection) start() {
	if c.interval > 0 {
		go c.runSweeper()
	} else {
		close(c.stopped)
	}
}

// now is the clock's current whole Unix second.
func (c *Collection) now() int64 {
	if c.mono != nil {
		return c.mono.unixSeconds()
	}
	return unixSeconds(c.clock.Now())
}

// resumeEtags makes the next _etag of every shard come after last (about:
// within numShards).
func (c *Collection) resumeEtags(last uint64) {
	last &^= numShards - 1
	for i := range c.shards {
		c.shards[i].etag = last + uint64(i)
	}
}

// nextEtag issues the shard's next _etag. s.mu must be held for writing.
func (s *shard) nextEtag() uint64 {
	s.etag += numShards
	return s.etag
}

// shardFor returns the shard of id and the id's hash, which the shard's
// table uses too.
func (c *Collection) shardFor(id string) (*shard, uint64) {
	h := maphash.String(c.seed, id)
	return &c.shards[h&(numShards-1)], h
}

// writeMode says what a write requires of the id's current document.
type writeMode uint8

const (
	mustNotExist writeMode = iota // Create
	mayExist                      // Upsert
	mustExist                     // Replace
)

// Create stores doc, which must not share its id with a live document
// (ErrConflict). An expired document with the same id does not count: it is
// replaced as if it were gone (R9).
//
// doc is the JSON object as []byte or json.RawMessage, a Document, or any
// value that encoding/json marshals to an object, such as a struct with
// `json:"id"` and `json:"ttl,omitempty"` fields. The collection copies what
// it keeps: changing doc afterwards changes nothing stored. It sets _ts and
// _etag, replacing any the caller sent, and keeps everything else, the
// top-level ttl included, as written.
//
// It returns the stored document, or an error matching ErrInvalidDocument,
// ErrInvalidTTL or ErrTooLarge for a bad document (which changes nothing), or
// ErrClosed.
func (c *Collection) Create(doc any) (Document, error) {
	return c.write("create", doc, mustNotExist, "", false)
}

// Upsert stores doc, replacing the live document with its id if there is
// one. It accepts the same documents and returns the same errors as Create,
// except ErrConflict.
func (c *Collection) Upsert(doc any) (Document, error) {
	return c.write("upsert", doc, mayExist, "", false)
}

// Replace stores doc in place of the live document with its id, or returns
// ErrNotFound when there is none (an expired document counts as none). The
// whole document is replaced: if doc has no ttl, the document inherits the
// DefaultTTL again, counted from the new _ts (R5). It accepts the same
// documents as Create.
func (c *Collection) Replace(doc any) (Document, error) {
	return c.write("replace", doc, mustExist, "", false)
}

// ReplaceIfMatch is Replace on the condition that the live document's _etag
// is etag; otherwise it returns ErrPreconditionFailed and changes nothing.
// An expired document is ErrNotFound, even when etag matches its old _etag.
func (c *Collection) ReplaceIfMatch(doc any, etag string) (Document, error) {
	return c.write("replace", doc, mustExist, etag, true)
}

func (c *Collection) write(op string, doc any, mode writeMode, ifMatch string, checkMatch bool) (Document, error) {
	if c.closed.Load() {
		return Document{}, newError(op, "", ErrClosed)
	}
	e, err := c.prepare(op, doc)
	if err != nil {
		return Document{}, err
	}
	if err := c.checkWeight(op, e); err != nil {
		return Document{}, err
	}
	w := weigh(e)
	id := e.id()

	// r is the room evictions made for this write, held for it, and the
	// log position of the last of them.
	var r room
	s, h := c.shardFor(id)
	for {
		s.mu.Lock()
		// The time is read under the lock, which orders this write after
		// every earlier one: _ts never goes back for one id, and the
		// expiry of old is judged at the same second.
		now := c.now()
		def := c.def.Load()
		var old *entry
		ref := s.docs.lookup(h, id)
		if ref != nil {
			old = ref.Load()
		}
		had := old != nil
		var oldExp int64
		oldLive := false
		if had {
			oldExp = old.expiry(def)
			oldLive = !isExpired(oldExp, now)
		}
		switch {
		case mode == mustNotExist && oldLive:
			s.mu.Unlock()
			return Document{}, c.failed(&r, newError(op, id, ErrConflict))
		case mode == mustExist && !oldLive:
			s.mu.Unlock()
			return Document{}, c.failed(&r, newError(op, id, ErrNotFound))
		case checkMatch && !old.etagIs(ifMatch):
			t := old.etagText()
			s.mu.Unlock()
			return Document{}, c.failed(&r, newErrorDetail(op, id, ErrPreconditionFailed, "If-Match "+strconv.Quote(ifMatch)+", _etag "+strconv.Quote(string(t[:]))))
		}
		dDocs, dBytes := int64(1), w
		if had {
			dDocs, dBytes = 0, w-weigh(old)
		}
		c.lim.startFiling()
		// The room made for this write counts as used already.
		if !c.lim.reserve(dDocs, dBytes, &r) {
			// pinned is what the write leaves that the policy may not
			// evict for it (see canMake): its own document, which
			// takes the place of the id's current one, if any.
			pinned := w
			if had && oldExp == neverExpires && c.lim.policy == EvictSoonestExpiry {
				pinned -= weigh(old) // counted in fixedBytes
			}
			n := s.docs.len()
			fit, err := c.makeRoomLocked(s, id, dDocs, dBytes, pinned, now, &r)
			if !fit {
				c.lim.stopFiling()
				s.mu.Unlock()
				c.lim.ended()
				if err == nil {
					err = c.makeRoom(op, id, dDocs, dBytes, pinned, &r)
				}
				if err != nil {
					if errors.Is(err, ErrFull) {
						c.lim.refused.Add(1)
					}
					return Document{}, c.failed(&r, err)
				}
				continue
			}
			if s.docs.len() != n {
				ref = s.docs.lookup(h, id) // evicted from s: ref may be stale
			}
		}
		r.give(&c.lim) // in the reservation now
		e.ts = now
		e.etag = s.nextEtag()
		exp := expiryAt(now, effectiveTTL(def, e.ttl))
		var lsn uint64
		if c.d != nil {
			// Logged before it is applied: a write the log refuses (a
			// full disk, a failed disk) changes nothing.
			if lsn, err = c.d.log.appendPut(e); err != nil {
				c.lim.release(dDocs, dBytes)
				c.lim.stopFiling()
				s.mu.Unlock()
				c.lim.ended()
				return Document{}, c.failed(&r, err)
			}
		}
		c.storeLocked(s, h, e, exp, ref, oldExp)
		c.lim.stopFiling()
		s.mu.Unlock()
		c.lim.ended()

		c.noteExpiry(exp)
		if had {
			c.views.forget(old)
		}
		err := c.synced(max(lsn, r.lsn))
		// What the write replaced, swept or evicted, once it is as
		// durable as the write (so that a power loss cannot make a
		// restart report it again), and even if the sync failed: it is
		// gone from memory.
		if had && !oldLive {
			c.swept.Add(1)
			c.report([]slot{{e: old, exp: oldExp}})
		}
		c.reportEvicted(&r)
		if err != nil {
			return Document{}, err
		}
		return Document{e: e, exp: exp}, nil
	}
}

// failed returns err, the error of a write that changed nothing, after
// giving back the room evicted for it, waiting for the log records of what
// was removed for it and reporting those removals: they stand, whether or
// not the write does. (A write refuses before it evicts when evicting
// cannot make its room; evictions stand behind a failed write only when
// other calls ran at the same time, or the log failed: see
// EvictionPolicy.) A failure to sync them is returned instead.
func (c *Collection) failed(r *room, err error) error {
	if r.held() != 0 {
		c.lim.release(r.docs, r.bytes)
		r.give(&c.lim)
	}
	// Whether or not r held room, makeRoom may have ended a pick's
	// count: tell a room maker that waits for it (one atomic load when
	// none does).
	c.lim.ended()
	var serr error
	if r.lsn != 0 {
		serr = c.synced(r.lsn)
	}
	c.reportEvicted(r) // holding nothing: OnEvict and OnExpire may write
	if serr != nil {
		return serr
	}
	return err
}

// prepare validates doc and builds its entry, all but the parts that depend
// on the time of the write (_ts, _etag), outside any lock.
func (c *Collection) prepare(op string, doc any) (*entry, error) {
	src, err := source(doc)
	if err != nil {
		return nil, newErrorDetail(op, "", ErrInvalidDocument, err.Error())
	}
	if len(src) > c.maxSize {
		return nil, newErrorDetail(op, "", ErrTooLarge,
			strconv.Itoa(len(src))+" bytes, more than the limit of "+strconv.Itoa(c.maxSize))
	}
	// The stored form is never longer than src, so this is the only
	// allocation of a write when src is compact JSON without _ts and _etag.
	e, data := newEntry(len(src))
	out, f, err := jsonscan.Strip(data[:0], src, MaxDepth)
	if err != nil {
		return nil, newErrorDetail(op, "", ErrInvalidDocument, strings.TrimPrefix(err.Error(), "jsonscan: "))
	}
	id, detail := checkID(f, out)
	if detail != "" {
		return nil, newErrorDetail(op, "", ErrInvalidDocument, detail)
	}
	ttl, detail := parseTTL(f.TTLKind, f.TTLRaw)
	if detail != "" {
		return nil, newErrorDetail(op, id, ErrInvalidTTL, detail)
	}
	idOff := f.IDStart
	if f.IDEscaped || len(src)-len(out) > maxSlack {
		// Copy to an entry of the exact size, with room after the JSON
		// for the unescaped id if it has escapes.
		extra := 0
		if f.IDEscaped {
			extra = len(id)
			idOff = len(out)
		}
		e, data = newEntry(len(out) + extra)
		copy(data, out)
		copy(data[len(out):], id)
	}
	*e = entry{
		ttl:   ttl,
		n:     uint32(len(out)),
		idOff: uint32(idOff),
		idLen: uint32(len(id)),
	}
	return e, nil
}

// maxSlack is the most bytes a write leaves unused at the end of its entry
// (where src had _ts and _etag members or whitespace between members)
// rather than copy the document again.
const maxSlack = 16

// source returns the JSON bytes of a write's argument. The bytes may belong
// to the caller or to a stored entry: they are only read, and copied.
func source(doc any) ([]byte, error) {
	switch v := doc.(type) {
	case nil:
		return nil, errors.New("document is nil")
	case []byte:
		return v, nil
	case json.RawMessage:
		return v, nil
	case Document:
		if v.e == nil {
			return nil, errors.New("document is the zero Document")
		}
		// The stored form without its stamp: writing it stamps it anew.
		return v.e.raw(), nil
	case *Document:
		if v == nil {
			return nil, errors.New("document is nil")
		}
		return source(*v)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		return b, nil
	}
}

// checkID returns the document's id or says what is wrong with it (R8). For
// an id written without escapes the string points into out, so it costs no
// allocation.
func checkID(f jsonscan.Fields, out []byte) (string, string) {
	var id string
	switch {
	case f.IDKind == jsonscan.KindNone:
		return "", "missing id"
	case f.IDKind != jsonscan.KindString:
		return "", "id " + quoteRaw(f.IDRaw) + " is a JSON " + f.IDKind.String() + ", not a string"
	case f.IDEscaped:
		s, err := jsonscan.Unquote(f.IDRaw)
		if err != nil {
			return "", "id: " + err.Error()
		}
		id = s
	default:
		raw := out[f.IDStart:f.IDEnd]
		id = unsafe.String(unsafe.SliceData(raw), len(raw))
	}
	switch {
	case id == "":
		return "", "id is empty"
	case len(id) > MaxIDLength:
		return "", "id is " + strconv.Itoa(len(id)) + " bytes, longer than " + strconv.Itoa(MaxIDLength)
	case strings.ContainsAny(id, `/\`):
		return "", "id " + strconv.Quote(id) + ` contains "/" or "\"`
	}
	return id, ""
}

// storeLocked files e, which expires at exp, in s under the hash h of its
// id, and tells the eviction policy. ref is the table slot of the id's
// current entry, which expires at oldExp, from lookup; or nil when the id is
// new. The caller accounts for e's weight in the usage; storeLocked counts
// it among the documents that cannot expire (limits.pin). s.mu must be held
// for writing.
func (c *Collection) storeLocked(s *shard, h uint64, e *entry, exp int64, ref *atomic.Pointer[entry], oldExp int64) {
	if ref != nil {
		old := ref.Load()
		if c.lim.cold != nil {
			c.lim.cold.replaced(old, e)
		}
		s.unindexLocked(old, oldExp)
		c.lim.pin(old, oldExp, -1)
		ref.Store(e) // the same id: replaced in place, no second probe
	} else {
		if c.lim.cold != nil {
			c.lim.cold.added(e)
		}
		s.docs.put(h, e, c.seed)
		s.size.Store(int32(s.docs.len()))
	}
	s.indexLocked(e, exp)
	c.lim.pin(e, exp, 1)
	c.lim.floor.lower(exp)
}

// indexLocked adds e, which expires at exp, to the shard's expiry index.
// s.mu must be held for writing.
func (s *shard) indexLocked(e *entry, exp int64) {
	s.index.insert(e, exp)
	if exp < s.minExp.Load() {
		s.minExp.Store(exp)
	}
}

// unindexLocked removes e, which expires at exp, from the shard's expiry
// index. s.mu must be held for writing.
func (s *shard) unindexLocked(e *entry, exp int64) {
	s.index.remove(e, exp)
	if exp == s.minExp.Load() && exp != neverExpires {
		s.minExp.Store(s.index.min())
	}
}

// Read returns the live document with the given id, or an error matching
// ErrNotFound when there is none: an expired document is not found from the
// second it expires, whether or not it was swept (R9). After Close it returns
// ErrClosed.
func (c *Collection) Read(id string) (Document, error) { return c.read(id, true) }

// read is Read; it counts the read in Stats and for the eviction policy if
// count is true, as it is but for ReadOrLoad's second look.
func (c *Collection) read(id string, count bool) (Document, error) {
	if c.closed.Load() {
		return Document{}, newError("read", id, ErrClosed)
	}
	s, h := c.shardFor(id)
	e, exp, live := c.look(s, h, id)
	if !live {
		if count {
			c.counts.miss()
		}
		if e == nil {
			return Document{}, newError("read", id, ErrNotFound)
		}
		return Document{}, (*expiredError)(e)
	}
	if count {
		c.counts.hit()
		if c.lim.cold != nil {
			e.touch()
		}
	}
	return Document{e: e, exp: exp}, nil
}

// look returns the entry with the given id, whose hash is h, from its shard
// s: nil if there is none; its expiry under the DefaultTTL; and whether it is
// live. It takes no lock and writes nothing, in the common case, and what it
// returns was true at one instant during the call:
//
//   - The table's find returns an entry that was the id's at the instant it
//     loaded it, or nil if the id had none at some instant (see table).
//   - redefining is the same, and even, before and after: no SetDefaultTTL
//     changed the DefaultTTL or purged documents in between, so the entry
//     and the DefaultTTL belong together (R12). If one did, or does,
//     look takes the shard's lock, which waits for it to finish.
//   - The clock is read after the entry was loaded. A document live at that
//     reading was live at the load, when it was the id's. One expired at the
//     reading had perhaps not yet expired at the load; so look finds the
//     id's entry again, and if it is still the same one, it was the id's
//     and expired at that second look. (Otherwise, the lock decides.)
func (c *Collection) look(s *shard, h uint64, id string) (e *entry, exp int64, live bool) {
	epoch := c.redefining.Load()
	if epoch&1 == 0 {
		e, ok := s.docs.find(h, id)
		switch {
		case !ok:
		case e == nil:
			if c.redefining.Load() == epoch {
				return nil, 0, false
			}
		default:
			exp = e.expiry(c.def.Load())
			if exp == neverExpires || !isExpired(exp, c.now()) {
				if c.redefining.Load() == epoch {
					return e, exp, true
				}
			} else if again, ok := s.docs.find(h, id); ok && again == e && c.redefining.Load() == epoch {
				return e, exp, false
			}
		}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e = s.docs.get(h, id); e == nil {
		return nil, 0, false
	}
	exp = e.expiry(c.def.Load())
	return e, exp, exp == neverExpires || !isExpired(exp, c.now())
}

// Delete removes the live document with the given id, or returns ErrNotFound
// when there is none (an expired document counts as none). After Close it
// returns ErrClosed.
func (c *Collection) Delete(id string) error {
	return c.remove("delete", id, "", false)
}

// DeleteIfMatch is Delete on the condition that the live document's _etag is
// etag; otherwise it returns ErrPreconditionFailed and deletes nothing.
func (c *Collection) DeleteIfMatch(id, etag string) error {
	return c.remove("delete", id, etag, true)
}

func (c *Collection) remove(op, id, ifMatch string, checkMatch bool) error {
	if c.closed.Load() {
		return newError(op, id, ErrClosed)
	}
	s, h := c.shardFor(id)
	s.mu.Lock()
	e := s.docs.get(h, id)
	ok := e != nil
	var exp int64
	if ok {
		exp = e.expiry(c.def.Load())
	}
	if !ok || isExpired(exp, c.now()) {
		s.mu.Unlock()
		return newError(op, id, ErrNotFound)
	}
	if checkMatch && !e.etagIs(ifMatch) {
		t := e.etagText()
		s.mu.Unlock()
		return newErrorDetail(op, id, ErrPreconditionFailed, "If-Match "+strconv.Quote(ifMatch)+", _etag "+strconv.Quote(string(t[:])))
	}
	var lsn uint64
	if c.d != nil {
		var err error
		if lsn, err = c.d.log.appendDelete(id); err != nil {
			s.mu.Unlock()
			return err
		}
	}
	c.deleteLocked(s, h, e, exp)
	s.mu.Unlock()
	c.views.forget(e)
	return c.synced(lsn)
}

// deleteLocked removes e, filed in s under the hash h of its id and
// expiring at exp, takes its weight off the usage and tells the eviction
// policy. s.mu must be held for writing.
func (c *Collection) deleteLocked(s *shard, h uint64, e *entry, exp int64) {
	c.unfileLocked(s, h, e, exp)
	if c.lim.cold != nil {
		c.lim.cold.removedOne(e)
	}
	c.lim.release(1, weigh(e))
}

// unfileLocked is deleteLocked but for the usage, where e's room stays
// counted (but for limits.pin's), and the eviction policy, which is not
// told.
func (c *Collection) unfileLocked(s *shard, h uint64, e *entry, exp int64) {
	s.docs.remove(h, e)
	s.size.Store(int32(s.docs.len()))
	s.unindexLocked(e, exp)
	c.lim.pin(e, exp, -1)
}

// Touch rewrites the live document with the given id unchanged but for a new
// _ts and _etag, which restarts its countdown: the sliding expiration of a
// session cache. It returns the document as stored, ErrNotFound when there is
// no live document with the id, or ErrClosed.
func (c *Collection) Touch(id string) (Document, error) {
	if c.closed.Load() {
		return Document{}, newError("touch", id, ErrClosed)
	}
	s, h := c.shardFor(id)
	s.mu.Lock()
	ref := s.docs.lookup(h, id)
	now := c.now()
	def := c.def.Load()
	var oldExp int64
	if ref != nil {
		oldExp = ref.Load().expiry(def)
	}
	if ref == nil || isExpired(oldExp, now) {
		s.mu.Unlock()
		return Document{}, newError("touch", id, ErrNotFound)
	}
	old := ref.Load()
	// A new entry with the same JSON, and the same weight: Documents
	// already returned keep the old _ts and _etag.
	size := old.size()
	e, data := newEntry(size)
	copy(data, old.bytes(size))
	*e = entry{ts: now, etag: s.nextEtag(), ttl: old.ttl, n: old.n, idOff: old.idOff, idLen: old.idLen}
	exp := expiryAt(now, effectiveTTL(def, e.ttl))
	var lsn uint64
	if c.d != nil {
		var err error
		if lsn, err = c.d.log.appendPut(e); err != nil {
			s.mu.Unlock()
			return Document{}, err
		}
	}
	c.storeLocked(s, h, e, exp, ref, oldExp)
	s.mu.Unlock()
	c.noteExpiry(exp)
	c.views.forget(old)
	if err := c.synced(lsn); err != nil {
		return Document{}, err
	}
	return Document{e: e, exp: exp}, nil
}

// Len returns the number of live documents: expired documents are not
// counted, whether or not they were swept.
func (c *Collection) Len() int {
	st := c.Stats()
	return st.Live
}

// Stats describes a Collection's contents: all shards judged at one reading
// of the clock, taken when Stats begins, and under one DefaultTTL. Each
// shard is counted under its own lock, so under concurrent writes the counts
// may include writes made while Stats ran.
type Stats struct {
	// Live is the number of documents that have not expired.
	Live int
	// Expired is the number of expired documents still in memory, waiting
	// for a sweep. None of them is visible.
	Expired int
	// Swept is the number of expired documents removed from memory since
	// New (by sweeps, SetDefaultTTL's purge, and writes that reused their
	// ids). Explicit deletes are not counted.
	Swept uint64
	// TornBytes is, for a durable collection, the size of the torn tail
	// Open cut from the end of its log: writes a crash or a full disk
	// interrupted (a torn record, or whole records whose group lacks its
	// commit record), which no caller had been told had succeeded. 0
	// otherwise.
	TornBytes int64
	// LogSyncs is, for a durable collection, how many times its log was
	// fsynced since Open: with SyncAlways and many writers, far fewer
	// than the writes (they share fsyncs). 0 otherwise.
	LogSyncs uint64

	// Hits and Misses count the reads (Read, and the reads of ReadOrLoad
	// and Typed views) that found a live document and those that did not,
	// since New or Open.
	Hits, Misses uint64
	// Bytes is the weight of the documents in memory, expired ones not
	// yet swept included (see Document.Weight): what counts against
	// MaxBytes.
	Bytes int64
	// Evicted is the number of live documents evicted to make room under
	// MaxDocuments or MaxBytes, and EvictedBytes their weight.
	Evicted, EvictedBytes uint64
	// Refused is the number of writes refused with ErrFull.
	Refused uint64
	// MaxDocuments and MaxBytes are the bounds in force (0: none).
	MaxDocuments int
	MaxBytes     int64
}

// Stats returns the collection's counts. It costs O(shards + expired
// documents not yet swept). It works after Close, on the contents as Close
// left them.
func (c *Collection) Stats() Stats {
	c.policyMu.RLock()
	defer c.policyMu.RUnlock()
	var st Stats
	now := c.now()
	for i := range c.shards {
		s := &c.shards[i]
		if s.size.Load() == 0 {
			continue
		}
		s.mu.RLock()
		expired := 0
		if s.minExp.Load() <= now {
			expired = s.index.countExpired(now)
		}
		st.Live += s.docs.len() - expired
		st.Expired += expired
		s.mu.RUnlock()
	}
	st.Hits, st.Misses = c.counts.sum()
	st.Swept = c.swept.Load()
	st.Bytes = c.lim.bytes.Load()
	st.Evicted = c.lim.evicted.Load()
	st.EvictedBytes = c.lim.evictedBytes.Load()
	st.Refused = c.lim.refused.Load()
	st.MaxDocuments = int(c.lim.maxDocs.Load())
	st.MaxBytes = c.lim.maxBytes.Load()
	if c.d != nil {
		st.TornBytes = c.d.torn
		c.d.log.mu.Lock()
		st.LogSyncs = c.d.log.syncs
		c.d.log.mu.Unlock()
	}
	return st
}

// All returns an iterator over the live documents, in no particular order.
// See Query.
func (c *Collection) All() iter.Seq[Document] { return c.Query(nil) }

// Query returns an iterator over the live documents for which match returns
// true (all of them when match is nil), in no particular order.
//
// Before it yields the first document, the iterator takes a snapshot of
// references to the live documents (8 bytes each), shard by shard, under one
// DefaultTTL: every document it yields was live when its shard was read, and
// a concurrent SetDefaultTTL applies to all of the snapshot or to none of it.
// Writes made while the snapshot is taken may or may not be in it; writes
// made after it are not. No lock is held while match and the loop body run,
// so they may call any method of the Collection. It works after Close, on
// the contents as Close left them.
func (c *Collection) Query(match func(Document) bool) iter.Seq[Document] {
	return func(yield func(Document) bool) {
		snap, def := c.snapshot()
		for _, e := range snap {
			d := Document{e: e, exp: expiryAt(e.ts, effectiveTTL(def, e.ttl))}
			if match != nil && !match(d) {
				continue
			}
			if !yield(d) {
				return
			}
		}
	}
}

// snapshot returns the live entries and the DefaultTTL they were judged by.
func (c *Collection) snapshot() ([]*entry, int32) {
	c.policyMu.RLock()
	defer c.policyMu.RUnlock()
	// Count the live documents first, for the capacity; a document
	// written meanwhile only makes append grow the snapshot.
	n := 0
	now := c.now()
	for i := range c.shards {
		s := &c.shards[i]
		if s.size.Load() == 0 {
			continue
		}
		s.mu.RLock()
		n += s.docs.len()
		if s.minExp.Load() <= now {
			n -= s.index.countExpired(now)
		}
		s.mu.RUnlock()
	}
	snap := make([]*entry, 0, n)
	for i := range c.shards {
		s := &c.shards[i]
		if s.size.Load() == 0 {
			continue
		}
		s.mu.RLock()
		snap = s.index.appendLive(c.now(), snap)
		s.mu.RUnlock()
	}
	return snap, c.def.Load()
}

// DefaultTTL returns the collection's DefaultTTL: nil when TTL is off,
// otherwise a new pointer to Never or a number of seconds.
func (c *Collection) DefaultTTL() *int32 {
	d := c.def.Load()
	if d == 0 {
		return nil
	}
	return &d
}

// SetDefaultTTL changes the DefaultTTL (nil, TTL(Never) or TTL(n); see
// Options.DefaultTTL) and re-resolves every document's expiry atomically: no
// call sees a mix of the old setting and the new (R12). Documents already
// expired under the old setting stay gone: they are removed as part of the
// change and reported to OnExpire, so nothing that was reported expired comes
// back (R13). Documents not yet expired get their expiry from the new
// setting, counted from their _ts, so some may expire at once (R14, R15).
//
// It holds every shard's lock for O(n) in the number of documents.
// It returns ErrInvalidTTL for a value out of range (changing nothing) and
// ErrClosed after Close.
func (c *Collection) SetDefaultTTL(ttl *int32) error {
	def, err := checkDefaultTTL("set DefaultTTL", ttl)
	if err != nil {
		return err
	}
	if c.closed.Load() {
		return newError("set DefaultTTL", "", ErrClosed)
	}
	c.lockAll()
	var purged []slot
	var lsn uint64
	if old := c.def.Load(); def != old {
		now := c.now()
		if c.d != nil {
			if lsn, err = c.d.log.appendDefault(old, def, now); err != nil {
				c.unlockAll()
				return err
			}
		}
		purged = c.redefineLocked(old, def, now)
	}
	c.unlockAll()

	c.swept.Add(uint64(len(purged)))
	c.wakeSweeper()
	c.views.forgetAll(purged)
	err = c.synced(lsn) // before the report, as for a write
	c.report(purged)
	return err
}

// lockAll takes policyMu and every shard's lock, for writing.
func (c *Collection) lockAll() {
	c.policyMu.Lock()
	for i := range c.shards {
		c.shards[i].mu.Lock()
	}
}

// unlockAll releases what lockAll took.
func (c *Collection) unlockAll() {
	for i := range c.shards {
		c.shards[i].mu.Unlock()
	}
	c.policyMu.Unlock()
}

// redefineLocked removes the documents expired at second now under the
// DefaultTTL purgeDef (R13) and files the rest under def, which becomes the
// DefaultTTL. It returns what it removed. SetDefaultTTL passes the current
// DefaultTTL as purgeDef; replaying a log passes the one the record names,
// which a snapshot taken after the change may already have replaced. Every
// lock must be held (lockAll).
func (c *Collection) redefineLocked(purgeDef, def int32, now int64) []slot {
	c.redefining.Add(1) // odd: Read takes the lock until it is done
	defer c.redefining.Add(1)
	cur := c.def.Load()
	var purged []slot
	var keep []*entry
	for i := range c.shards {
		s := &c.shards[i]
		keep = keep[:0]
		s.index.ascend(func(e *entry, exp int64) bool {
			if purgeDef != cur {
				exp = e.expiry(purgeDef)
			}
			if !isExpired(exp, now) {
				keep = append(keep, e)
				return true
			}
			s.docs.remove(maphash.String(c.seed, e.id()), e)
			c.lim.release(1, weigh(e))
			purged = append(purged, slot{e: e, exp: exp})
			return true
		})
		s.index.rebuild(keep, func(e *entry) int64 { return e.expiry(def) })
		s.minExp.Store(s.index.min())
		c.lim.floor.lower(s.minExp.Load())
		s.size.Store(int32(s.docs.len()))
	}
	clear(keep)
	c.def.Store(def)
	if c.lim.cold != nil {
		c.lim.cold.removed(purged)
	}
	c.recountFixedLocked()
	return purged
}

// recountFixedLocked sets limits.fixedDocs and fixedBytes to the
// documents that cannot expire, as the expiry index files them, under
// EvictSoonestExpiry. Every shard's lock must be held.
func (c *Collection) recountFixedLocked() {
	if c.lim.policy != EvictSoonestExpiry {
		return
	}
	var docs, bytes int64
	for i := range c.shards {
		for _, e := range c.shards[i].index.never.items {
			docs++
			bytes += weigh(e)
		}
	}
	c.lim.fixedDocs.Store(docs)
	c.lim.fixedBytes.Store(bytes)
}

// Close stops the background sweeper and waits for it to finish the batch
// and the OnExpire calls it is in. After Close, writes, Read, Delete, Touch,
// SetDefaultTTL and Compact return ErrClosed; Len, Stats, All, Query and
// Sweep keep working on the contents as they stand, and expiry still
// applies to them.
//
// For a durable collection, Close also waits for a compaction under way,
// the background compactor's or a caller's Compact (however slow the disk,
// and with the directory still locked), syncs whatever the log holds
// unsynced, closes it and releases the directory; it returns the first I/O
// error the log met (ErrIO), if any. A Compact called once Close has begun
// returns ErrClosed.
// Close is idempotent: later calls return nil.
func (c *Collection) Close() error {
	var err error
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		close(c.done)
		<-c.stopped
		if c.d != nil {
			err = c.d.close()
		}
	})
	return err
}
