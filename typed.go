package ttlstore

import (
	"context"
	"encoding/json"
	"errors"
	"hash/maphash"
	"iter"
	"math/bits"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Typed views: a Collection seen as Go values of one type, each document
// decoded once per stored version and kept decoded beside the collection.
//
// A view's cache is split like the collection, in numShards parts by the
// same hash of the id, and part i is guarded by the collection's
// shards[i].mu. So a typed read is a Collection.Read that, under the same
// read lock, also finds the value cached for the entry it read: one lock,
// and the cache's slot is loaded before the collection's table is probed,
// so that the two memory accesses overlap rather than follow each other.
//
// A value is filed under its id's hash and its entry (the pointer). Entries
// are immutable and a write makes a new one, so a value is always the
// decoding of exactly the entry it is filed with. A value is filed only
// while its entry is the one stored under its id (checked under the write
// lock), and the collection tells every view of each entry it replaces or
// removes (typedViews.forget, called after the removal, with no lock held),
// which drops that entry's value and no other: nothing stays cached for an
// entry that is gone. Holding the entry keeps its memory alive, so its
// address cannot be reused for another entry while it is cached.

// ErrDecode is returned by a Typed view when a stored document does not
// decode into the view's type with encoding/json: a member has a JSON type
// the field cannot hold, such as a string where the type has an int. It is
// possible only for documents written through the Collection itself, or
// through a view of another type. The error also wraps encoding/json's, so
// errors.As finds a *json.UnmarshalTypeError.
var ErrDecode = errors.New("document does not decode into the view's type")

// Typed is a view of a Collection's documents as values of the Go type T,
// which encoding/json marshals to a JSON object and decodes from one: a
// struct with a `json:"id"` string field, and a `json:"ttl,omitempty"`
// int32 field for a document's own ttl, such as
//
//	type Session struct {
//		ID   string `json:"id"`
//		TTL  int32  `json:"ttl,omitempty"`
//		User string `json:"user"`
//		ETag string `json:"_etag,omitempty"` // optional: the stored _etag
//		TS   int64  `json:"_ts,omitempty"`   // optional: the stored _ts
//	}
//
// (a pointer to such a struct, or a map[string]any, work too). Fields for
// _ts and _etag, when T has them, receive the stored values on every read
// and write; what T holds in them is ignored when it is written, as the
// Collection ignores them.
//
// A view keeps the documents it has read or written decoded, so that a
// read decodes JSON only the first time it meets a stored version of a
// document: a hit is a Collection.Read that also finds the value in the
// view's cache, under the same lock, and a copy of the value (see Read for
// what is copied and what it costs). A value stays
// cached for as long as its version is stored: replacing, deleting or
// touching the document drops it, and so does the sweeper when it removes
// the document after it expired, or SetDefaultTTL when it purges it. An
// expired document is never returned, cached or not. CacheLen and
// CacheBytes say how much the cache holds; it holds at most one value per
// stored document, so it is bounded by the collection's contents, not by
// a size of its own. Unlike the collection's documents, which hold no
// pointers, cached values with strings, slices, maps or pointers are
// memory the garbage collector scans.
//
// A Typed is safe for concurrent use by any number of goroutines, alongside
// any use of its Collection. Create one with NewTyped; the zero value is
// not usable.
type Typed[T any] struct {
	c   *Collection
	typ reflect.Type
	// fix is nil when a copy of a T shares nothing that can be written
	// through (its only references are strings, and time.Time's
	// location); otherwise it replaces a copy's references with copies
	// of what they refer to (see fixupFor).
	fix fixup
	// slotSize is the bytes a slot of the cache's tables takes, its
	// hash included.
	slotSize int64
	// heap is set when a T can refer to memory of its own (strings,
	// slices, maps, pointers, interfaces): then each value counts the
	// length of its document's JSON in CacheBytes, as an estimate of that
	// memory.
	heap bool

	// scratch holds *T for clone.
	scratch sync.Pool

	n     atomic.Int64 // values cached
	bytes atomic.Int64 // their estimated size, see CacheBytes

	// shards[i] holds the values of the documents in the collection's
	// shards[i], whose mu guards it.
	shards [numShards]typedShard[T]
}

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

// NewTyped returns the view of c's documents as values of type T (see
// Typed for what T must look like). A Collection has one view per type:
// calling NewTyped again with the same T returns the same view, cache
// included, so that views can be made where they are needed without
// multiplying caches. A view lasts as long as its Collection; it costs
// about 8 KB empty, and nothing for documents it never reads or writes.
//
// It can be called at any time, also after Close (the view's reads then
// return ErrClosed, as the collection's do). c must not be nil.
func NewTyped[T any](c *Collection) *Typed[T] {
	typ := reflect.TypeFor[T]()
	v := &c.views
	v.mu.Lock()
	defer v.mu.Unlock()
	if t, ok := v.byType[typ]; ok {
		return t.(*Typed[T])
	}
	t := &Typed[T]{
		c:        c,
		typ:      typ,
		fix:      fixupFor(typ),
		slotSize: int64(unsafe.Sizeof(typedSlot[T]{}) + unsafe.Sizeof(uint64(0))),
		heap:     holdsHeap(typ),
	}
	t.scratch.New = func() any { return new(T) }
	if v.byType == nil {
		v.byType = make(map[reflect.Type]any)
	}
	v.byType[typ] = t
	var caches []typedCache
	if old := v.caches.Load(); old != nil {
		caches = append(caches, *old...)
	}
	caches = append(caches, t)
	v.caches.Store(&caches)
	return t
}

// Read returns the live document with the given id as a T. It returns what
// Collection.Read returns for the id when that is an error (ErrNotFound,
// ErrClosed), and an error matching ErrDecode when the document does not
// decode into a T.
//
// The first read of each stored version of a document decodes its JSON and
// caches the value; later reads of that version return a copy of the cached
// value without decoding. The T returned is the caller's: nothing done to
// it, or to what its slices, maps, pointers and interfaces refer to, changes
// what is stored or what any other read returns. When T holds no such
// references (only strings, numbers, bools, time.Time, arrays and structs
// of those), that copy is the copy of a T that any Go assignment makes.
// Otherwise every slice, map, pointer and interface in it is copied as
// well, recursively, which allocates: about as many allocations as the T
// has non-empty slices, maps and non-nil pointers and interfaces, and far
// less time than decoding (channels and functions, which encoding/json
// cannot decode, are shared; so are map keys).
//
// A hit takes the lock Collection.Read takes, once, and costs about a third
// more than Collection.Read for a T without references, with no
// allocation; for one with references, add their copies (for a []string, one
// allocation and about one more Read). See docs/typed.md for
// measurements.
func (t *Typed[T]) Read(id string) (T, error) { return t.read("read", id) }

// read is Read; op names the caller in errors. It is Collection.Read, with
// the cache's lookup under the same lock.
func (t *Typed[T]) read(op, id string) (T, error) {
	c := t.c
	var zero T
	if c.closed.Load() {
		return zero, newError(op, id, ErrClosed)
	}
	s, h := c.shardFor(id)
	sh := &t.shards[h&(numShards-1)]
	s.mu.RLock()
	// Load the slot where the value most likely is before the table is
	// probed: the processor waits for the two at once.
	var first *typedSlot[T]
	var firstE *entry
	at := 0
	if sh.slots != nil {
		at = sh.home(h)
		first = &sh.slots[at]
		firstE = first.e
	}
	e := s.docs.get(h, id)
	if e == nil {
		s.mu.RUnlock()
		c.counts.miss()
		return zero, newError(op, id, ErrNotFound)
	}
	exp := e.expiry(c.def.Load())
	if exp != neverExpires && isExpired(exp, c.now()) {
		s.mu.RUnlock()
		c.counts.miss()
		return zero, (*expiredError)(e)
	}
	var v T
	hit := false
	switch {
	case firstE == e:
		v, hit = first.v, true
	case firstE != nil:
		if sl := sh.find(e, at); sl != nil {
			v, hit = sl.v, true
		}
	}
	s.mu.RUnlock()
	c.counts.hit()
	if c.lim.cold != nil {
		e.touch()
	}
	if !hit {
		return t.load(op, h, Document{e: e, exp: exp})
	}
	if t.fix == nil {
		return v, nil
	}
	return t.clone(v), nil
}

// ReadOrLoad is Collection.ReadOrLoad for values of type T: it returns the
// live document with the given id as Read does, and when there is none
// calls load and stores the T it returns, once for all the callers that
// miss the id at the same time (see Collection.ReadOrLoad for the rules on
// contexts, errors, panics and Close). The value returned is decoded from
// what was stored, as Create's is, and is the caller's as Read's is.
//
// load must not be nil; ReadOrLoad panics if it is.
func (t *Typed[T]) ReadOrLoad(ctx context.Context, id string, load func(ctx context.Context, id string) (T, error)) (T, error) {
	if load == nil {
		panic("ttlstore: Typed.ReadOrLoad with a nil load function")
	}
	// A hit costs a Read; Collection.ReadOrLoad reads again before it
	// loads, and says ErrClosed its way.
	v, err := t.read(opReadOrLoad, id)
	if err == nil || !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrClosed) {
		return v, err
	}
	d, err := t.c.readOrLoad(ctx, id, func(ctx context.Context, id string) (any, error) {
		v, err := load(ctx, id)
		if err != nil {
			return nil, err
		}
		return v, nil
	}, false)
	if err != nil {
		var zero T
		return zero, err
	}
	return t.value(opReadOrLoad, d)
}

