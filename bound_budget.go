package ttlstore

import (
	"strconv"
	"sync"
	"sync/atomic"
)

// The budget: what a document weighs (Document.Weight), and limits, the
// bounds and the usage that writers reserve from with compare-and-swap,
// so that no write takes the usage past a bound, however many writers
// there are; with the count of writes in progress and room held
// (limits.filing) that a room maker waits on when it finds nothing to
// evict. It knows nothing of Collection, shards or policies' queues: each
// method works on the counters alone (pin is told the document's expiry
// by its caller, which holds the document's shard lock). Only ended takes
// a lock, roomMu, and no shard lock may be held when it does.

// docOverhead is the part of a document's weight beyond its own allocation:
// its slot in its shard's hash table (8 bytes and a control byte, at the
// table's load), its place in the expiry index, and under EvictColdest its
// place in the policy's queues and sketch (policyDocBytes of it; what those
// tables hold beyond that counts in limits.policyBytes). Measured with
// runtime.ReadMemStats in TestBoundHoldsHeap, for documents of about 90
// bytes whatever their expiries: about 25 bytes under NoEviction, 30 to 37
// under EvictSoonestExpiry (removals leave the table larger) and 52 under
// EvictColdest, 23 of them in the policy's tables, which policyBytes
// counts beyond 16; 40 keeps the heap within 10% of MaxBytes under each.
const docOverhead = 40

// Weight returns the document's weight, what it counts for against
// Options.MaxBytes: the bytes of its allocation (a 48-byte header and its
// JSON without _ts and _etag, rounded up to the Go allocator's size class)
// plus 40 bytes for its place in the collection's table and indexes. That
// is close to the heap the collection holds for it. A zero Document weighs
// 0.
func (d Document) Weight() int64 {
	if d.e == nil {
		return 0
	}
	return weigh(d.e)
}

// weigh is e's weight; see Document.Weight.
func weigh(e *entry) int64 { return int64(allocSize(entrySize+e.size())) + docOverhead }

// sizeClasses are the Go allocator's size classes for small objects (as in
// the runtime's sizeclasses.go): an allocation takes the smallest that fits.
var sizeClasses = [...]uint16{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256, 288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792, 2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240, 10880, 12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264, 28672, 32768}

// allocSize is the bytes the Go allocator gives a request for n bytes: its
// size class, or whole 8 KiB pages above 32 KiB. It looks the class up in
// a table, as the runtime does, in a few instructions where a binary search
// of sizeClasses took some seventy: a write weighs one or two entries.
func allocSize(n int) int {
	switch {
	case n <= smallSizeMax:
		return int(classBy8[(n+7)>>3])
	case n <= int(sizeClasses[len(sizeClasses)-1]):
		return int(classBy128[(n-smallSizeMax+127)>>7])
	}
	return (n + 8191) &^ 8191
}

// smallSizeMax is the size up to which the classes are multiples of 8;
// above it, up to 32 KiB, they are multiples of 128 (as in the runtime).
const smallSizeMax = 1024

// classBy8[(n+7)/8] is allocSize(n) for n up to smallSizeMax, and
// classBy128[(n-smallSizeMax+127)/128] for n above it.
var classBy8, classBy128 = sizeTables()

func sizeTables() (by8 [smallSizeMax/8 + 1]uint16, by128 [(32768-smallSizeMax)/128 + 1]uint16) {
	class := func(n int) uint16 {
		for _, c := range sizeClasses {
			if int(c) >= n {
				return c
			}
		}
		panic("ttlstore: internal error: no size class")
	}
	for i := range by8 {
		by8[i] = class(max(i*8, 1))
	}
	for i := range by128 {
		by128[i] = class(smallSizeMax + i*128)
	}
	return by8, by128
}

