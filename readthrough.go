package ttlstore

import (
	"context"
	"errors"
	"fmt"
)

// Read-through loading: ReadOrLoad, and the table of loads in progress that
// makes concurrent misses of one id share one load.

// ErrLoadPanicked is returned by ReadOrLoad, to every caller waiting for a
// load, when the load function panicked (or called runtime.Goexit) instead
// of returning. The panic goes no further. The message holds the panic
// value; when that value is an error, errors.Is and errors.As find it too.
var ErrLoadPanicked = errors.New("load panicked")

// ErrLoadCycle is returned by ReadOrLoad when a load function calls it,
// with its load's context or one derived from it, for the id being loaded,
// or for an id that one of the loads it was called from is loading: waiting
// for that load would wait for itself.
var ErrLoadCycle = errors.New("load waits for itself")

// opReadOrLoad names ReadOrLoad in its errors; opLoad names the load
// function in the errors it causes.
const (
	opReadOrLoad = "read or load"
	opLoad       = "load"
)

// ReadOrLoad returns the live document with the given id; when there is
// none (never stored, deleted, or expired, swept or not), it calls load to
// fetch it, stores what load returns and returns the stored document: the
// read-through pattern of a cache in front of a slower source.
//
// A hit is a Read: it costs what Read costs and allocates nothing. On a
// miss, load is called once for all the callers that miss the same id while
// it runs: they wait for the load in progress rather than start another.
// Loads of different ids run in parallel. Before it calls load, the load
// reads the id again, so a caller that missed just as an earlier load stored
// the document gets that document, without a second load. A miss costs the
// load and a Create of what it returns, and 0.8 to 1.9 µs more than a Read
// and a Create written by hand, by machine (BenchmarkReadOrLoad; BenchmarkLoadMiss in
// the bench module compares it with otter's loader): most of it to hand
// load to a loader (below) and the result back, two wake-ups, so that the
// callers can stop waiting whatever load does.
//
// load returns anything Create accepts: JSON as []byte or json.RawMessage, a
// Document, or a value that marshals to an object. Its id must be id:
// otherwise every waiting caller gets an error matching ErrInvalidDocument
// that names both ids, and nothing is stored. A document Create would refuse
// is refused the same way (ErrInvalidDocument, ErrInvalidTTL, ErrTooLarge).
// The document is stored with Create, as any write: it gets a new _ts and
// _etag, expires by the collection's TTL rules, and is logged on a durable
// collection (Open). So a write of the id made while load ran wins: if a
// live document has the id when load returns, the callers get that one and
// the loaded one is dropped. The callers get what is stored.
//
// An error from load reaches every waiting caller, wrapped: errors.Is finds
// it, and the message names the id. It is not remembered: the next miss
// calls load again. (To cache that the source has no such document, have
// load return a document that says so.) A panic in load is recovered on the
// loader that runs it: every waiting caller gets an error matching
// ErrLoadPanicked, and the process goes on.
//
// # Contexts
//
// ctx bounds the caller's wait, not the load. A caller whose ctx ends stops
// waiting at once and gets ctx.Err(), unwrapped; the load goes on for the
// callers still waiting. A ctx already done still gets a live document, but
// starts or joins no load. load runs on a loader, never on a caller's
// goroutine, with a context that carries the values of the ctx of the
// caller that started it but not its deadline or cancellation. That context is cancelled when
// load returns, and before that when no caller waits any longer: every
// waiting caller's ctx ended, or the collection was closed. A load whose
// context was cancelled so is abandoned: a caller that misses afterwards
// starts another load, and what the abandoned one returns is stored (if it
// can be, as above) but returned to no one.
//
// load may call any method of the collection, ReadOrLoad of other ids
// included: no lock is held while it runs. It must not wait for a load of
// its own id, which waits for it. ReadOrLoad detects this when given a
// context derived from the load's (as it should be): called for the id
// being loaded, or for one that a load further up the chain of loads that
// called it is loading, it returns an error matching ErrLoadCycle at once.
// Called with an unrelated context, it would wait until that context ends
// or the collection is closed.
//
// # Loaders
//
// A loader is a goroutine of the collection's that runs loads one after
// another. The collection starts one when a load finds none idle, and keeps
// up to four idle for the next loads: a goroutine started per load would
// grow its stack (a copy, twice) to store what load returns, which cost a
// miss a quarter of its time. A load that calls runtime.Goexit ends its
// loader.
//
// # Close
//
// Close does not wait for loads. A caller waiting for a load gets ErrClosed
// as soon as Close is called (or the load's result, if it came at the same
// moment), and the load's context is cancelled. What load returns after
// Close is not stored, and its loader ends when load returns: a load that
// ignores its context keeps it until then. Close ends the idle loaders and
// waits for them. After Close, ReadOrLoad returns ErrClosed without calling
// load, as Read does.
//
// load must not be nil; ReadOrLoad panics if it is.
func (c *Collection) ReadOrLoad(ctx context.Context, id string, load func(ctx context.Context, id string) (any, error)) (Document, error) {
	if load == nil {
		panic("ttlstore: ReadOrLoad with a nil load function")
	}
	key, err := c.keyOf(opReadOrLoad, id)
	if err != nil {
		return Document{}, err
	}
	return c.readOrLoad(ctx, key, load, true)
}

