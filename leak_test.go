package ttlstore_test

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/ttlstore/ttlstore"
)

// The goroutine checks of TestMain (goleak) run after all tests; the tests
// here also check the promises of Close one by one.

// expiredCollection returns a collection with a background sweeper (unless
// opts says otherwise) and n documents that expire 10 s after the start of
// its mock clock.
func expiredCollection(t *testing.T, n int, opts ttlstore.Options) (*ttlstore.Collection, *clock.Mock) {
	t.Helper()
	opts.DefaultTTL = ttlstore.TTL(10)
	if opts.SweepInterval == 0 {
		opts.SweepInterval = time.Second
	}
	c, clk := newCollection(t, opts)
	for i := range n {
		_, err := c.Create(fmt.Appendf(nil, `{"id":"d%d"}`, i))
		require.NoError(t, err)
	}
	return c, clk
}

// awaitMoving waits for ch like awaitSignal, moving the mock clock by zero
// meanwhile: a mock runs timers only inside Add or Set, and a timer the
// sweeper sets just as an Add finishes would otherwise wait for the next
// move.
func awaitMoving[T any](t *testing.T, clk *clock.Mock, ch <-chan T, what string) T {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case v := <-ch:
			return v
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		default:
			clk.Add(0)
		}
	}
}

// awaitClosed waits until c's calls report ErrClosed: Close has begun.
func awaitClosed(t *testing.T, c *ttlstore.Collection) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := c.Read("any"); errors.Is(err, ttlstore.ErrClosed) {
			return
		}
		require.True(t, time.Now().Before(deadline), "timed out waiting for Close to begin")
		runtime.Gosched()
	}
}

// Close while the background sweeper is in the middle of a batch, blocked
// in OnExpire: Close waits for the callback to return and for the sweeper
// to stop, and the sweeper stops at the end of its batch, leaving the rest
// for later.
func TestCloseWhileSweeperMidBatch(t *testing.T) {
	const n = 100
	entered := make(chan struct{})
	release := make(chan struct{})
	var calls atomic.Int64
	var closeReturned, manual atomic.Bool
	c, clk := expiredCollection(t, n, ttlstore.Options{
		SweepBatch: 1,
		OnExpire: func(ttlstore.Document) {
			if calls.Add(1) == 1 {
				close(entered)
				<-release
			}
			if !manual.Load() {
				assert.False(t, closeReturned.Load(), "Close returned while the sweeper's OnExpire was running")
			}
		},
	})
	clk.Add(10 * time.Second)
	awaitMoving(t, clk, entered, "the sweeper's first OnExpire")

	closed := make(chan struct{})
	go func() {
		assert.NoError(t, c.Close())
		closeReturned.Store(true)
		close(closed)
	}()
	awaitClosed(t, c)
	close(release)
	awaitSignal(t, closed, "Close")

	swept := calls.Load()
	assert.GreaterOrEqual(t, swept, int64(1))
	// Whether it stopped before the last batch depends on scheduling: Close
	// sets the closed flag (which awaitClosed sees) just before it signals
	// the sweeper. TestSweepStopsBetweenBatches checks the stop itself.
	assert.Equal(t, ttlstore.Stats{Expired: n - int(swept), Swept: uint64(swept)}, ttlstore.CoreStats(c.Stats()))
	clk.Add(time.Hour)
	assert.Equal(t, swept, calls.Load(), "OnExpire called after Close returned")

	// What is left is swept on the caller's goroutine, also after Close.
	manual.Store(true)
	assert.Equal(t, n-int(swept), c.Sweep())
	assert.Equal(t, int64(n), calls.Load())
	assert.Equal(t, ttlstore.Stats{Swept: n}, ttlstore.CoreStats(c.Stats()))
}

