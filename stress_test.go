package ttlstore_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
)

// TestStress runs, under the race detector, 8 goroutines doing mixed
// operations on 30 overlapping ids, one goroutine moving the mock clock in
// small steps (the only one that moves it), one flipping DefaultTTL, and the
// background sweeper, plus manual sweeps. It is bounded in iterations, not
// time.
//
// What a reader can check: every call reads the clock itself, under the
// lock of the document's shard, and the clock only moves forward. So if a
// goroutine reads the clock (before) and then calls Read, All or Query, the
// collection judged expiry at some instant at or after before, and every
// document it returned was live then: its expiry second is after before's
// whole second. (It need not be live at a reading taken after the call:
// time may have passed since.) The same holds for a document a write
// returns. A document passed to OnExpire was expired when removed, so its
// expiry second is at or before a reading taken in the callback.
func TestStress(t *testing.T) {
	const (
		workers      = 8
		idCount      = 30
		opsPerWorker = 4000
		clockSteps   = 600
		flips        = 300
	)
	clk := &monotonicClock{Mock: newMock()}
	var reported atomic.Uint64
	c, err := ttlstore.New(ttlstore.Options{
		DefaultTTL:    ttlstore.TTL(3),
		Clock:         clk,
		SweepInterval: time.Second,
		SweepBatch:    3,
		OnExpire: func(d ttlstore.Document) {
			reported.Add(1)
			exp, ok := d.ExpiresAt()
			assert.True(t, ok && exp.Unix() <= clk.Now().Unix(), "OnExpire(%s) before its expiry", d)
		},
	})
	require.NoError(t, err)
	defer c.Close()

	var wg sync.WaitGroup
	var ops atomic.Int64
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := &stresser{t: t, c: c, clk: clk, rng: rand.New(rand.NewPCG(uint64(w), 42)),
				worker: w, ids: idCount, etags: make(map[string]string)}
			for range opsPerWorker {
				s.step()
			}
			ops.Add(opsPerWorker)
		}()
	}
	wg.Add(2)
	go func() { // the only goroutine that moves the clock
		defer wg.Done()
		rng := rand.New(rand.NewPCG(1, 2))
		for range clockSteps {
			clk.Add(time.Duration(rng.Int64N(int64(900*time.Millisecond))) + time.Millisecond)
		}
	}()
	go func() {
		defer wg.Done()
		values := []*int32{nil, ttlstore.TTL(-1), ttlstore.TTL(1), ttlstore.TTL(3), ttlstore.TTL(5), ttlstore.TTL(60)}
		for i := range flips {
			assert.NoError(t, c.SetDefaultTTL(values[i%len(values)]))
		}
	}()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	awaitSignal(t, done, "the stress goroutines")

	require.NoError(t, c.Close()) // waits for the background sweeper
	require.NoError(t, c.CheckInvariants())
	st := c.Stats()
	n := 0
	for range c.All() {
		n++
	}
	assert.Equal(t, st.Live, n, "Stats.Live and All")
	assert.Equal(t, st.Live, c.Len(), "Stats.Live and Len")
	assert.Equal(t, st.Swept, reported.Load(), "Stats.Swept and OnExpire calls")
	swept := c.Sweep() // works after Close, on this goroutine
	assert.Equal(t, st.Expired, swept, "Sweep removes exactly the expired documents")
	assert.Equal(t, ttlstore.Stats{Live: st.Live, Swept: st.Swept + uint64(swept)}, ttlstore.CoreStats(c.Stats()))
	assert.Equal(t, reported.Load(), c.Stats().Swept)
	require.NoError(t, c.CheckInvariants())
	t.Logf("%d operations, %d clock steps, %d DefaultTTL changes; %d documents expired, %d live at the end",
		ops.Load(), clockSteps, flips, c.Stats().Swept, st.Live)
}

// monotonicClock is the clock of TestStress. clock.Mock can step back for
// a moment: a timer the sweeper sets while another goroutine's Add is
// finishing may be left behind the new time, and the next move sets the
// mock's time to that timer's before going on. The collection must be
// given a clock that only moves forward, as real clocks used by it do, so
// Now never returns less than it returned before. Timers are the mock's.
type monotonicClock struct {
	*clock.Mock
	mu   sync.Mutex
	last time.Time
}