// ReadOrLoadIn is ReadOrLoad of the document with the given id in the
// partition pk: load is called with the id, and must return a document
// with that id in that partition (ErrInvalidDocument, naming both, if
// not). On a partitioned collection ReadOrLoad returns
// ErrPartitionKeyRequired; on one without a PartitionKeyPath, pk must be
// PartitionKeyNone (ErrInvalidPartitionKey otherwise).
func (c *Collection) ReadOrLoadIn(ctx context.Context, pk PartitionKey, id string, load func(ctx context.Context, id string) (any, error)) (Document, error) {
	if load == nil {
		panic("ttlstore: ReadOrLoadIn with a nil load function")
	}
	key, err := c.keyIn(opReadOrLoad, pk, id)
	if err != nil {
		return Document{}, err
	}
	return c.readOrLoad(ctx, key, load, true)
}

// idOfKey returns the id in a document's key.
func (c *Collection) idOfKey(key string) string {
	if c.pk == nil {
		return key
	}
	return key[pkEncLen(key):]
}

// readOrLoad is ReadOrLoad of the document with the given key (id, here
// and in the functions below, is the key; load is given the id alone); its
// first read counts in Stats if count is true (Typed.ReadOrLoad has
// counted its own).
func (c *Collection) readOrLoad(ctx context.Context, id string, load func(ctx context.Context, id string) (any, error), count bool) (Document, error) {
	if c.closed.Load() {
		return Document{}, newError(opReadOrLoad, id, ErrClosed)
	}
	if d, ok := c.readLive(id, count); ok {
		return d, nil
	}
	if err := ctx.Err(); err != nil {
		return Document{}, err
	}
	up, cycle := loadChain(ctx, c, id)
	if cycle {
		return Document{}, newError(opReadOrLoad, id, ErrLoadCycle)
	}

	p := c.loads.part(c.seed, id)
	p.mu.Lock()
	if c.closed.Load() {
		// Close has released, or will find, the loads in the table
		// (closeLoads): a load put in after it would be missed.
		p.mu.Unlock()
		return Document{}, newError(opReadOrLoad, id, ErrClosed)
	}
	call := p.calls[id]
	if call != nil {
		call.waiters++
		p.mu.Unlock()
		return c.awaitLoad(ctx, p, id, call)
	}
	call = &loadCall{values: ctx, c: c, id: id, up: up, p: p, load: load, done: make(chan struct{}), waiters: 1}
	call.ctx, call.cancel = context.WithCancel(call)
	if p.calls == nil {
		p.calls = make(map[string]*loadCall)
	}
	p.calls[id] = call
	p.mu.Unlock()

	c.loads.start(c, call)
	return c.awaitLoad(ctx, p, id, call)
}

// awaitLoad waits, as one of its waiters, for call to finish, ctx to end or
// the collection to close, whichever comes first. Close releases the
// waiters of every load in the table with ErrClosed (closeLoads), so that a
// caller whose ctx cannot end waits with one receive: a select of call.done
// and c.done cost a miss a tenth of its instructions.
func (c *Collection) awaitLoad(ctx context.Context, p *loadPart, id string, call *loadCall) (Document, error) {
	if ctxDone := ctx.Done(); ctxDone != nil {
		select {
		case <-call.done:
		case <-ctxDone:
			p.leave(id, call)
			return Document{}, ctx.Err()
		}
	} else {
		<-call.done
	}
	return call.doc, call.err
}

