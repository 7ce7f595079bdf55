package ttlstore

import (
	"context"
	"hash/maphash"
	"sync"
	"time"
)

// The table of loads in progress (one per missed id, in parts locked
// apart) and the loaders that run them; ReadOrLoad is in readthrough.go.

// maxIdleLoaders is how many loaders a collection keeps waiting for the
// next load.
const maxIdleLoaders = 4

// A loader is a goroutine that runs loads, one after another: the one it was
// started for, then, while it is one of at most maxIdleLoaders that wait,
// each load handed to it, until the collection is closed. Loaders are kept
// rather than a goroutine started per load because of the stack: storing a
// document takes more than a new goroutine's 2 KiB, and growing it (a copy,
// twice) cost a miss a quarter of its time; a kept loader's has grown.
type loader struct {
	next chan *loadCall // the next load to run; nil: the collection is closed
}

// start has call run by an idle loader, or by a new one if none waits.
func (t *loadTable) start(c *Collection, call *loadCall) {
	t.loadersMu.Lock()
	if n := len(t.idle); n > 0 {
		l := t.idle[n-1]
		t.idle[n-1] = nil
		t.idle = t.idle[:n-1]
		t.loadersMu.Unlock()
		l.next <- call // never blocks: an idle loader's next is empty
		return
	}
	t.loadersMu.Unlock()
	go c.runLoader(&loader{next: make(chan *loadCall, 1)}, call)
}

// runLoader is the goroutine of the loader l, started to run call. A load
// that calls runtime.Goexit ends it.
func (c *Collection) runLoader(l *loader, call *loadCall) {
	for call != nil {
		c.runLoad(call)
		if !c.loads.park(l) {
			return
		}
		call = <-l.next
	}
	c.loads.ending.Done() // woken by closeLoads
}

// park makes l an idle loader, unless maxIdleLoaders wait already or the
// collection is closed; it reports whether it did.
func (t *loadTable) park(l *loader) bool {
	t.loadersMu.Lock()
	defer t.loadersMu.Unlock()
	if t.closed || len(t.idle) >= maxIdleLoaders {
		return false
	}
	t.idle = append(t.idle, l)
	return true
}

// closeLoads is Close's part, called once the collection is marked
// closed: it releases the waiters of every load in progress with ErrClosed,
// cancels those loads' contexts, has their loaders end after them, and ends
// the idle loaders, waiting until they have.
func (t *loadTable) closeLoads() {
	t.loadersMu.Lock()
	t.closed = true
	idle := t.idle
	t.idle = nil
	t.loadersMu.Unlock()
	t.ending.Add(len(idle))
	for _, l := range idle {
		l.next <- nil
	}
	defer t.ending.Wait()
	for i := range t.parts {
		p := &t.parts[i]
		p.mu.Lock()
		for id, call := range p.calls {
			delete(p.calls, id)
			call.finishLocked(Document{}, newError(opReadOrLoad, id, ErrClosed))
			call.cancel() // calls no user code: it closes channels
		}
		p.mu.Unlock()
	}
}

// loadPartBits is the log2 of how many independently locked parts a
// loadTable has, so that misses of different ids seldom wait for each other.
const loadPartBits = 4

// loadTable holds a Collection's loads in progress, by id, and its idle
// loaders. Its zero value is an empty table: each part makes its map on
// first use.
type loadTable struct {
	parts [1 << loadPartBits]loadPart

	// loadersMu protects idle and closed.
	loadersMu sync.Mutex
	idle      []*loader // the loaders that wait for a load, at most maxIdleLoaders
	closed    bool      // set by Close: no loader waits any longer

	ending sync.WaitGroup // the idle loaders Close woke, until they end
}

// loadPart holds the loads in progress of the ids that hash to it.
type loadPart struct {
	// mu protects calls, and the waiters of every call in it.
	mu    sync.Mutex
	calls map[string]*loadCall
	_     [48]byte // keeps neighbouring parts' mutexes off one cache line
}

// part returns the part of t that holds the loads of id.
func (t *loadTable) part(seed maphash.Seed, id string) *loadPart {
	// The top bits: the collection's shards use the bottom ones.
	return &t.parts[maphash.String(seed, id)>>(64-loadPartBits)]
}

// loadCall is one load in progress and, once done is closed, its result.
//
// It is also the root of the load's context, which is context.WithCancel
// of it: a context.Context that carries the values of values (the ctx of the
// caller that started the load) and itself under loadKey, and has no
// deadline and no cancellation of its own. One allocation instead of the
// three of context.WithValue(context.WithoutCancel(ctx), loadKey{}, ...).
// It is never handed out bare: the context package's own keys are then
// answered by the cancelCtx around it, never by values.
type loadCall struct {
	values context.Context
	c      *Collection
	id     string
	up     *loadCall // the load values comes from, if any: the chain ErrLoadCycle looks up
	p      *loadPart // the part of the table that holds it
	load   func(context.Context, string) (any, error)
	ctx    context.Context // the load's context: context.WithCancel of the loadCall

	done chan struct{} // closed once doc and err are set
	doc  Document
	err  error
	// finished is set when done is closed: by the load, or by Close;
	// the part's mu protects it.
	finished bool
	// waiters is how many callers wait for done; the part's mu protects
	// it. When the last one leaves before done is closed, the load is
	// abandoned: it leaves the table and its context is cancelled.
	waiters int
	cancel  context.CancelFunc // cancels the load's context
}

// Deadline, Done, Err and Value make a loadCall the context.Context
// described above.
func (l *loadCall) Deadline() (time.Time, bool) { return time.Time{}, false }
func (l *loadCall) Done() <-chan struct{}       { return nil }
func (l *loadCall) Err() error                  { return nil }
func (l *loadCall) Value(key any) any {
	if key == (loadKey{}) {
		return l
	}
	return l.values.Value(key)
}

// finishLocked gives doc and err to call's waiters, unless they have been
// given a result already. The part's mu must be held.
func (l *loadCall) finishLocked(doc Document, err error) {
	if l.finished {
		return
	}
	l.finished = true
	l.doc, l.err = doc, err
	close(l.done)
}

// leave takes a caller that stops waiting for call, the load of id, off its
// waiters, and abandons the load if that was the last one.
func (p *loadPart) leave(id string, call *loadCall) {
	p.mu.Lock()
	call.waiters--
	last := call.waiters == 0
	if last && p.calls[id] == call {
		delete(p.calls, id)
	}
	p.mu.Unlock()
	if last {
		call.cancel()
	}
}
