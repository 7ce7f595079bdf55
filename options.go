package ttlstore

import (
	"math"
	"strconv"
	"time"
)

// Options: what New and Open are configured with, and the checks that
// refuse a bad one (ErrInvalidOptions) before anything is built.

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

	// RandomizeEviction, under EvictColdest, seeds the hash by which the
	// policy counts documents (in its frequency sketch, and in its memory of
	// recent evictions) at random for each collection. The default, a fixed
	// hash, makes the policy's choices the same in every run: a workload
	// replayed in the same order, from one goroutine, evicts the same
	// documents, and a test of code that uses the collection sees the same
	// evictions each time (see EvictColdest for expiry). Its price is that ids
	// can be chosen, offline, to collide in the sketch: a client that picks
	// the ids a service caches could make one-off documents look popular and
	// get them admitted over the hot set, for as long as it writes them (the
	// collection's own table keeps its random seed either way, so no choice of
	// ids slows a lookup). Set it where clients choose the ids; the hit ratio
	// then differs from run to run, by up to 0.3 points on most workloads and
	// by up to about 1.6 points on a few (docs/bounded.md). Other policies
	// ignore it.
	RandomizeEviction bool

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
