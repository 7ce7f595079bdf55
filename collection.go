package ttlstore

import (
	"hash/maphash"
	"math/rand/v2"
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
		var charged *atomic.Int64 // the tables count only under MaxBytes (see coldest.chargeTo)
		if opts.MaxBytes > 0 {
			charged = &c.lim.policyBytes
		}
		hseed := uint64(0) // fixed: the same choices in every run (Options.RandomizeEviction)
		if opts.RandomizeEviction {
			hseed = rand.Uint64()
		}
		c.lim.cold = newColdest(hseed, opts.MaxDocuments, c.reads, &c.lim.filing, charged)
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