// Create stores v as Collection.Create does (ErrConflict when a live
// document has its id), and returns the stored document decoded into a
// new T: with the stored _ts and _etag in T's fields for them, if it has
// any, and without what the JSON round trip drops (fields tagged
// `json:"-"`, unexported fields). That value is cached, so the next read of
// the document is a hit. v is marshaled with encoding/json and is not kept.
//
// Decoding what was stored makes a typed write cost about two and a half
// times Collection.Create of the same value. Where documents are written
// far more often than read, write them with the Collection (the view drops
// the values they replace) and read them through the view.
//
// The errors are Collection.Create's: ErrInvalidDocument when v does not
// marshal to a JSON object with a valid id (a T without an "id" field
// says "missing id"), ErrInvalidTTL, ErrTooLarge, ErrClosed; and
// ErrDecode when what was stored does not decode back into a T (the write
// happened).
func (t *Typed[T]) Create(v T) (T, error) {
	d, err := t.c.Create(v)
	return t.written("create", d, err)
}

// Upsert stores v as Collection.Upsert does, replacing the live document
// with its id if there is one. It returns what Create returns, except
// ErrConflict.
func (t *Typed[T]) Upsert(v T) (T, error) {
	d, err := t.c.Upsert(v)
	return t.written("upsert", d, err)
}

