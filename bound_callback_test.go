package ttlstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/vfs"
)

// The bounded mode where it meets user callbacks (issue 23): OnExpire,
// OnEvict, ReadOrLoad's loader and the Typed view's callbacks may call
// every method of their collection, writes that need room included, in
// every mode.

// cbDeadline bounds the real time a scenario may take. It only detects a
// deadlock: every scenario is driven by a mock clock and ManualSweep, and
// no result depends on timing.
const cbDeadline = 10 * time.Second

// cbRun runs f on a goroutine of its own and fails the test if it has not
// returned within cbDeadline: a deadlock must fail the test, not hang the
// suite.
func cbRun(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(cbDeadline):
		t.Fatalf("deadlock: %s has not returned after %v", what, cbDeadline)
	}
}

// cbModes are the two ways to make a collection: New, and Open of a
// durable one (on MemFS).
var cbModes = []string{"memory", "durable"}

// cbOpen returns a collection made as mode says with opts; cleanup checks
// its invariants and closes it.
func cbOpen(t *testing.T, mode string, opts ttlstore.Options) *ttlstore.Collection {
	t.Helper()
	var c *ttlstore.Collection
	var err error
	switch mode {
	case "memory":
		c, err = ttlstore.New(opts)
	case "durable":
		c, err = ttlstore.OpenFS(vfs.NewMemFS(), "db", opts, 1<<30, false)
	default:
		panic(mode)
	}
	require.NoError(t, err)
	t.Cleanup(func() {
		assert.NoError(t, c.CheckInvariants())
		assert.NoError(t, c.Close())
	})
	return c
}

// cbLog records what the callbacks saw and the errors of the calls they
// made, under a mutex: a ReadOrLoad's loader runs on a goroutine of its
// own.
type cbLog struct {
	mu     sync.Mutex
	events []string
	errs   []string
}

func (l *cbLog) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, fmt.Sprintf(format, args...))
}

// check records err unless it is nil or one of the errors a call made
// from a callback may rightly get (ok).
func (l *cbLog) check(what string, err error, ok ...error) {
	if err == nil {
		return
	}
	for _, e := range ok {
		if errors.Is(err, e) {
			return
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, what+": "+err.Error())
}

func (l *cbLog) snapshot() ([]string, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...), append([]string(nil), l.errs...)
}

// cbDoc is the Typed view's document.
type cbDoc struct {
	ID  string `json:"id"`
	TTL int32  `json:"ttl,omitempty"`
	P   string `json:"p,omitempty"`
}

// cbReenter is what every callback of the matrix does with the document
// id it was given: it calls the collection's methods, first a write that
// needs room at the bound (a document that cannot expire, so that it is
// never evicted in turn under EvictSoonestExpiry), then every other kind
// of call. Documents it writes have ids starting "cb-", for which it does
// nothing, so that the callbacks it causes in turn end.
func cbReenter(c *ttlstore.Collection, tv *ttlstore.Typed[cbDoc], log *cbLog, why, id string) {
	if strings.HasPrefix(id, "cb-") {
		return
	}
	log.add("%s %s", why, id)
	cid := "cb-" + id
	full := []error{ttlstore.ErrFull}
	_, err := c.Upsert(fmt.Appendf(nil, `{"id":%q,"ttl":-1}`, cid))
	log.check("Upsert "+cid, err, full...)
	_, err = tv.Upsert(cbDoc{ID: cid, TTL: -1, P: "typed"})
	log.check("Typed.Upsert "+cid, err, full...)
	_, err = c.Create(fmt.Appendf(nil, `{"id":%q,"ttl":50}`, cid+"-c"))
	log.check("Create "+cid+"-c", err, append(full, ttlstore.ErrConflict)...)
	_, err = c.Replace(fmt.Appendf(nil, `{"id":%q,"ttl":-1,"v":2}`, cid))
	log.check("Replace "+cid, err, append(full, ttlstore.ErrNotFound)...)
	_, err = c.Touch(cid)
	log.check("Touch "+cid, err, ttlstore.ErrNotFound)
	_, err = c.Read(id)
	log.check("Read "+id, err, ttlstore.ErrNotFound)
	_, err = tv.Read(cid)
	log.check("Typed.Read "+cid, err, ttlstore.ErrNotFound)
	_, err = c.ReadOrLoad(context.Background(), cid+"-l", func(_ context.Context, lid string) (any, error) {
		return fmt.Appendf(nil, `{"id":%q,"ttl":-1}`, lid), nil
	})
	log.check("ReadOrLoad "+cid+"-l", err, full...)
	_ = c.Len()
	_ = c.Stats()
	for range c.All() {
	}
	for _, err := range tv.All() {
		log.check("Typed.All", err)
	}
	c.Sweep()
	st := c.Stats()
	log.check("SetLimits", c.SetLimits(st.MaxDocuments, st.MaxBytes))
	log.check("SetDefaultTTL", c.SetDefaultTTL(c.DefaultTTL()))
	log.check("Delete "+cid+"-c", c.Delete(cid+"-c"), ttlstore.ErrNotFound)
}

