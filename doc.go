// Package ttlstore is an in-process collection of JSON documents that expire
// with exactly the time-to-live (TTL) rules of Azure Cosmos DB: correct to
// the second, testable with a mock clock, and fast enough to sit inside a
// service's cache.
//
// # The model
//
// A Collection holds JSON objects, each with a string "id". Every write
// (Create, Upsert, Replace, Touch) stores the whole document as written and
// sets two top-level properties: "_ts", the time of the write in whole Unix
// seconds, and "_etag", an opaque version string for optimistic concurrency
// (ReplaceIfMatch, DeleteIfMatch). A read returns a Document, an immutable
// value: nothing done with it, or with the bytes passed to a write, changes
// what is stored. ExecuteBatch applies several writes and reads in order as
// one, all or nothing, as Cosmos DB's transactional batch.
//
//	c, _ := ttlstore.New(ttlstore.Options{DefaultTTL: ttlstore.TTL(3600)})
//	defer c.Close()
//	c.Upsert([]byte(`{"id":"s1","user":"ada"}`))             // expires in an hour
//	c.Upsert([]byte(`{"id":"s2","user":"bob","ttl":60}`))    // in a minute
//	c.Upsert([]byte(`{"id":"s3","user":"eve","ttl":-1}`))    // never
//	d, err := c.Read("s1")                                   // err matches ErrNotFound once expired
//
// # The TTL rules
//
// A document's effective TTL comes from the collection's DefaultTTL and the
// document's own top-level "ttl" property:
//
//	document ttl \ DefaultTTL   nil (off)        -1 (on, no default)   n
//	absent                      never expires    never expires         n s after _ts
//	-1                          never expires    never expires         never expires
//	m                           never expires    m s after _ts         m s after _ts
//
// A document with a finite effective TTL is expired from the whole second
// _ts+ttl on: with _ts = 100 and ttl = 10 it is visible at 109.999 s and gone
// at 110 s. From that instant nothing sees it: Read, Replace, Touch and
// Delete report ErrNotFound (ReplaceIfMatch and DeleteIfMatch too, even with
// its old _etag), Create of the same id succeeds, and All, Query, Len and
// Stats.Live leave it out, whether or not the sweeper has removed it yet.
//
// Every write restarts the countdown from the new _ts. A write replaces the
// whole document: replacing a document that had a ttl with one that has none
// makes it inherit DefaultTTL again. Only the lowercase top-level "ttl"
// counts; "TTL" or a nested "ttl" is ordinary data.
//
// A ttl must be the JSON integer -1 or an integer from 1 to 2147483647
// (MaxTTL), written as a plain integer: 0, null, -2, 2147483648, 1.5, 10.0,
// 1e1, "10", true, objects and arrays are rejected with ErrInvalidTTL, even
// while TTL is off, so turning TTL on later never meets a bad stored ttl.
// (10.0 and 1e1 are integers in value; they are rejected because typed
// decoders, Go's int32 and the Cosmos SDKs' int, reject them, and a stored
// document must decode where it was written.) A DefaultTTL must be nil, -1
// or 1..2147483647.
//
// SetDefaultTTL re-resolves every document atomically. Expiry is final:
// documents already expired when the setting changes stay gone, even if the
// new setting would give them longer (the service may show either outcome;
// this package always shows this one). Turning TTL off stops everything from
// expiring; turning it on again applies each document's stored ttl from its
// _ts, so documents older than that expire at once. Lowering DefaultTTL hides
// documents now past it at once; raising it extends documents not yet
// expired.
//
// The rules follow Microsoft's article "Expire data in Azure Cosmos DB
// collections automatically with time to live"; docs/decisions.md lists what is
// deliberately not reproduced (lazy indexing, COUNT of unpurged documents,
// partitions, request units, SQL).
//
// # Documents
//
// A write takes the document as []byte or json.RawMessage holding a JSON
// object, as a Document (to write back what was read), or as any Go value
// that encoding/json marshals to an object, such as
//
//	type Session struct {
//		ID   string `json:"id"`
//		TTL  int32  `json:"ttl,omitempty"`
//		User string `json:"user"`
//	}
//
// The document must be valid UTF-8 JSON, at most Options.MaxDocumentSize
// bytes (2 MiB by default; ErrTooLarge), nested at most MaxDepth levels, with
// an "id" that is a non-empty string of at most 1023 bytes without "/" or
// "\" and appears once (ErrInvalidDocument says which rule was broken). A
// rejected write changes nothing. Writes are parsed in one streaming pass,
// never into a map: the stored bytes are the caller's without their "_ts"
// and "_etag" members, and the collection's "_ts" and "_etag" are added at
// the end whenever the JSON is read out (JSON, AppendJSON, String).
//
// Each document costs one allocation the size of its JSON plus 48 bytes,
// and 23 to 30 more bytes in its shard's hash table and expiry index,
// however the documents' expiries spread.
//
// # Partition keys
//
// With Options.PartitionKeyPath (say "/tenant"), a document is named by its
// partition key, the JSON value at that path (a PartitionKey), and its id,
// as in an Azure Cosmos DB container: the same id in two partitions is two
// documents. The calls that name a document by id then need the partition:
// ReadIn, DeleteIn, TouchIn, PatchIn, ReadOrLoadIn and the others; their
// id-only forms return ErrPartitionKeyRequired. AllIn and QueryIn iterate
// one partition at the cost of its size, DeletePartition deletes one at
// once, and a Batch is in one partition (Batch.In). A partition lives in
// one shard. See docs/partitions.md for the decisions (numbers by value,
// -0 is 0, null is not none) and the costs.
//
// # The change feed
//
// With Options.ChangeFeed, a collection keeps a feed of its changes, as an
// Azure Cosmos DB container: ReadFeed returns a page of them after a token,
// WaitFeed and Feed wait for new ones without polling. In
// AllVersionsAndDeletes mode every create, replace and delete appears in
// commit order, expiries marked (Change.TimeToLiveExpired) exactly once per
// expired version, across restarts of a durable collection too, whose log
// keeps the feed. Evictions and read-through loads are kinds of their own,
// returned only when asked for. See docs/changefeed.md.
//
// # Time and the sweeper
//
// All time comes from Options.Clock, so a test can
// pass clock.NewMock() from github.com/benbjohnson/clock and move time with
// Add: a month passes in about a millisecond, whatever the documents, and
// reads see exactly what the service would show. When Options.Clock is nil,
// the time is the wall clock as read at New, advanced by the monotonic
// clock: a step of the system clock can neither bring expired documents
// back nor expire live ones early. That default clock also works inside a
// testing/synctest bubble (Go 1.25 or later) when the Collection is created
// there: time is then virtual, and a month passes as fast as the sweeper
// can follow it.
//
// Expired documents are invisible at once; a background sweeper removes
// them from memory later. It keeps the documents that can expire in an
// index ordered by expiry second (a B+-tree of references to them, about 10
// bytes a document however their expiries spread; those that cannot expire
// are kept apart), sleeps on one timer until the
// earliest expiry (but no sooner than Options.SweepInterval after its last
// sweep), and deletes in batches of Options.SweepBatch, releasing the lock
// between batches. Removed documents are passed to Options.OnExpire after the
// lock is released. Sweep runs one sweep on the caller's goroutine: tests
// move the mock clock, then call Sweep, and need never sleep. With
// SweepInterval set to ManualSweep no background goroutine runs at all.
//
// On a clock that only moves when told to (a *clock.Mock, or any Clock with
// its Add and Set methods) the sweeper sets none of that clock's timers:
// clock.Mock.Add fires due timers one by one with a 1 ms sleep after each,
// which would make a jump cost a millisecond per expiry second it crosses.
// Instead the sweeper reads the clock every 1 to 16 ms of real time while
// something can expire, and sweeps everything a jump expired in one sweep.
// A test that wants to see the background sweeper's work waits on
// OnExpire; one that wants it done at a known point calls Sweep.
//
// # Durable collections
//
// Open returns a Collection kept in a directory, with the same API and
// rules: every write is appended to a log (and, under SyncAlways, fsynced,
// with concurrent writers sharing one fsync) before it returns, and Open
// replays the newest snapshot and the logs after it. A restart or a crash
// changes nothing observable: documents come back with their _ts, _etag and
// ttl, expiry stays absolute, and nothing deleted or expired returns.
// Options.Sync chooses what a power loss may lose (SyncPolicy). The log
// holds commit groups, each closed by a commit record: a group that a crash
// or a full disk cut short is never applied, so what a writer was told and
// what a restart shows agree. Such a torn tail is cut at Open
// (Stats.TornBytes); any other damage is ErrCorrupt. A failed write or
// fsync (ErrIO) is final: later writes fail, reads go on. Sweeps are
// logged, so a document swept before a restart stays gone and is reported
// to OnExpire once, whatever the restart. The log is compacted into a snapshot in the background,
// or by Compact. All disk access goes through internal/vfs, and the files'
// format is written out in durable_record.go and internal/wal.
//
// # Bounded collections
//
// Options.MaxDocuments and Options.MaxBytes bound what a collection holds:
// one budget for the whole collection, counted by documents and by weight
// (Document.Weight: a document's allocation plus 40 bytes for its place in
// the tables, close to the heap it really holds). No write takes the
// collection past a bound, however many writers there are. A write that
// needs room first sweeps expired documents, which no reader could see
// anyway (reported to OnExpire); then Options.Eviction decides:
//
//   - NoEviction, the zero value, refuses the write with ErrFull and
//     changes nothing: a store must not lose a live document.
//   - EvictColdest evicts the documents least likely to be read again
//     (W-TinyLFU, as in Caffeine and otter): a cache keeps its hot set.
//     Every write is stored and readable at once.
//   - EvictSoonestExpiry evicts the documents nearest their expiry, and
//     never one that cannot expire (Redis's volatile-ttl); a write that
//     evicting them all could not make room for is refused with ErrFull,
//     before it evicts anything.
//
// Evicted documents are reported to Options.OnEvict, once each, with no lock
// or room held, at the end of the write that evicted them, before it
// returns; OnEvict and OnExpire may call every method of the collection,
// writes that need room included. A document heavier than MaxBytes by itself is refused with
// ErrTooLarge. SetLimits changes the bounds at run time. In a durable
// collection an eviction is logged as a delete, so an evicted document does
// not come back at restart, and Open enforces the bound it is given. Stats
// reports hits, misses, evictions, refusals and the weight held.
//
// # Concurrency
//
// A Collection is safe for concurrent use by any number of goroutines. The
// documents are split into shards by a hash of the id, each with its own
// lock, so calls on different documents seldom wait for each other. Read
// takes no lock at all and writes no memory that other reads write: it
// loads the shard's table with atomic loads while writers publish with
// atomic stores, so reads never wait for each other or for writers (but
// while SetDefaultTTL is under way, which they wait for). Each call on one
// document happens at one instant, and the expiry it applies is judged by
// the clock read at that instant: a Read returns what was true at one
// instant between its call and its return, under one DefaultTTL, the old or
// the new, never a mix. All and Query take a snapshot
// before yielding (see Query) and hold no lock while the caller's loop runs.
// SetDefaultTTL holds every lock while it re-resolves the documents.
//
// ReadOrLoad runs loads on goroutines of the collection's, never on its
// callers' (loaders: up to four stay idle, for the next loads); Close does
// not wait for a load in progress (see ReadOrLoad), but its callers stop
// waiting.
//
// Close stops the sweeper and the idle loaders and waits for them; no
// goroutine is left behind but a loader running a load, until load returns.
// After Close, calls that change or read one document return ErrClosed;
// Len, Stats, All, Query and Sweep go on working on what was stored.
//
// # Caveats
//
//   - Memory is handed back by the sweeper, not at the instant of expiry; in
//     between, an expired document still holds its memory (Stats.Expired
//     counts them).
//   - SetDefaultTTL costs O(n) with every shard locked.
//   - All and Query copy 8 bytes per live document before the first yield;
//     expired documents not yet swept cost them nothing.
//   - OnExpire runs on the sweeping goroutine; a slow callback slows the
//     sweep, not reads or writes. It must not call Close from the
//     background sweeper (Close waits for the sweeper).
package ttlstore