// Replace stores v as Collection.Replace does, in place of the live
// document with its id, or returns ErrNotFound when there is none. It
// returns what Create returns, except ErrConflict.
func (t *Typed[T]) Replace(v T) (T, error) {
	d, err := t.c.Replace(v)
	return t.written("replace", d, err)
}

// ReplaceIfMatch is Replace on the condition that the live document's _etag
// is etag (ErrPreconditionFailed otherwise), as Collection.ReplaceIfMatch.
func (t *Typed[T]) ReplaceIfMatch(v T, etag string) (T, error) {
	d, err := t.c.ReplaceIfMatch(v, etag)
	return t.written("replace", d, err)
}

// written returns a write's result as a T: a new entry, so never cached
// yet.
func (t *Typed[T]) written(op string, d Document, err error) (T, error) {
	if err != nil {
		var zero T
		return zero, err
	}
	return t.load(op, maphash.String(t.c.seed, d.e.id()), d)
}

// All returns an iterator over the live documents as values of type T, in
// no particular order. See Query.
func (t *Typed[T]) All() iter.Seq2[T, error] { return t.Query(nil) }

// Query returns an iterator over the live documents, as values of type T,
// for which match returns true (all of them when match is nil), in no
// particular order. It iterates as Collection.Query does: over a snapshot,
// with no lock held while match and the loop body run, also after Close.
//
// Each document is a cache hit or is decoded and cached, as in Read, and
// each value is the caller's as Read's is: match gets it, and the loop then
// gets the same value. A document that does not decode into a T is yielded
// as the zero T and an error matching ErrDecode, without calling match; the
// loop may go on past it. Every other yield has a nil error.
func (t *Typed[T]) Query(match func(T) bool) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for d := range t.c.All() {
			v, err := t.value("query", d)
			if err == nil && match != nil && !match(v) {
				continue
			}
			if !yield(v, err) {
				return
			}
		}
	}
}