// runLoad runs one load on a loader: it loads and stores call's id,
// publishes the result to call's waiters, and takes call out of the table.
// Whatever load does, panic and runtime.Goexit included, the waiters are
// released; a panic is recovered here.
func (c *Collection) runLoad(call *loadCall) {
	p, id := call.p, call.id
	var (
		doc      Document
		err      error
		returned bool
	)
	defer func() {
		if !returned {
			err = &loadPanicError{id: id, value: recover()}
		}
		p.mu.Lock()
		if p.calls[id] == call {
			delete(p.calls, id)
		}
		call.finishLocked(doc, err)
		p.mu.Unlock()
		call.cancel()
	}()
	doc, err = c.loadAndStore(call.ctx, id, call.load)
	returned = true
}

// loadAndStore calls load for id, unless a live document has appeared since
// the caller missed it, and stores what load returns.
func (c *Collection) loadAndStore(ctx context.Context, id string, load func(context.Context, string) (any, error)) (Document, error) {
	if c.closed.Load() {
		return Document{}, newError(opReadOrLoad, id, ErrClosed)
	}
	if d, ok := c.readLive(id, false); ok {
		return d, nil
	}
	v, err := load(ctx, c.idOfKey(id))
	if err != nil {
		return Document{}, &opError{op: opLoad, id: id, err: err}
	}
	return c.storeLoaded(id, v)
}

// storeLoaded stores v, which load returned for id, unless a live document
// has the id, and returns the document the id then has.
func (c *Collection) storeLoaded(id string, v any) (Document, error) {
	e, err := c.prepare(opLoad, v)
	if err != nil {
		var oe *opError
		if errors.As(err, &oe) && oe.id == "" {
			oe.id = id
		}
		return Document{}, err
	}
	if got := e.key(); got != id {
		what := "the loaded document's id is " + quoteID(got) + ", not " + quoteID(id)
		if c.pk != nil {
			what = "the loaded document is " + describeKey(got) + ", not " + describeKey(id)
		}
		return Document{}, newErrorDetail(opLoad, id, ErrInvalidDocument, what)
	}
	// Stored as Create stores it, from the entry prepared here. A commit
	// that fails its condition leaves its entry as it was, so the entry
	// goes in again after a conflict.
	for {
		d, err := c.writeEntry(opLoad, e, mustNotExist, "", false)
		if !errors.Is(err, ErrConflict) {
			return d, c.loadError(id, err)
		}
		// Written while load ran: that write wins.
		d, err = c.read(id, false, false)
		if !errors.Is(err, ErrNotFound) {
			return d, c.loadError(id, err)
		}
		// Deleted, or expired, since Create looked: absent again, so
		// the loaded document may go in.
	}
}

// loadError names ReadOrLoad and id in err if it is ErrClosed, which Create
// and Read report without the id; it returns other errors, and nil, as they
// are.
func (c *Collection) loadError(id string, err error) error {
	if errors.Is(err, ErrClosed) {
		return newError(opReadOrLoad, id, ErrClosed)
	}
	return err
}

// loadPanicError is the error of a load that panicked, or called
// runtime.Goexit (value nil). It matches ErrLoadPanicked and, when the panic
// value is an error, that error.
type loadPanicError struct {
	id    string
	value any
}

func (e *loadPanicError) Error() string {
	what := "called runtime.Goexit"
	if e.value != nil {
		what = fmt.Sprintf("panic: %v", e.value)
	}
	return "ttlstore: " + opLoad + " " + describeKey(e.id) + ": " + what + ": " + ErrLoadPanicked.Error()
}

func (e *loadPanicError) Unwrap() []error {
	if err, ok := e.value.(error); ok {
		return []error{ErrLoadPanicked, err}
	}
	return []error{ErrLoadPanicked}
}

// loadKey is the key of the context value that says which load a load's
// context belongs to: its *loadCall.
type loadKey struct{}

// loadChain returns the load ctx belongs to, if any, and whether that load
// or one of the loads up its chain is loading id into c.
func loadChain(ctx context.Context, c *Collection, id string) (*loadCall, bool) {
	top, _ := ctx.Value(loadKey{}).(*loadCall)
	for l := top; l != nil; l = l.up {
		if l.c == c && l.id == id {
			return top, true
		}
	}
	return top, false
}