// TestBoundCallbacksMayWrite runs, for every callback × policy × mode, a
// history that calls the callback while the collection is at its bound,
// and has the callback call every method of the collection, a write that
// needs room first. Every call must return (no deadlock), with nil or the
// error its situation calls for, and the collection must be within its
// bound at the end.
func TestBoundCallbacksMayWrite(t *testing.T) {
	callbacks := []string{"OnExpire", "OnEvict", "ReadOrLoad", "Typed.ReadOrLoad", "Typed.Query"}
	for _, cb := range callbacks {
		for _, policy := range bndPolicies {
			for _, mode := range cbModes {
				t.Run(cb+"/"+policy.String()+"/"+mode, func(t *testing.T) {
					cbRun(t, "the history", func() { cbHistory(t, cb, policy, mode) })
				})
			}
		}
	}
}

// cbHistory is one history of TestBoundCallbacksMayWrite, with the
// callback cb calling back into the collection.
func cbHistory(t *testing.T, cb string, policy ttlstore.EvictionPolicy, mode string) {
	clk := newMock()
	var log cbLog
	var c *ttlstore.Collection
	var tv *ttlstore.Typed[cbDoc]
	opts := ttlstore.Options{
		DefaultTTL:    ttlstore.TTL(ttlstore.Never),
		Clock:         clk,
		SweepInterval: ttlstore.ManualSweep,
		MaxDocuments:  3,
		Eviction:      policy,
	}
	switch cb {
	case "OnExpire":
		opts.OnExpire = func(d ttlstore.Document) { cbReenter(c, tv, &log, "OnExpire", d.ID()) }
	case "OnEvict":
		opts.OnEvict = func(d ttlstore.Document) { cbReenter(c, tv, &log, "OnEvict", d.ID()) }
	}
	c = cbOpen(t, mode, opts)
	tv = ttlstore.NewTyped[cbDoc](c)

	// A document written and deleted leaves the floor of expiries at its
	// own: once the clock passes it, a write at the bound makes room
	// with its shard's lock let go (makeRoom), not under it.
	upsert(t, c, `{"id":"x","ttl":10}`)
	require.NoError(t, c.Delete("x"))
	upsert(t, c, `{"id":"y","ttl":5}`)
	upsert(t, c, `{"id":"a","ttl":100}`)
	upsert(t, c, `{"id":"n"}`) // cannot expire
	clk.Add(10 * time.Second)  // y expires, unswept

	full := []error{ttlstore.ErrFull}
	// A write at the bound: sweeps y (OnExpire), and evicts under the
	// evicting policies (OnEvict).
	_, err := c.Upsert([]byte(`{"id":"b","ttl":-1}`))
	log.check("Upsert b", err, full...)
	// A write that evicts with its shard's lock held (makeRoomLocked).
	_, err = c.Upsert([]byte(`{"id":"b2","ttl":200}`))
	log.check("Upsert b2", err, full...)

	// Loads at the bound, whose loaders call back.
	load := func(ctx context.Context, id string) (any, error) {
		if cb == "ReadOrLoad" {
			cbReenter(c, tv, &log, "load", id)
		}
		return fmt.Appendf(nil, `{"id":%q,"ttl":300}`, id), nil
	}
	_, err = c.ReadOrLoad(context.Background(), "l", load)
	log.check("ReadOrLoad l", err, full...)
	_, err = tv.ReadOrLoad(context.Background(), "tl", func(ctx context.Context, id string) (cbDoc, error) {
		if cb == "Typed.ReadOrLoad" {
			cbReenter(c, tv, &log, "typed load", id)
		}
		return cbDoc{ID: id, TTL: 400}, nil
	})
	log.check("Typed.ReadOrLoad tl", err, full...)
	for v, err := range tv.Query(func(v cbDoc) bool {
		if cb == "Typed.Query" {
			cbReenter(c, tv, &log, "typed match", v.ID)
		}
		return true
	}) {
		log.check("Typed.Query "+v.ID, err)
	}

	// A lowered bound, which evicts on the caller's goroutine.
	log.check("SetLimits(1, 0)", c.SetLimits(1, 0))
	// Expiry of what is left, by Sweep.
	clk.Add(time.Hour)
	c.Sweep()
	log.check("SetLimits(2, 0)", c.SetLimits(2, 0))
	_, err = c.Upsert([]byte(`{"id":"z","ttl":30}`))
	log.check("Upsert z", err, full...)

	events, errs := log.snapshot()
	t.Logf("callbacks: %v", events)
	assert.Empty(t, errs, "calls that failed")
	require.NoError(t, c.CheckInvariants())
	// Within the bound, but where the policy may not evict what is left.
	if st := c.Stats(); st.Live+st.Expired > st.MaxDocuments {
		switch policy {
		case ttlstore.EvictColdest:
			t.Errorf("past MaxDocuments: %+v", st)
		case ttlstore.EvictSoonestExpiry:
			for d := range c.All() {
				_, ok := d.ExpiresAt()
				assert.False(t, ok, "past MaxDocuments (%+v) with %s, which can expire", st, d)
			}
		}
	}
	switch {
	case cb == "OnEvict" && policy != ttlstore.NoEviction,
		cb == "OnExpire",
		cb == "ReadOrLoad", cb == "Typed.ReadOrLoad", cb == "Typed.Query":
		assert.NotEmpty(t, events, "the callback was never called")
	}
}