// CacheLen returns how many decoded values the view holds: one for each
// stored document the view has read or written since the document was last
// written (expired ones included until the sweeper removes them), so never
// more than the collection holds. 0 for a view that has read nothing.
func (t *Typed[T]) CacheLen() int { return int(t.n.Load()) }

// CacheBytes returns an estimate of the memory the view's cache holds, in
// bytes: its tables, exactly (a slot is the size of a T and 16 bytes; the
// tables are kept from 1/4 to 3/4 full, but for tables of 16 slots), and,
// when a T can refer to memory of its own (it has strings, slices, maps,
// pointers or interfaces), the length of each value's JSON, as an upper
// estimate of what decoding allocated for it (for the data set of the
// measurements in docs/typed.md, it comes to 25 % more than the heap the view
// took). It is 0 when CacheLen is: a table goes with its last value.
func (t *Typed[T]) CacheBytes() int64 { return t.bytes.Load() }

// value returns d's document as a T: a copy of the cached value, or, on a
// miss, the decoded JSON, which it caches. op names the caller in errors.
func (t *Typed[T]) value(op string, d Document) (T, error) {
	s, h := t.c.shardFor(d.e.id())
	sh := &t.shards[h&(numShards-1)]
	s.mu.RLock()
	v, ok := sh.get(h, d.e)
	s.mu.RUnlock()
	if !ok {
		return t.load(op, h, d)
	}
	if t.fix == nil {
		return v, nil
	}
	return t.clone(v), nil
}

// load decodes d's document, whose id has hash h, caches the value and
// returns a copy of it.
func (t *Typed[T]) load(op string, h uint64, d Document) (T, error) {
	v, err := t.decode(op, d)
	if err != nil {
		return v, err
	}
	t.store(h, d.e, v)
	if t.fix == nil {
		return v, nil
	}
	// The cache may have v now: the caller gets a copy.
	return t.clone(v), nil
}

// decodeBufs holds buffers for the JSON that decode passes to
// json.Unmarshal, which copies what it keeps.
var decodeBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBuf is the largest buffer decode returns to decodeBufs.
const maxPooledBuf = 64 << 10