// limits is a collection's bound and what it holds against it. Its first
// fields are read by every write under a bound and seldom written; the
// counters after the pad are written by every write under a bound (a
// write of a new document that evicts one under EvictColdest changes them
// six times, eight under MaxBytes). The pad keeps the two apart: a write on one core, which
// reads the first, then no longer finds their line taken from it by a
// write on another core that changed the second.
type limits struct {
	// maxDocs and maxBytes are the bounds, 0 for none. SetLimits
	// changes them.
	maxDocs  atomic.Int64
	maxBytes atomic.Int64

	policy EvictionPolicy
	// cold is EvictColdest's bookkeeping (eviction.go); nil under the
	// other policies, so that they cost writes and reads nothing.
	cold *coldest

	// roomMu is held by a writer that found nothing to evict while it
	// decides to wait (makeRoom), and by those that wake it (ended).
	roomMu sync.Mutex
	// done is signalled, with roomMu held, when one of the counts of
	// filing ends while a room maker waits for it (waiting > 0).
	done    *sync.Cond
	waiting atomic.Int64

	// floor is a lower bound on every document's expiry, so that a write
	// at the bound can tell that nothing has expired without reading
	// every shard (bound_floor.go).
	floor expiryFloor

	// (The fields above take 96 bytes: this pad starts the counters at
	// a line's start, lim being at one in a Collection, which starts a
	// page. TestLimitsLinesApart checks it.)
	_ [32]byte

	// docs and bytes are the documents in memory and their weight,
	// expired ones not yet swept included.
	docs  atomic.Int64
	bytes atomic.Int64
	// filing counts the writes between their reservation and their
	// filing, under an evicting policy, those holding room that eviction
	// made for them, and EvictColdest's victims picked but not yet
	// removed: room that no victim a room maker can find stands for.
	//
	// A room maker that finds nothing to evict waits while filing is
	// above 0 (makeRoom), so every count must end without waiting for
	// anything that could wait for room in turn. Each does, by
	// construction: a count is held only inside this package's code,
	// never across a call of user code (OnExpire, OnEvict, a loader, a
	// value's JSON methods), which may write and so wait for room itself.
	// A write's own count runs from its reservation to its filing under
	// its shard's lock. Room evicted for a write is held from the
	// eviction (take) to the reservation that fills it or to its return
	// (give); meanwhile the write takes shard locks, the policy's mutex
	// and the log's, whose holders wait for no room, and it gives the
	// room back before it waits for room itself. A pick ends when its
	// victim is evicted or put back, before the write returns. What a
	// write removes is reported only after all of that, once it holds
	// nothing (reportEvicted checks), and so are a shrink's removals.
	// So the goroutines a room maker waits for always go on, and each
	// end of a count is followed by ended, which wakes it.
	filing atomic.Int64
	// filed counts the ends of those: makeRoom looks again if one ended
	// while it looked for a victim.
	filed atomic.Uint64

	evicted      atomic.Uint64 // live documents evicted
	evictedBytes atomic.Uint64 // their weight
	// policyBytes is, under EvictColdest (0 under the other policies),
	// the memory of the policy's tables that the documents' weights do
	// not count (coldest.account): room under maxBytes that documents
	// may not use. The policy stores it, under its mutex, when it
	// changes: with the number of documents, twice a write at the bound
	// (the victim out, the new document in); but only under a MaxBytes,
	// 0 without one (coldest.chargeTo).
	policyBytes atomic.Int64

	refused atomic.Uint64 // writes refused with ErrFull

	// fixedDocs and fixedBytes are, under EvictSoonestExpiry (0 under
	// the other policies), the documents stored that cannot expire and
	// their weight: what eviction can never take away, so that a write
	// can tell before it evicts whether evicting could make its room
	// (canMake). They are kept where documents enter and leave the
	// expiry index (storeLocked, unfileLocked; redefineLocked recounts
	// them), under the document's shard lock. They cost a write of a
	// document that can expire one comparison, and a write or removal
	// of one that cannot two atomic additions here.
	fixedDocs  atomic.Int64
	fixedBytes atomic.Int64

	// (limits takes 240 bytes, as it did before the pads: the fields
	// after lim in Collection are placed for that; TestHotFieldsApart.)
	_ [32]byte
}

// byteBound is the weight the documents may use: maxBytes less what the
// policy's tables hold beyond their weights (policyBytes), at least 1; 0
// when there is no bound.
func (l *limits) byteBound() int64 {
	m := l.maxBytes.Load()
	if m <= 0 {
		return 0
	}
	return max(1, m-l.policyBytes.Load())
}

// reserve adds dDocs documents and dBytes of weight to the usage, counting
// the room r holds (already in the usage) toward them, unless the write
// would leave the usage past a bound that is set; it reports whether it
// did. A write that adds nothing in one measure always goes in by that
// measure, even past a bound that SetLimits lowered.
func (l *limits) reserve(dDocs, dBytes int64, r *room) bool {
	if !reserve(&l.docs, dDocs, r.docs, l.maxDocs.Load()) {
		return false
	}
	if !reserve(&l.bytes, dBytes, r.bytes, l.byteBound()) {
		l.docs.Add(r.docs - dDocs)
		return false
	}
	return true
}

func reserve(used *atomic.Int64, d, held, max int64) bool {
	if d <= 0 || max <= 0 {
		if d != held { // an overwrite of the same weight writes nothing shared
			used.Add(d - held)
		}
		return true
	}
	if d == held {
		// The room held is the room needed (a write of one new
		// document that evicted one): the usage stays as it is, and a
		// load does where a compare-and-swap took the line from the
		// other cores.
		return used.Load() <= max
	}
	for {
		u := used.Load()
		if u-held+d > max {
			return false
		}
		if used.CompareAndSwap(u, u-held+d) {
			return true
		}
	}
}