func (c *monotonicClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := c.Mock.Now(); now.After(c.last) {
		c.last = now
	}
	return c.last
}

// stresser is one of TestStress's workers.
type stresser struct {
	t      *testing.T
	c      *ttlstore.Collection
	clk    *monotonicClock
	rng    *rand.Rand
	worker int
	ids    int
	etags  map[string]string // the last _etag this worker saw per id
	n      int
}

func (s *stresser) id() string { return fmt.Sprintf("k%d", s.rng.IntN(s.ids)) }

func (s *stresser) doc(id string) []byte {
	s.n++
	ttl := []string{"", "", `,"ttl":-1`, `,"ttl":1`, `,"ttl":2`, `,"ttl":10`}[s.rng.IntN(6)]
	return fmt.Appendf(nil, `{"id":%q,"w":%d,"n":%d%s}`, id, s.worker, s.n, ttl)
}

func (s *stresser) etag(id string) string {
	if e, ok := s.etags[id]; ok && s.rng.IntN(4) != 0 {
		return e
	}
	return "stale"
}

// step runs one random operation and checks what it returned.
func (s *stresser) step() {
	id := s.id()
	before := s.clk.Now()
	var (
		docs    []ttlstore.Document
		err     error
		allowed []error // the error classes this operation may return
	)
	one := func(d ttlstore.Document, e error) {
		err = e
		if e == nil {
			docs = append(docs, d)
			if d.ID() != id {
				s.t.Errorf("asked for %q, got %s", id, d)
			}
		}
	}
	switch op := s.rng.IntN(14); op {
	case 0:
		one(s.c.Create(s.doc(id)))
		allowed = []error{ttlstore.ErrConflict}
	case 1:
		one(s.c.Upsert(s.doc(id)))
	case 2:
		one(s.c.Replace(s.doc(id)))
		allowed = []error{ttlstore.ErrNotFound}
	case 3:
		one(s.c.ReplaceIfMatch(s.doc(id), s.etag(id)))
		allowed = []error{ttlstore.ErrNotFound, ttlstore.ErrPreconditionFailed}
	case 4:
		one(s.c.Touch(id))
		allowed = []error{ttlstore.ErrNotFound}
	case 5:
		err = s.c.Delete(id)
		allowed = []error{ttlstore.ErrNotFound}
	case 6:
		err = s.c.DeleteIfMatch(id, s.etag(id))
		allowed = []error{ttlstore.ErrNotFound, ttlstore.ErrPreconditionFailed}
	case 7, 8, 9:
		one(s.c.Read(id))
		allowed = []error{ttlstore.ErrNotFound}
	case 10:
		for d := range s.c.All() {
			docs = append(docs, d)
		}
	case 11:
		for d := range s.c.Query(func(d ttlstore.Document) bool { return d.ID() < id }) {
			docs = append(docs, d)
			if d.ID() >= id {
				s.t.Errorf("Query yielded %s, which its predicate refused", d)
			}
		}
	case 12:
		st := s.c.Stats()
		assert.GreaterOrEqual(s.t, st.Live, 0)
		assert.GreaterOrEqual(s.t, st.Expired, 0)
		assert.LessOrEqual(s.t, s.c.Len(), s.ids)
	case 13:
		if s.rng.IntN(10) == 0 {
			s.c.Sweep()
		}
	}
	if err != nil && !oneOf(err, allowed) {
		s.t.Errorf("unexpected error: %v", err)
	}
	if len(docs) > s.ids {
		s.t.Errorf("%d documents from %d ids", len(docs), s.ids)
	}
	for _, d := range docs {
		if exp, ok := d.ExpiresAt(); ok && exp.Unix() <= before.Unix() {
			s.t.Errorf("got %s, expired at %v, by a call that started at %v", d, exp, before)
		}
		s.etags[d.ID()] = d.ETag()
	}
}

func oneOf(err error, classes []error) bool {
	for _, c := range classes {
		if errors.Is(err, c) {
			return true
		}
	}
	return false
}