// decode unmarshals d's JSON, with _ts and _etag, into a new T.
func (t *Typed[T]) decode(op string, d Document) (T, error) {
	var v T
	bp := decodeBufs.Get().(*[]byte)
	b := d.AppendJSON((*bp)[:0])
	err := json.Unmarshal(b, &v)
	if cap(b) <= maxPooledBuf {
		*bp = b[:0]
		decodeBufs.Put(bp)
	}
	if err != nil {
		var zero T
		return zero, &decodeError{op: op, id: d.ID(), typ: t.typ, err: err}
	}
	return v, nil
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

// clone returns a copy of v that shares nothing writable with it. fix
// works on a T of scratch, from a pool: on v's own address it would move v
// to the heap, an allocation per call.
func (t *Typed[T]) clone(v T) T {
	p := t.scratch.Get().(*T)
	*p = v
	t.fix(unsafe.Pointer(p))
	v = *p
	var zero T
	*p = zero // keeps nothing alive
	t.scratch.Put(p)
	return v
}

// decodeError is a Typed view's error for a document that does not decode
// into its type. It matches ErrDecode and encoding/json's error.
type decodeError struct {
	op  string
	id  string
	typ reflect.Type
	err error
}

func (e *decodeError) Error() string {
	return "ttlstore: " + e.op + " " + strconv.Quote(e.id) + " as " + e.typ.String() + ": " + e.err.Error() + ": " + ErrDecode.Error()
}

func (e *decodeError) Unwrap() []error { return []error{ErrDecode, e.err} }

// Copies of decoded values.
//
// A fixup replaces, in the value of its type at p, every reference through
// which memory could be written (a slice's array, a map, a pointer's
// target, an interface's dynamic value) with a reference to a new copy of
// what it refers to, recursively. Applied to a shallow copy of a value, it
// makes a copy that shares nothing writable with the original. Strings are
// immutable and stay shared; so do time.Time's locations, which the time
// package never changes. Values are copied as trees: a value that refers
// to the same memory twice gets two copies of it (encoding/json never
// decodes such a value), and one that refers to itself would not end.
type fixup func(p unsafe.Pointer)

var (
	// fixups holds the fixup of every type built so far: reflect.Type to
	// *fixupCell.
	fixups sync.Map
	// buildMu serializes the building of fixups.
	buildMu sync.Mutex
)

// sliceHeader is the layout of a slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// fixupCell holds a type's fixup: nil when the type needs none.
type fixupCell struct {
	fn   fixup
	done bool // fn is built (only building's cells can lack it)
}

var timeType = reflect.TypeFor[time.Time]()

// fixupFor returns the fixup of t, building it the first time: nil when a
// copy of a t shares nothing writable with the original.
func fixupFor(t reflect.Type) fixup {
	if c, ok := fixups.Load(t); ok {
		return c.(*fixupCell).fn
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	building := make(map[reflect.Type]*fixupCell)
	fn := buildFixup(t, building)
	// Published only now that every cell is complete.
	for typ, c := range building {
		fixups.LoadOrStore(typ, c)
	}
	return fn
}

// buildFixup returns the fixup of t, building the fixups of the types it
// contains first; building holds the cells of the types being built, so
// that a type that contains itself (through a pointer, slice or map, whose
// fixups are never nil) calls its own fixup once it is complete.
func buildFixup(t reflect.Type, building map[reflect.Type]*fixupCell) fixup {
	if c, ok := fixups.Load(t); ok {
		return c.(*fixupCell).fn
	}
	if c, ok := building[t]; ok {
		if c.done {
			return c.fn
		}
		// t contains itself: through a pointer, slice or map, so its
		// fixup, complete by the time it runs, is not nil.
		return func(p unsafe.Pointer) { c.fn(p) }
	}
	c := &fixupCell{}
	building[t] = c
	c.fn = newFixup(t, building)
	c.done = true
	return c.fn
}

// newFixup builds the fixup of t; see buildFixup.
func newFixup(t reflect.Type, building map[reflect.Type]*fixupCell) fixup {
	switch t.Kind() {
	case reflect.Struct:
		if t == timeType {
			return nil
		}
		var offs []uintptr
		var fns []fixup
		for i := range t.NumField() {
			f := t.Field(i)
			if fn := buildFixup(f.Type, building); fn != nil {
				offs = append(offs, f.Offset)
				fns = append(fns, fn)
			}
		}
		if len(fns) == 0 {
			return nil
		}
		return func(p unsafe.Pointer) {
			for i, fn := range fns {
				fn(unsafe.Add(p, offs[i]))
			}
		}
	case reflect.Array:
		fn := buildFixup(t.Elem(), building)
		if fn == nil || t.Len() == 0 {
			return nil
		}
		n, size := t.Len(), t.Elem().Size()
		return func(p unsafe.Pointer) {
			for i := range n {
				fn(unsafe.Add(p, uintptr(i)*size))
			}
		}
	case reflect.Pointer:
		elem := t.Elem()
		fn := buildFixup(elem, building)
		return func(p unsafe.Pointer) {
			pp := (*unsafe.Pointer)(p)
			if *pp == nil {
				return
			}
			n := reflect.New(elem)
			n.Elem().Set(reflect.NewAt(elem, *pp).Elem())
			if fn != nil {
				fn(n.UnsafePointer())
			}
			*pp = n.UnsafePointer()
		}
	case reflect.Slice:
		elem := t.Elem()
		fn := buildFixup(elem, building)
		size := elem.Size()
		switch {
		case fn == nil && elem.Kind() == reflect.String:
			// The most common case, without reflection: the layout of
			// a []string, whatever the names of its types.
			return func(p unsafe.Pointer) {
				s := (*[]string)(p)
				if cap(*s) > 0 {
					*s = slices.Clone((*s)[:len(*s):len(*s)])
				}
			}
		case !holdsHeap(elem):
			// Elements without pointers: their bytes, in memory the
			// garbage collector need not scan.
			return func(p unsafe.Pointer) {
				s := (*sliceHeader)(p)
				if s.cap == 0 {
					return
				}
				b := make([]byte, uintptr(s.len)*size)
				copy(b, unsafe.Slice((*byte)(s.data), len(b)))
				s.data, s.cap = unsafe.Pointer(unsafe.SliceData(b)), s.len
			}
		}
		return func(p unsafe.Pointer) {
			s := reflect.NewAt(t, p).Elem()
			if s.Cap() == 0 {
				return // nil, or empty without room: nothing can be written through it
			}
			n := reflect.MakeSlice(t, s.Len(), s.Len())
			reflect.Copy(n, s)
			if fn != nil {
				base := n.UnsafePointer()
				for i := range n.Len() {
					fn(unsafe.Add(base, uintptr(i)*size))
				}
			}
			s.Set(n)
		}
	case reflect.Map:
		elem := t.Elem()
		fn := buildFixup(elem, building)
		return func(p unsafe.Pointer) {
			m := reflect.NewAt(t, p).Elem()
			if m.IsNil() {
				return
			}
			n := reflect.MakeMapWithSize(t, m.Len())
			k, v := reflect.New(t.Key()).Elem(), reflect.New(elem).Elem()
			for it := m.MapRange(); it.Next(); {
				k.SetIterKey(it)
				v.SetIterValue(it)
				if fn != nil {
					fn(v.Addr().UnsafePointer())
				}
				n.SetMapIndex(k, v)
			}
			m.Set(n)
		}
	case reflect.Interface:
		return func(p unsafe.Pointer) {
			i := reflect.NewAt(t, p).Elem()
			if i.IsNil() {
				return
			}
			d := i.Elem()
			if d.Kind() <= reflect.Complex128 || d.Kind() == reflect.String {
				return // what encoding/json puts in an interface most: nothing to copy
			}
			fn := fixupFor(d.Type())
			if fn == nil {
				return
			}
			n := reflect.New(d.Type()).Elem()
			n.Set(d)
			fn(n.Addr().UnsafePointer())
			i.Set(n)
		}
	default:
		// Bools, numbers and strings; and channels, functions and unsafe
		// pointers, which encoding/json does not decode: shared.
		return nil
	}
}

// holdsHeap reports whether a value of type t can refer to memory of its
// own: whether it has strings, slices, maps, pointers, interfaces,
// channels or functions.
func holdsHeap(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			if holdsHeap(t.Field(i).Type) {
				return true
			}
		}
		return false
	case reflect.Array:
		return t.Len() > 0 && holdsHeap(t.Elem())
	case reflect.String, reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface,
		reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return true
	default:
		return false
	}
}