// fits reports whether reserve would now succeed (see there). Another
// writer may take the room before the caller does: it must still reserve.
//
// revDocs and revBytes are the versions that the write replaces in place
// though they have expired, and their weight (commit.revDocs; 0 for most
// writes): it is judged as if they were swept, when it adds dDocs+revDocs
// documents and dBytes+revBytes of weight, and needs room in a measure
// where that is positive. While those versions are in memory the usage
// counts them, and dDocs and dBytes count their replacement as in place,
// so the room it needs there is dDocs and dBytes on top of the usage.
// (Once a sweep has taken them, the write, tried again, counts as adding
// its documents.)
func (l *limits) fits(dDocs, dBytes, revDocs, revBytes int64, r *room) bool {
	fit := func(used *atomic.Int64, d, rev, held, max int64) bool {
		return d+rev <= 0 || max <= 0 || used.Load()-held+d <= max
	}
	return fit(&l.docs, dDocs, revDocs, r.docs, l.maxDocs.Load()) && fit(&l.bytes, dBytes, revBytes, r.bytes, l.byteBound())
}

// within reports whether the usage, but for the room r holds, is within
// the bounds, which SetLimits may have lowered below it.
func (l *limits) within(r *room) bool {
	in := func(used *atomic.Int64, held, max int64) bool { return max <= 0 || used.Load()-held <= max }
	return in(&l.docs, r.docs, l.maxDocs.Load()) && in(&l.bytes, r.bytes, l.byteBound())
}

// release takes dDocs documents and dBytes of weight off the usage.
func (l *limits) release(dDocs, dBytes int64) {
	l.docs.Add(-dDocs)
	l.bytes.Add(-dBytes)
}

// canMake reports whether evicting every document the policy may evict
// for a write but the write's own (under EvictSoonestExpiry those that can
// expire, under EvictColdest all) would leave room for it: dDocs more
// documents and dBytes more weight, pinned being the weight the write
// leaves that the policy may not evict for it (its document's, less the
// weight of the id's current document if that is counted in fixedBytes).
// A write for which it is false is refused before it evicts anything. It
// counts the room held by other writes, and their reservations, as if
// eviction could free it: alone, a write for which it is true goes in;
// with others under way, which may fill that room with documents that
// cannot expire or evict the same victims first, it may still be refused
// after its evictions (see EvictionPolicy). It costs four atomic loads.
func (l *limits) canMake(dDocs, dBytes, pinned int64) bool {
	var fixedDocs, fixedBytes int64
	if l.policy == EvictSoonestExpiry {
		fixedDocs, fixedBytes = l.fixedDocs.Load(), l.fixedBytes.Load()
	}
	if max := l.maxDocs.Load(); max > 0 && dDocs > 0 && fixedDocs+dDocs > max {
		return false
	}
	if max := l.byteBound(); max > 0 && dBytes > 0 && fixedBytes+pinned > max {
		return false
	}
	return true
}

// pin adds n (1 or -1) times e, filed to expire at exp, to fixedDocs and
// fixedBytes if it cannot expire, under EvictSoonestExpiry. The caller
// holds e's shard's lock.
func (l *limits) pin(e *entry, exp int64, n int64) {
	if exp == neverExpires && l.policy == EvictSoonestExpiry {
		l.fixedDocs.Add(n)
		l.fixedBytes.Add(n * weigh(e))
	}
}

// fullError is ErrFull for a write of dDocs documents and dBytes of weight.
func (l *limits) fullError(op, id string, dDocs, dBytes int64) error {
	var detail string
	if max := l.maxDocs.Load(); max > 0 && dDocs > 0 && l.docs.Load()+dDocs > max {
		detail = "MaxDocuments is " + strconv.FormatInt(max, 10) + " and " +
			strconv.FormatInt(l.docs.Load(), 10) + " documents are stored"
	} else {
		detail = "MaxBytes is " + strconv.FormatInt(l.maxBytes.Load(), 10) + ", " +
			strconv.FormatInt(l.bytes.Load(), 10) + " are used"
		if pb := l.policyBytes.Load(); pb > 0 {
			detail += " (and " + strconv.FormatInt(pb, 10) + " by EvictColdest's tables)"
		}
		detail += " and the write needs " + strconv.FormatInt(dBytes, 10) + " more"
	}
	if l.policy == EvictSoonestExpiry {
		detail += "; the documents that cannot expire leave no room for it"
	}
	return newErrorDetail(op, id, ErrFull, detail)
}

// startFiling counts a write in progress under an evicting policy (the
// others have no room makers to tell), from before its reservation to
// stopFiling, after its filing.
func (l *limits) startFiling() {
	if l.policy != NoEviction {
		l.filing.Add(1)
	}
}

// stopFiling ends what startFiling counted. The caller then releases its
// shard's lock and calls ended.
func (l *limits) stopFiling() {
	if l.policy != NoEviction {
		l.endFiling()
	}
}

// endFiling counts the end of a write in progress or of a hold on room:
// filed first, so that a room maker that finds filing at 0 also finds filed
// changed, and looks again.
func (l *limits) endFiling() {
	l.filed.Add(1)
	l.filing.Add(-1)
}

// ended tells a room maker waiting for writes in progress that one ended;
// it costs one atomic load when none waits (always, under NoEviction). It
// takes roomMu: no shard lock may be held.
func (l *limits) ended() {
	if l.waiting.Load() > 0 {
		l.roomMu.Lock()
		l.done.Broadcast()
		l.roomMu.Unlock()
	}
}
