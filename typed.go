package ttlstore

// Typed views: a Collection seen as Go values of one type. This file is the
// view itself: NewTyped, and Typed's reads, writes and iterators, each a
// Collection call whose document becomes a T, decoded with encoding/json the
// first time the view meets a stored version and copied from the view's
// cache after that. It promises what Typed's doc says: a T returned is the
// stored document decoded (with its _ts and _etag), it is the caller's own,
// an expired document is never returned, and the errors are the
// Collection's, plus ErrDecode.
//
// The cache of decoded values, and how it learns of the collection's
// removals, is typed_cache.go; the copies of cached values that make a T the
// caller's, package internal/clone.

import (
	"context"
	"encoding/json"
	"errors"
	"hash/maphash"
	"iter"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ttlstore/ttlstore/internal/clone"
)

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
	// copier makes the copies of cached values that callers get.
	copier clone.Copier[T]

	// The cache of decoded values (typed_cache.go):

	// slotSize is the bytes a slot of the cache's tables takes, its
	// hash included.
	slotSize int64
	// heap is set when a T can refer to memory of its own (strings,
	// slices, maps, pointers, interfaces): then each value counts the
	// length of its document's JSON in CacheBytes, as an estimate of that
	// memory.
	heap bool

	n     atomic.Int64 // values cached
	bytes atomic.Int64 // their estimated size, see CacheBytes

	// shards[i] holds the values of the documents in the collection's
	// shards[i], whose mu guards it.
	shards [numShards]typedShard[T]
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
		slotSize: int64(unsafe.Sizeof(typedSlot[T]{}) + unsafe.Sizeof(uint64(0))),
		heap:     clone.HoldsHeap(typ),
	}
	t.copier.Init()
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
// A hit takes the lock Collection.Read takes, once, and costs about a
// third more than Collection.Read for a T without references, with no
// allocation; for one with references, add their copies, made without
// reflection for the common ones: for a []string, one allocation (a hit
// about 2.1 times a Read in instructions); for a map of strings to strings
// or numbers, a clone of the map, two allocations (3.2 times). See
// docs/typed.md for measurements.
//
// On a partitioned collection it returns ErrPartitionKeyRequired: use
// ReadIn. So do ReadOrLoad and ReplaceIfMatch, whose In forms name the
// partition too.
func (t *Typed[T]) Read(id string) (v T, err error) {
	// Collection.read's hash: keyHash's without its frame, where there
	// is no partition key (an id cannot begin with pkMark).
	c := t.c
	if c.pk != nil {
		_, err = c.keyOf("read", id)
		return v, err
	}
	err = t.readHash("read", id, maphash.String(c.seed, id), &v)
	return v, err
}

// ReadIn is Read of the document with the given id in the partition pk
// (see Collection.ReadIn).
func (t *Typed[T]) ReadIn(pk PartitionKey, id string) (v T, err error) {
	key, err := t.c.keyIn("read", pk, id)
	if err == nil {
		err = t.read("read", key, &v)
	}
	return v, err
}

// read is Read of the document with the given key (id) into *v, which it
// leaves alone unless it returns nil; op names the caller in errors. It is
// Collection.Read, with the cache's lookup under the same lock: it looks
// for id as look does when it takes the lock, and ends a miss as
// Collection.read does, with missed. (Its T goes out through v, not as a
// result: each copy of a T costs about as much as a lookup in the cache.)
func (t *Typed[T]) read(op, id string, v *T) error {
	return t.readHash(op, id, keyHash(t.c.seed, id), v)
}