// Close while OnExpire callbacks run on goroutines other than the
// background sweeper's (a manual Sweep, a SetDefaultTTL purge, a write over
// an expired document): Close does not wait for them, and they go on to the
// end, seeing ErrClosed from the calls that refuse after Close.
func TestCloseWhileCallbacksRun(t *testing.T) {
	const n = 5
	// Each removes documents and returns how many.
	removers := map[string]func(*ttlstore.Collection) int{
		"Sweep": (*ttlstore.Collection).Sweep,
		"SetDefaultTTL": func(c *ttlstore.Collection) int {
			assert.NoError(t, c.SetDefaultTTL(nil))
			return n
		},
		"Upsert": func(c *ttlstore.Collection) int {
			_, err := c.Upsert([]byte(`{"id":"d0"}`))
			assert.NoError(t, err)
			return 1
		},
	}
	for _, name := range sortedKeys(removers) {
		t.Run(name, func(t *testing.T) {
			entered := make(chan struct{})
			release := make(chan struct{})
			var calls atomic.Int64
			var c *ttlstore.Collection
			c, clk := expiredCollection(t, n, ttlstore.Options{
				SweepInterval: ttlstore.ManualSweep,
				OnExpire: func(d ttlstore.Document) {
					if calls.Add(1) == 1 {
						close(entered)
						<-release
					}
					_, err := c.Read(d.ID())
					assert.ErrorIs(t, err, ttlstore.ErrClosed)
					assert.Equal(t, n, c.Stats().Expired+int(c.Stats().Swept), "Stats works after Close")
				},
			})
			clk.Add(10 * time.Second)
			done := make(chan int)
			go func() { done <- removers[name](c) }()
			awaitSignal(t, entered, "OnExpire")

			closed := make(chan struct{})
			go func() { assert.NoError(t, c.Close()); close(closed) }()
			awaitSignal(t, closed, "Close, with a callback still running")
			close(release)
			want := awaitSignal(t, done, name)
			assert.Equal(t, int64(want), calls.Load(), "the removal stopped at Close")
		})
	}
}

// OnExpire may call Close when it runs on the caller's goroutine: Close
// returns, and the Sweep that called back goes on to the end.
func TestCloseFromCallbackOfManualSweep(t *testing.T) {
	var c *ttlstore.Collection
	var calls atomic.Int64
	c, clk := expiredCollection(t, 3, ttlstore.Options{
		SweepInterval: ttlstore.ManualSweep,
		OnExpire: func(ttlstore.Document) {
			calls.Add(1)
			assert.NoError(t, c.Close())
		},
	})
	clk.Add(10 * time.Second)
	swept := make(chan int)
	go func() { swept <- c.Sweep() }()
	assert.Equal(t, 3, awaitSignal(t, swept, "Sweep, whose callback closes the collection"))
	assert.Equal(t, int64(3), calls.Load())
	assert.Equal(t, ttlstore.Stats{Swept: 3}, ttlstore.CoreStats(c.Stats()))
}

// Close called at once from many goroutines, while the background sweeper
// works through expired documents: every call returns nil after the
// sweeper has stopped, and every later call sees ErrClosed.
func TestCloseConcurrently(t *testing.T) {
	const closers = 8
	var calls atomic.Int64
	c, clk := expiredCollection(t, 500, ttlstore.Options{
		SweepBatch: 1,
		OnExpire:   func(ttlstore.Document) { calls.Add(1) },
	})
	clk.Add(10 * time.Second)

	begin := make(chan struct{})
	var wg sync.WaitGroup
	for range closers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-begin
			assert.NoError(t, c.Close())
			frozen := calls.Load()
			_, err := c.Upsert([]byte(`{"id":"late"}`))
			assert.ErrorIs(t, err, ttlstore.ErrClosed)
			assert.Equal(t, frozen, calls.Load(), "the sweeper ran after Close returned")
		}()
	}
	close(begin)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	awaitSignal(t, done, "the Close calls")
	st := c.Stats()
	assert.Equal(t, uint64(calls.Load()), st.Swept)
	assert.Equal(t, 500, st.Expired+int(st.Swept))
	assert.NoError(t, c.Close(), "Close is idempotent")
}

// Creating and closing 100 collections with background sweepers, on mock
// and wall clocks, idle or with timers set, leaves no goroutine behind.
func TestNoGoroutineLeftAfterClose(t *testing.T) {
	cs := make([]*ttlstore.Collection, 0, 100)
	for i := range 100 {
		opts := ttlstore.Options{DefaultTTL: ttlstore.TTL(3600), SweepInterval: time.Duration(i%3+1) * time.Second}
		var clk *clock.Mock
		if i%2 == 0 {
			clk = newMock()
			opts.Clock = clk
		}
		c, err := ttlstore.New(opts)
		require.NoError(t, err)
		cs = append(cs, c)
		if i%4 < 2 { // half of each kind hold a document, so a timer is set
			_, err := c.Upsert(fmt.Appendf(nil, `{"id":"d%d","ttl":%d}`, i, i%5+1))
			require.NoError(t, err)
		}
		if clk != nil && i%8 == 0 { // and some have swept already
			clk.Add(10 * time.Second)
		}
	}
	var wg sync.WaitGroup
	for i, c := range cs {
		if i%10 == 0 { // some closed concurrently with the others
			wg.Add(1)
			go func() { defer wg.Done(); assert.NoError(t, c.Close()) }()
			continue
		}
		require.NoError(t, c.Close())
	}
	wg.Wait()
	goleak.VerifyNone(t)
}