// TestBoundOnEvictWriteNoDeadlock is the report of issue 23, case 1: an
// OnEvict that writes a document that cannot expire, into a collection
// where only such documents are left, once for an eviction made by
// SetLimits and once for one made by a write. The inner write is refused
// with ErrFull, and then the outer call returns, without deadlock.
func TestBoundOnEvictWriteNoDeadlock(t *testing.T) {
	for _, mode := range cbModes {
		for _, trigger := range []string{"SetLimits", "Upsert"} {
			t.Run(mode+"/"+trigger, func(t *testing.T) {
				clk := newMock()
				var c *ttlstore.Collection
				var mu sync.Mutex
				var evicted []string
				var inner []error
				opts := ttlstore.Options{
					DefaultTTL:    ttlstore.TTL(ttlstore.Never),
					Eviction:      ttlstore.EvictSoonestExpiry,
					Clock:         clk,
					SweepInterval: ttlstore.ManualSweep,
					OnEvict: func(d ttlstore.Document) {
						_, err := c.Upsert(fmt.Appendf(nil, `{"id":"evicted-%s","ttl":-1}`, d.ID()))
						mu.Lock()
						evicted = append(evicted, d.ID())
						inner = append(inner, err)
						mu.Unlock()
					},
				}
				want := []string{"n1", "n2"}
				if trigger == "Upsert" {
					opts.MaxDocuments = 2
					want = []string{"b", "n"}
				}
				c = cbOpen(t, mode, opts)
				var outer error
				switch trigger {
				case "SetLimits":
					upsert(t, c, `{"id":"a","ttl":100}`)
					upsert(t, c, `{"id":"n1"}`)
					upsert(t, c, `{"id":"n2"}`)
					cbRun(t, "SetLimits(2, 0)", func() { outer = c.SetLimits(2, 0) })
				case "Upsert":
					upsert(t, c, `{"id":"x","ttl":10}`)
					require.NoError(t, c.Delete("x"))
					upsert(t, c, `{"id":"a","ttl":100}`)
					upsert(t, c, `{"id":"n"}`)
					clk.Add(10 * time.Second)
					cbRun(t, "Upsert b", func() { _, outer = c.Upsert([]byte(`{"id":"b","ttl":-1}`)) })
				}
				require.NoError(t, outer)
				mu.Lock()
				defer mu.Unlock()
				assert.Equal(t, []string{"a"}, evicted)
				require.Len(t, inner, 1)
				assert.ErrorIs(t, inner[0], ttlstore.ErrFull, "the write from OnEvict: only documents that cannot expire are left")
				assert.Equal(t, want, ids(c))
			})
		}
	}
}
