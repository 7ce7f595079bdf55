package ttlstore_test

import (
	"context"
	"encoding/json"
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
// every mode; and a write that evicting cannot make room for is refused
// before it evicts anything.

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

// cbJSON is a Typed view's document whose JSON methods are callbacks:
// while cbJSONHook is set, they call it with the document's id. (Tests
// do not run in parallel.)
type cbJSON struct {
	ID  string `json:"id"`
	TTL int32  `json:"ttl,omitempty"`
}

var cbJSONHook func(id string)

// MarshalJSON calls the hook, then marshals j as a plain struct.
func (j cbJSON) MarshalJSON() ([]byte, error) {
	if cbJSONHook != nil {
		cbJSONHook(j.ID)
	}
	type plain cbJSON
	return json.Marshal(plain(j))
}

// UnmarshalJSON unmarshals as a plain struct, then calls the hook.
func (j *cbJSON) UnmarshalJSON(b []byte) error {
	type plain cbJSON
	if err := json.Unmarshal(b, (*plain)(j)); err != nil {
		return err
	}
	if cbJSONHook != nil {
		cbJSONHook(j.ID)
	}
	return nil
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
	callbacks := []string{"OnExpire", "OnEvict", "ReadOrLoad", "Typed.ReadOrLoad", "Typed.Query", "Typed JSON methods"}
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
	if cb == "Typed JSON methods" {
		cbJSONHook = func(id string) { cbReenter(c, tv, &log, "typed JSON", id) }
		t.Cleanup(func() { cbJSONHook = nil })
	}

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

	// Writes and reads of values whose JSON methods call back.
	tj := ttlstore.NewTyped[cbJSON](c)
	_, err = tj.Upsert(cbJSON{ID: "j", TTL: 500})
	log.check("Typed.Upsert j", err, full...)
	_, err = tj.Read("j")
	log.check("Typed.Read j", err, ttlstore.ErrNotFound)

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
		cb == "ReadOrLoad", cb == "Typed.ReadOrLoad", cb == "Typed.Query", cb == "Typed JSON methods":
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

// TestBoundRefusedWriteEvictsNothing is issue 23, case 2: under
// EvictSoonestExpiry, a write that evicting every document that can
// expire would not make room for is refused with ErrFull before anything
// is evicted (a rejected write changes nothing); one that evicting can
// make room for goes in. Under EvictColdest every document but the one
// written may be evicted, so such a write always goes in.
//
// The races in which evictions still stand behind a failed write (see
// EvictionPolicy) are not forced here: their window runs from a write's
// first eviction to its retaking its shard's lock, and nothing the public
// API lets a test run (a callback, a clock read) runs in it without that
// lock or that room held, so another call made from there to win the race
// would wait for the write instead. TestModel checks the other half on
// random histories, one call at a time: a refused write never evicted.
func TestBoundRefusedWriteEvictsNothing(t *testing.T) {
	pad := strings.Repeat("p", 400)
	e := `{"id":"e","ttl":100}`                  // can expire
	n := `{"id":"n","ttl":-1,"p":"` + pad + `"}` // cannot
	tests := []struct {
		name   string
		policy ttlstore.EvictionPolicy
		docs   []string // stored first, in order
		// maxBytes is the sum of the weights of these (indexes into
		// docs, or -1 for the write's document); maxDocs is a bound.
		maxBytes []int
		maxDocs  int
		op       string // Create or Upsert
		write    string
		// full: refused with ErrFull; evicted: what it evicts otherwise
		// (nil: not checked).
		full    bool
		evicted []string
	}{
		{
			name: "the report", policy: ttlstore.EvictSoonestExpiry,
			docs: []string{e, n}, maxBytes: []int{0, 1},
			op: "Create", write: `{"id":"b","ttl":-1,"p":"` + pad + `"}`, full: true,
		},
		{
			name: "the report, Upsert", policy: ttlstore.EvictSoonestExpiry,
			docs: []string{e, n}, maxBytes: []int{0, 1},
			op: "Upsert", write: `{"id":"b","ttl":50,"p":"` + pad + `"}`, full: true,
		},
		{
			name: "two that can expire are not enough", policy: ttlstore.EvictSoonestExpiry,
			docs: []string{e, `{"id":"f","ttl":200}`, n}, maxBytes: []int{0, 1, 2},
			op: "Create", write: `{"id":"b","ttl":-1,"p":"` + pad[:200] + `"}`, full: true,
		},
		{
			name: "an overwrite of one that cannot expire", policy: ttlstore.EvictSoonestExpiry,
			docs: []string{e, n, `{"id":"m"}`}, maxBytes: []int{0, 1, 2},
			op: "Upsert", write: `{"id":"n","ttl":-1,"p":"` + pad + pad[:150] + `"}`, full: true,
		},
		{
			name: "an overwrite of the one that can expire", policy: ttlstore.EvictSoonestExpiry,
			docs: []string{e, n}, maxBytes: []int{0, 1},
			op: "Upsert", write: `{"id":"e","ttl":100,"p":"` + pad + `"}`, full: true,
		},
		{
			name: "MaxDocuments: evicting makes room", policy: ttlstore.EvictSoonestExpiry,
			docs: []string{`{"id":"m"}`, e, n}, maxDocs: 3,
			op: "Create", write: `{"id":"b","ttl":-1}`, evicted: []string{"e"},
		},
		{
			name: "evicting makes room", policy: ttlstore.EvictSoonestExpiry,
			docs: []string{e, `{"id":"f","ttl":200,"p":"` + pad + `"}`, n}, maxBytes: []int{0, 1, 2},
			op: "Create", write: `{"id":"b","ttl":-1,"p":"` + pad + `"}`, evicted: []string{"e", "f"},
		},
		{
			name: "EvictColdest evicts what cannot expire", policy: ttlstore.EvictColdest,
			docs: []string{e, n}, maxBytes: []int{0, 1},
			op: "Create", write: `{"id":"b","ttl":-1,"p":"` + pad + `"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var evicted bndEvictions
			c, _ := newCollection(t, ttlstore.Options{
				DefaultTTL: ttlstore.TTL(ttlstore.Never),
				Eviction:   tt.policy,
				OnEvict:    evicted.add,
			})
			var maxBytes int64
			weights := make([]int64, len(tt.docs))
			for i, doc := range tt.docs {
				weights[i] = upsert(t, c, doc).Weight()
			}
			for _, i := range tt.maxBytes {
				maxBytes += weights[i]
			}
			if tt.name == "the report" {
				// The weights the report gives, less 24 bytes each
				// since docOverhead went from 64 to 40 (issue 25).
				require.Equal(t, []int64{120, 520}, weights)
				require.Equal(t, int64(520), bndWeight(t, []byte(tt.write)))
			}
			if tt.full {
				// The premise: the write is not too large, but the
				// documents that cannot expire, other than its id's,
				// leave no room for it.
				var write struct{ ID string }
				require.NoError(t, json.Unmarshal([]byte(tt.write), &write))
				w := bndWeight(t, []byte(tt.write))
				require.LessOrEqual(t, w, maxBytes, "too large")
				fixed := w
				for d := range c.All() {
					if _, ok := d.ExpiresAt(); !ok && d.ID() != write.ID {
						fixed += d.Weight()
					}
				}
				require.Greater(t, fixed, maxBytes, "evicting all that can expire makes room")
			}
			require.NoError(t, c.SetLimits(tt.maxDocs, maxBytes))
			require.Zero(t, evicted.count(), "SetLimits evicted")
			before := bndStateOf(c)
			var err error
			switch tt.op {
			case "Create":
				_, err = c.Create([]byte(tt.write))
			case "Upsert":
				_, err = c.Upsert([]byte(tt.write))
			}
			if tt.full {
				require.ErrorIs(t, err, ttlstore.ErrFull)
				assert.Empty(t, evicted.ids(), "a refused write evicted")
				assert.Equal(t, before, bndStateOf(c), "a refused write changed the collection")
				st := c.Stats()
				assert.Zero(t, st.Evicted)
				assert.Equal(t, uint64(1), st.Refused)
				return
			}
			require.NoError(t, err)
			if tt.evicted != nil {
				got := evicted.ids()
				slicesSort(got)
				assert.Equal(t, tt.evicted, got)
			}
		})
	}
}
