package ttlstore

import (
	"hash/maphash"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
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
	// deletes are not reported, DeletePartition's included, even of a
	// document that had expired when its partition was deleted.
	OnExpire func(Document)

	// MaxDocuments bounds how many documents the collection holds, expired
	// documents not yet swept included; zero means no bound. It is one
	// budget for the whole collection. What a write does at the bound is
	// Eviction's to say. Negative values make New fail. SetLimits changes it.
	MaxDocuments int

	// MaxBytes bounds the total weight of the documents the collection
	// holds, expired documents not yet swept included; zero means no
	// bound. A document's weight is close to the heap it holds: see
	// Document.Weight. Under EvictColdest the policy's tables count
	// against it too, where they hold more than the documents' weights
	// count for them (see EvictColdest). A document heavier than MaxBytes
	// by itself is refused with ErrTooLarge. Negative values make New
	// fail. SetLimits changes it.
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

	// MaxPatchOperations is the most operations one Patch may hold. Zero
	// means DefaultMaxPatchOperations (10, as in Azure Cosmos DB);
	// negative values make New fail.
	MaxPatchOperations int

	// PartitionKeyPath is the collection's partition key path, Azure
	// Cosmos DB's partitionKey.paths[0]: a JSON Pointer such as "/tenant"
	// or "/a/b" ("~1" for a '/' and "~0" for a '~' in a member name),
	// each segment non-empty, not into "_ts", "_etag" or another system
	// property ("/id" is allowed). A document's partition key is the
	// value at that path: a string, number, boolean or null, or none when
	// the path is absent (see PartitionKey). The empty string, the zero
	// value, means no partition key: the id alone names a document, and
	// the collection is the one partition PartitionKeyNone. With one, a
	// document is named by its partition key and id, the calls that name a
	// document by id alone return ErrPartitionKeyRequired, and their In
	// forms name the partition (see docs/partitions.md). Other values make
	// New and Open fail with ErrInvalidOptions, as does Open with a path
	// other than the one the directory was written with.
	PartitionKeyPath string

	// Sync is a durable collection's policy for syncing its log: the zero
	// value, SyncAlways, returns from a write only once it would survive a
	// power loss. See SyncPolicy for what the others may lose. New ignores
	// it.
	Sync SyncPolicy

	// ChangeFeed turns on the change feed (ReadFeed, WaitFeed, Feed) and
	// says how much of it to keep. The zero value turns it off, and then
	// writes pay nothing for it. A durable collection keeps the feed in its
	// log and reads it back at Open (see docs/changefeed.md).
	ChangeFeed ChangeFeedOptions
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
	// purges are the DeletePartitions waiting for the sweeper
	// (partition_delete.go), published for readers that hold no lock; nil
	// when there are none. It is written, and the purges' left sets
	// changed, with mu held. It points into Collection.lookups, next to
	// what every Read loads of docs (docs.readers).
	purges *atomic.Pointer[[]*purge]
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
	// parts is the partition index (partition_index.go): the entries of
	// each partition, by its encoding; nil in a collection without a
	// partition key. mu protects it.
	parts map[string]partSet
	_     [64]byte // keeps neighbouring shards' mutexes off one cache line
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
	maxPatch int
	onExpire func(Document)
	onEvict  func(Document)
	pk       *pkPath // the partition key path; nil for none
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

	// lim is the bound and the usage (bound_budget.go).
	lim limits
	_   [64]byte

	// policyMu is held for writing by SetDefaultTTL (which then takes every
	// shard's mu as well) and for reading by the calls that look at every
	// shard (All, Query, Len, Stats), so that each of those sees one
	// DefaultTTL from start to end.
	policyMu sync.RWMutex
	_        [64]byte
	// spanMu is held for reading by a commit of several mutations, from
	// before it locks its shards to after it lets them go, and for
	// writing by the snapshot of All and Query, so that no snapshot sees
	// part of a transactional batch. Single writes do not take it.
	spanMu sync.RWMutex
	_      [64]byte
	// counts counts the reads' hits and misses.
	counts readCounts

	shards [numShards]shard
	// minExps are the shards' minExp side by side, 16 cache lines that
	// only a change of a shard's earliest expiry writes: the calls that
	// read every shard's (the sweeper, a write at the bound) read them
	// rather than 128 lines of the shards, which every write to a shard
	// takes from the other processors.
	minExps [numShards]atomic.Int64
	// lookups are what a Read loads of each shard, side by side: 4 KiB
	// that stay in the processor's cache, where the shards' first lines
	// (their mutexes, which every write takes) and the tables' views, 256
	// lines, did not: under a read of random ids each cost half a D1 miss
	// a hit (cachegrind's simulation). The padding keeps the lines
	// that writes change (minExps, swept) off them.
	_       [64]byte
	lookups [numShards]shardLookup
	_       [64]byte

	swept atomic.Uint64 // documents removed because they expired
	// purging counts the purges (DeletePartition) the sweeper has yet to
	// finish, in all shards.
	purging atomic.Int32

	// feed is the change feed (feed.go); nil without one.
	feed *feed

	// d is the durable mode's state; nil for a collection made by New.
	d *durable

	loads loadTable // ReadOrLoad's loads in progress and idle loaders (readthrough.go); the zero value is ready

	// views are the Typed views' caches (typed_cache.go), told of every entry
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
	def, pk, err := checkOptions(op, opts)
	if err != nil {
		return nil, 0, err
	}
	c := &Collection{
		clock:    opts.Clock,
		interval: opts.SweepInterval,
		batch:    opts.SweepBatch,
		maxSize:  opts.MaxDocumentSize,
		maxPatch: opts.MaxPatchOperations,
		onExpire: opts.OnExpire,
		onEvict:  opts.OnEvict,
		pk:       pk,
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
	if c.maxPatch == 0 {
		c.maxPatch = DefaultMaxPatchOperations
	}
	// Start the _etag sequences at a random point, so that _etags from
	// different collections (or runs) do not look alike. Below 2^62, so
	// that they never wrap and a durable collection can resume after the
	// largest one it finds.
	c.resumeEtags(rand.Uint64() >> 2)
	if fo := opts.ChangeFeed; fo.on() {
		if fo.RetainBytes == 0 {
			fo.RetainBytes = DefaultFeedRetainBytes
		}
		c.feed = newFeed(rand.Uint64(), fo.RetainBytes, int64(fo.RetainFor/time.Second))
	}
	c.lim.maxDocs.Store(int64(opts.MaxDocuments))
	c.lim.maxBytes.Store(opts.MaxBytes)
	c.lim.policy = opts.Eviction
	c.lim.done = sync.NewCond(&c.lim.roomMu)
	c.lim.floor.init()
	if opts.Eviction == EvictColdest {
		c.lim.cold = newColdest(c.seed, opts.MaxDocuments, c.reads, &c.lim.filing, &c.lim.policyBytes)
	}
	c.armed.Store(neverExpires)
	for i := range c.shards {
		s := &c.shards[i]
		s.index = newExpiryIndex()
		s.minExp = &c.minExps[i]
		s.purges = &c.lookups[i].purges
		s.docs.readers = &c.lookups[i].docs
		s.minExp.Store(neverExpires)
	}
	return c, def, nil
}

// checkOptions checks the options New and Open share, and returns the
// collection's DefaultTTL and partition key path as they are kept. An error
// matches ErrInvalidOptions, or the error of the option's own check.
func checkOptions(op string, opts Options) (int32, *pkPath, error) {
	def, err := checkDefaultTTL(op, opts.DefaultTTL)
	if err != nil {
		return 0, nil, err
	}
	switch {
	case opts.SweepBatch < 0:
		return 0, nil, newErrorDetail(op, "", ErrInvalidOptions, "SweepBatch "+strconv.Itoa(opts.SweepBatch)+" is negative")
	case opts.MaxDocumentSize < 0:
		return 0, nil, newErrorDetail(op, "", ErrInvalidOptions, "MaxDocumentSize "+strconv.Itoa(opts.MaxDocumentSize)+" is negative")
	case opts.MaxDocumentSize > math.MaxInt32:
		// An entry keeps lengths and offsets in 32 bits.
		return 0, nil, newErrorDetail(op, "", ErrInvalidOptions, "MaxDocumentSize "+strconv.Itoa(opts.MaxDocumentSize)+" is more than 2147483647")
	case opts.MaxPatchOperations < 0:
		return 0, nil, newErrorDetail(op, "", ErrInvalidOptions, "MaxPatchOperations "+strconv.Itoa(opts.MaxPatchOperations)+" is negative")
	case opts.Sync > SyncNever:
		return 0, nil, newErrorDetail(op, "", ErrInvalidOptions, "Sync "+opts.Sync.String()+" is not a SyncPolicy")
	case opts.Eviction > EvictSoonestExpiry:
		return 0, nil, newErrorDetail(op, "", ErrInvalidOptions, "Eviction "+opts.Eviction.String()+" is not an EvictionPolicy")
	}
	if err := checkLimits(op, opts.MaxDocuments, opts.MaxBytes); err != nil {
		return 0, nil, err
	}
	pk, err := checkPartitionKeyPath(op, opts.PartitionKeyPath)
	if err != nil {
		return 0, nil, err
	}
	if err := checkChangeFeed(op, opts.ChangeFeed); err != nil {
		return 0, nil, err
	}
	return def, pk, nil
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

// shardFor returns the shard of key (an id, or in a partitioned
// collection a partition key's encoding and an id: see partitionKeyOf) and
// the key's hash (keyHash), which the shard's table uses too.
func (c *Collection) shardFor(key string) (*shard, uint64) {
	h := keyHash(c.seed, key)
	return &c.shards[h&(numShards-1)], h
}

// Close stops the background sweeper and waits for it to finish the batch
// and the OnExpire calls it is in. After Close, writes, Read, Delete, Touch,
// SetDefaultTTL and Compact return ErrClosed; Len, Stats, All, Query and
// Sweep keep working on the contents as they stand, and expiry still
// applies to them (a durable collection's Sweep then removes nothing: it
// could not log the removal; see Sweep).
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
		c.loads.closeLoads()
		<-c.stopped
		if c.d != nil {
			err = c.d.close()
		}
		if c.feed != nil {
			c.feed.stop(ErrClosed) // wakes the readers waiting
		}
	})
	return err
}