// readHash is read of the key id whose hash (keyHash's) is h.
func (t *Typed[T]) readHash(op, id string, h uint64, v *T) error {
	c := t.c
	if c.closed.Load() {
		return newError(op, id, ErrClosed)
	}
	i := h & (numShards - 1)
	s, sh := &c.shards[i], &t.shards[i]
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
	// What look finds when it takes the lock, with Read's probe in line
	// (find fails only while a writer publishes, which the lock rules
	// out; get stays as the fallback should that ever change).
	e, ok := c.lookups[i].docs.find(h, id)
	if !ok {
		e = s.docs.get(h, id)
	}
	if e == nil || s.hidden(e) {
		s.mu.RUnlock()
		return c.missed(op, id, nil, true)
	}
	exp := e.expiry(c.def.Load())
	if exp != neverExpires && isExpired(exp, c.now()) {
		s.mu.RUnlock()
		return c.missed(op, id, e, true)
	}
	hit := false
	switch {
	case firstE == e:
		*v, hit = first.v, true
	case firstE != nil:
		if sl := sh.find(e, at); sl != nil {
			*v, hit = sl.v, true
		}
	}
	s.mu.RUnlock()
	// A hit, counted as Collection.read counts one. (Not shared through a
	// helper: one that also ended misses would be too big to inline, a
	// call on every Collection.Read.)
	c.counts.hit()
	if c.lim.cold != nil {
		e.touch()
	}
	if !hit {
		d, err := t.load(op, h, Document{e: e, exp: exp})
		if err == nil {
			*v = d
		}
		return err
	}
	if t.copier.Deep() {
		t.copier.Fix(v)
	}
	return nil
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
	key, err := t.c.keyOf(opReadOrLoad, id)
	if err != nil {
		var zero T
		return zero, err
	}
	return t.readOrLoad(ctx, key, load)
}

// ReadOrLoadIn is ReadOrLoad of the document with the given id in the
// partition pk (see Collection.ReadOrLoadIn).
func (t *Typed[T]) ReadOrLoadIn(ctx context.Context, pk PartitionKey, id string, load func(ctx context.Context, id string) (T, error)) (T, error) {
	if load == nil {
		panic("ttlstore: Typed.ReadOrLoadIn with a nil load function")
	}
	key, err := t.c.keyIn(opReadOrLoad, pk, id)
	if err != nil {
		var zero T
		return zero, err
	}
	return t.readOrLoad(ctx, key, load)
}

// readOrLoad is ReadOrLoad of the document with the given key (id).
func (t *Typed[T]) readOrLoad(ctx context.Context, id string, load func(ctx context.Context, id string) (T, error)) (T, error) {
	// A hit costs a Read; Collection.ReadOrLoad reads again before it
	// loads, and says ErrClosed its way.
	var v T
	err := t.read(opReadOrLoad, id, &v)
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

// ReplaceIfMatchIn is ReplaceIfMatch for a value that must be in the
// partition pk, as Collection.ReplaceIfMatchIn.
func (t *Typed[T]) ReplaceIfMatchIn(pk PartitionKey, v T, etag string) (T, error) {
	d, err := t.c.ReplaceIfMatchIn(pk, v, etag)
	return t.written("replace", d, err)
}

// written returns a write's result as a T: a new entry, so never cached
// yet.
func (t *Typed[T]) written(op string, d Document, err error) (T, error) {
	if err != nil {
		var zero T
		return zero, err
	}
	return t.load(op, keyHash(t.c.seed, d.e.key()), d)
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
	return t.query(t.c.All(), match)
}

// AllIn returns an iterator over the live documents of the partition pk as
// values of type T. See QueryIn.
func (t *Typed[T]) AllIn(pk PartitionKey) iter.Seq2[T, error] { return t.QueryIn(pk, nil) }

// QueryIn is Query scoped to the partition pk, as Collection.QueryIn.
func (t *Typed[T]) QueryIn(pk PartitionKey, match func(T) bool) iter.Seq2[T, error] {
	return t.query(t.c.AllIn(pk), match)
}

// query is Query over the documents docs yields.
func (t *Typed[T]) query(docs iter.Seq[Document], match func(T) bool) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for d := range docs {
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
	s, h := t.c.shardFor(d.e.key())
	sh := &t.shards[h&(numShards-1)]
	s.mu.RLock()
	v, ok := sh.get(h, d.e)
	s.mu.RUnlock()
	if !ok {
		return t.load(op, h, d)
	}
	if t.copier.Deep() {
		t.copier.Fix(&v)
	}
	return v, nil
}

// load decodes d's document, whose id has hash h, caches the value and
// returns a copy of it.
func (t *Typed[T]) load(op string, h uint64, d Document) (T, error) {
	v, err := t.decode(op, d)
	if err != nil {
		return v, err
	}
	t.store(h, d.e, v)
	// The cache may have v now: the caller gets a copy.
	if t.copier.Deep() {
		t.copier.Fix(&v)
	}
	return v, nil
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
