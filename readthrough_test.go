package ttlstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
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

// user is what the loads of these tests return.
type user struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	TTL  int32  `json:"ttl,omitempty"`
}

// nameOf returns the name of the user d holds.
func nameOf(t testing.TB, d ttlstore.Document) string {
	t.Helper()
	var u user
	require.NoError(t, d.Decode(&u), d.String())
	return u.Name
}

// loaded is a load that returns a user named "loaded".
func loaded(_ context.Context, id string) (any, error) { return user{ID: id, Name: "loaded"}, nil }

// result is what one ReadOrLoad call returned.
type result struct {
	d   ttlstore.Document
	err error
}

// goReadOrLoad calls ReadOrLoad on a goroutine of its own; the channel
// delivers what it returns.
func goReadOrLoad(c *ttlstore.Collection, ctx context.Context, id string, load func(context.Context, string) (any, error)) <-chan result {
	ch := make(chan result, 1)
	go func() {
		d, err := c.ReadOrLoad(ctx, id, load)
		ch <- result{d, err}
	}()
	return ch
}

// awaitWaiters waits until n callers wait for the load of id in progress.
// The deadline only guards against a hang.
func awaitWaiters(t testing.TB, c *ttlstore.Collection, id string, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for c.LoadWaiters(id) != n {
		require.True(t, time.Now().Before(deadline), "timed out waiting for %d callers of the load of %q; %d wait", n, id, c.LoadWaiters(id))
		runtime.Gosched()
	}
}

// gate is a load function that reports each call with its context, and
// holds it until the test closes release.
type gate struct {
	calls   atomic.Int32
	started chan context.Context
	release chan struct{}
	result  func(ctx context.Context, id string) (any, error)
}

// newGate returns a gate whose calls return what result returns (a user
// named "loaded" when result is nil).
func newGate(result func(ctx context.Context, id string) (any, error)) *gate {
	if result == nil {
		result = loaded
	}
	return &gate{started: make(chan context.Context, 128), release: make(chan struct{}), result: result}
}

func (g *gate) load(ctx context.Context, id string) (any, error) {
	g.calls.Add(1)
	g.started <- ctx
	<-g.release
	return g.result(ctx, id)
}

// A miss loads, stores and returns what load returned; a hit returns the
// live document without calling load. Expired documents are misses whether
// or not they were swept.
func TestReadOrLoadMissAndHit(t *testing.T) {
	tests := []struct {
		name      string
		setup     func(t *testing.T, c *ttlstore.Collection, clk *clock.Mock)
		wantLoads int32
		wantName  string
	}{
		{"never stored", func(*testing.T, *ttlstore.Collection, *clock.Mock) {}, 1, "loaded"},
		{"live", func(t *testing.T, c *ttlstore.Collection, _ *clock.Mock) {
			upsert(t, c, `{"id":"a","name":"stored"}`)
		}, 0, "stored"},
		{"live, one second before it expires", func(t *testing.T, c *ttlstore.Collection, clk *clock.Mock) {
			upsert(t, c, `{"id":"a","name":"stored"}`)
			clk.Add(9 * time.Second)
		}, 0, "stored"},
		{"deleted", func(t *testing.T, c *ttlstore.Collection, _ *clock.Mock) {
			upsert(t, c, `{"id":"a","name":"stored"}`)
			require.NoError(t, c.Delete("a"))
		}, 1, "loaded"},
		{"expired, not swept", func(t *testing.T, c *ttlstore.Collection, clk *clock.Mock) {
			upsert(t, c, `{"id":"a","name":"stored"}`)
			clk.Add(10 * time.Second)
		}, 1, "loaded"},
		{"expired and swept", func(t *testing.T, c *ttlstore.Collection, clk *clock.Mock) {
			upsert(t, c, `{"id":"a","name":"stored"}`)
			clk.Add(10 * time.Second)
			require.Equal(t, 1, c.Sweep())
		}, 1, "loaded"},
		{"own ttl expired", func(t *testing.T, c *ttlstore.Collection, clk *clock.Mock) {
			upsert(t, c, `{"id":"a","name":"stored","ttl":2}`)
			clk.Add(2 * time.Second)
		}, 1, "loaded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, clk := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(10)})
			tt.setup(t, c, clk)
			var loads atomic.Int32
			load := func(ctx context.Context, id string) (any, error) {
				loads.Add(1)
				return loaded(ctx, id)
			}
			d, err := c.ReadOrLoad(context.Background(), "a", load)
			require.NoError(t, err)
			assert.Equal(t, "a", d.ID())
			assert.Equal(t, tt.wantName, nameOf(t, d))
			assert.Equal(t, tt.wantLoads, loads.Load())

			// What it returned is what is stored, and the next call hits.
			r, err := c.Read("a")
			require.NoError(t, err)
			assert.Equal(t, d.ETag(), r.ETag())
			again, err := c.ReadOrLoad(context.Background(), "a", load)
			require.NoError(t, err)
			assert.Equal(t, d.ETag(), again.ETag())
			assert.Equal(t, tt.wantLoads, loads.Load(), "a hit called load")
			require.NoError(t, c.CheckInvariants())
		})
	}
}

// The loaded document is an ordinary write: stamped with the clock, and
// expiring by the collection's rules, its own ttl included.
func TestReadOrLoadStoredDocumentExpires(t *testing.T) {
	tests := []struct {
		name string
		ttl  int32 // the loaded document's own ttl; 0 for none
		want time.Duration
	}{
		{"DefaultTTL", 0, 10 * time.Second},
		{"own ttl", 3, 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, clk := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(10)})
			load := func(_ context.Context, id string) (any, error) { return user{ID: id, Name: "loaded", TTL: tt.ttl}, nil }
			d, err := c.ReadOrLoad(context.Background(), "a", load)
			require.NoError(t, err)
			assert.Equal(t, clk.Now(), d.TS())
			exp, ok := d.ExpiresAt()
			require.True(t, ok)
			assert.Equal(t, clk.Now().Add(tt.want), exp)
			clk.Add(tt.want - time.Second)
			assert.True(t, live(t, c, "a"))
			clk.Add(time.Second)
			assert.False(t, live(t, c, "a"))
		})
	}
}

// A hit allocates nothing beyond what Read allocates: nothing.
func TestReadOrLoadHitAllocatesNothing(t *testing.T) {
	c, _ := newCollection(t, ttlstore.Options{})
	upsert(t, c, `{"id":"a"}`)
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := c.ReadOrLoad(ctx, "a", loaded); err != nil {
			panic(err)
		}
	})
	assert.Zero(t, allocs)
}

// 100 callers that miss one id at once share one load and get the same
// document.
func TestReadOrLoadConcurrentMissesLoadOnce(t *testing.T) {
	const n = 100
	c, _ := newCollection(t, ttlstore.Options{})
	g := newGate(nil)
	results := make([]<-chan result, n)
	for i := range results {
		results[i] = goReadOrLoad(c, context.Background(), "a", g.load)
	}
	awaitWaiters(t, c, "a", n)
	close(g.release)
	stored := ""
	for _, ch := range results {
		r := awaitSignal(t, ch, "a caller")
		require.NoError(t, r.err)
		if stored == "" {
			stored = r.d.ETag()
		}
		assert.Equal(t, stored, r.d.ETag())
	}
	assert.Equal(t, int32(1), g.calls.Load())
	d, err := c.Read("a")
	require.NoError(t, err)
	assert.Equal(t, stored, d.ETag())
	assert.Zero(t, c.LoadWaiters("a"))
}

// Callers that miss while a load stores its result, or just after, do not
// load again: the load reads the id once more before it calls load. Without
// a gate the callers overlap the load only partly, round after round.
func TestReadOrLoadLateMissesDoNotLoadAgain(t *testing.T) {
	const rounds, n = 200, 16
	c, _ := newCollection(t, ttlstore.Options{})
	for round := range rounds {
		id := fmt.Sprintf("r%d", round)
		var loads atomic.Int32
		load := func(ctx context.Context, id string) (any, error) {
			loads.Add(1)
			runtime.Gosched()
			return loaded(ctx, id)
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		etags := make([]string, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				d, err := c.ReadOrLoad(context.Background(), id, load)
				assert.NoError(t, err)
				etags[i] = d.ETag()
			}()
		}
		close(start)
		wg.Wait()
		require.Equal(t, int32(1), loads.Load(), "round %d", round)
		for _, e := range etags {
			require.Equal(t, etags[0], e, "round %d", round)
		}
	}
}

// A write of the id made while the load runs wins: the loaded document is
// stored only if the id is absent (or expired) when load returns, and the
// callers get what is stored.
func TestReadOrLoadWriteDuringLoadWins(t *testing.T) {
	tests := []struct {
		name     string
		write    func(t *testing.T, c *ttlstore.Collection, clk *clock.Mock)
		wantName string
	}{
		{"upsert", func(t *testing.T, c *ttlstore.Collection, _ *clock.Mock) {
			upsert(t, c, `{"id":"a","name":"written"}`)
		}, "written"},
		{"create", func(t *testing.T, c *ttlstore.Collection, _ *clock.Mock) {
			_, err := c.Create([]byte(`{"id":"a","name":"written"}`))
			require.NoError(t, err)
		}, "written"},
		{"upsert, then delete", func(t *testing.T, c *ttlstore.Collection, _ *clock.Mock) {
			upsert(t, c, `{"id":"a","name":"written"}`)
			require.NoError(t, c.Delete("a"))
		}, "loaded"},
		{"upsert that expires before the load returns", func(t *testing.T, c *ttlstore.Collection, clk *clock.Mock) {
			upsert(t, c, `{"id":"a","name":"written","ttl":1}`)
			clk.Add(time.Second)
		}, "loaded"},
		{"upsert that is live for one more second", func(t *testing.T, c *ttlstore.Collection, clk *clock.Mock) {
			upsert(t, c, `{"id":"a","name":"written","ttl":2}`)
			clk.Add(time.Second)
		}, "written"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const n = 3
			c, clk := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(ttlstore.Never)})
			g := newGate(nil)
			results := make([]<-chan result, n)
			for i := range results {
				results[i] = goReadOrLoad(c, context.Background(), "a", g.load)
			}
			awaitWaiters(t, c, "a", n)
			awaitSignal(t, g.started, "the load")
			tt.write(t, c, clk)
			close(g.release)

			got := make([]ttlstore.Document, n)
			for i, ch := range results {
				r := awaitSignal(t, ch, "a caller")
				require.NoError(t, r.err)
				got[i] = r.d
			}
			stored, err := c.Read("a")
			require.NoError(t, err)
			assert.Equal(t, tt.wantName, nameOf(t, stored))
			for _, d := range got {
				assert.Equal(t, stored.ETag(), d.ETag(), "a caller got what is not stored")
			}
			assert.Equal(t, int32(1), g.calls.Load())
			assert.Equal(t, 1, c.Len())
		})
	}
}

// An error from load reaches every waiting caller, matchable, and is not
// remembered: the next miss loads again.
func TestReadOrLoadErrorReachesAllAndIsNotCached(t *testing.T) {
	const n = 5
	errDB := errors.New("database unavailable")
	c, _ := newCollection(t, ttlstore.Options{})
	g := newGate(func(context.Context, string) (any, error) { return nil, fmt.Errorf("query: %w", errDB) })
	results := make([]<-chan result, n)
	for i := range results {
		results[i] = goReadOrLoad(c, context.Background(), "a", g.load)
	}
	awaitWaiters(t, c, "a", n)
	close(g.release)
	for _, ch := range results {
		r := awaitSignal(t, ch, "a caller")
		require.ErrorIs(t, r.err, errDB)
		assert.NotErrorIs(t, r.err, ttlstore.ErrNotFound)
		assert.EqualError(t, r.err, `ttlstore: load "a": query: database unavailable`)
	}
	assert.Equal(t, int32(1), g.calls.Load())
	assert.False(t, live(t, c, "a"))

	d, err := c.ReadOrLoad(context.Background(), "a", loaded)
	require.NoError(t, err, "the error was remembered")
	assert.Equal(t, "loaded", nameOf(t, d))
}

// A panic in load, or runtime.Goexit, reaches every waiting caller as an
// error matching ErrLoadPanicked; the process goes on, nobody is left
// waiting, and the next miss loads again.
func TestReadOrLoadPanicReachesAllAsError(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name    string
		do      func()
		wantMsg string
		wantErr error // also matched, besides ErrLoadPanicked
	}{
		{"string", func() { panic("boom") }, `ttlstore: load "a": panic: boom: load panicked`, nil},
		{"error", func() { panic(fmt.Errorf("wrapped: %w", errBoom)) }, `ttlstore: load "a": panic: wrapped: boom: load panicked`, errBoom},
		// The panic value is a *runtime.PanicNilError, whose message
		// depends on the Go version.
		{"nil", func() { panic(nil) }, "", nil},
		{"runtime.Goexit", runtime.Goexit, `ttlstore: load "a": called runtime.Goexit: load panicked`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const n = 3
			c, _ := newCollection(t, ttlstore.Options{})
			g := newGate(func(context.Context, string) (any, error) {
				tt.do()
				return nil, nil
			})
			results := make([]<-chan result, n)
			for i := range results {
				results[i] = goReadOrLoad(c, context.Background(), "a", g.load)
			}
			awaitWaiters(t, c, "a", n)
			close(g.release)
			for _, ch := range results {
				r := awaitSignal(t, ch, "a caller")
				require.ErrorIs(t, r.err, ttlstore.ErrLoadPanicked)
				if tt.wantErr != nil {
					assert.ErrorIs(t, r.err, tt.wantErr)
				}
				if tt.wantMsg != "" {
					assert.EqualError(t, r.err, tt.wantMsg)
				} else {
					var pn *runtime.PanicNilError
					assert.ErrorAs(t, r.err, &pn)
				}
			}
			assert.Zero(t, c.LoadWaiters("a"))
			assert.False(t, live(t, c, "a"))
			d, err := c.ReadOrLoad(context.Background(), "a", loaded)
			require.NoError(t, err)
			assert.Equal(t, "loaded", nameOf(t, d))
		})
	}
}

// A caller whose context ends stops waiting at once with ctx.Err(); the
// load goes on, with its context intact, for the callers still waiting,
// whether the caller that left is the one that started the load or not.
func TestReadOrLoadCallerContextEnds(t *testing.T) {
	tests := []struct {
		name    string
		leaving int // which of the two callers (in order of arrival) leaves
		end     func(cancel context.CancelCauseFunc)
		wantErr error
	}{
		{"the caller that started the load is cancelled", 0, func(cancel context.CancelCauseFunc) { cancel(nil) }, context.Canceled},
		{"a caller that joined the load is cancelled", 1, func(cancel context.CancelCauseFunc) { cancel(nil) }, context.Canceled},
		{"cancelled with a cause", 0, func(cancel context.CancelCauseFunc) { cancel(errors.New("client went away")) }, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newCollection(t, ttlstore.Options{})
			g := newGate(nil)
			ctxs := [2]context.Context{context.Background(), context.Background()}
			leavingCtx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			ctxs[tt.leaving] = leavingCtx
			var results [2]<-chan result
			for i := range results {
				results[i] = goReadOrLoad(c, ctxs[i], "a", g.load)
				awaitWaiters(t, c, "a", i+1)
			}
			loadCtx := awaitSignal(t, g.started, "the load")

			tt.end(cancel)
			r := awaitSignal(t, results[tt.leaving], "the caller whose context ended")
			assert.Equal(t, tt.wantErr, r.err) // ctx.Err() itself
			assert.Equal(t, 1, c.LoadWaiters("a"))
			assert.NoError(t, loadCtx.Err(), "the load's context ended with one caller still waiting")

			close(g.release)
			r = awaitSignal(t, results[1-tt.leaving], "the caller still waiting")
			require.NoError(t, r.err)
			assert.Equal(t, "loaded", nameOf(t, r.d))
			assert.True(t, live(t, c, "a"))
			assert.Equal(t, int32(1), g.calls.Load())
		})
	}
}

// A context already done: a live document is still returned; a miss starts
// and joins no load.
func TestReadOrLoadContextAlreadyDone(t *testing.T) {
	c, _ := newCollection(t, ttlstore.Options{})
	upsert(t, c, `{"id":"live","name":"stored"}`)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancelDeadline := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancelDeadline()

	tests := []struct {
		name    string
		ctx     context.Context
		id      string
		wantErr error
	}{
		{"cancelled, live", ctx, "live", nil},
		{"cancelled, missing", ctx, "missing", context.Canceled},
		{"past deadline, missing", expired, "missing", context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var loads atomic.Int32
			load := func(ctx context.Context, id string) (any, error) {
				loads.Add(1)
				return loaded(ctx, id)
			}
			d, err := c.ReadOrLoad(tt.ctx, tt.id, load)
			assert.Equal(t, tt.wantErr, err)
			if err == nil {
				assert.Equal(t, "stored", nameOf(t, d))
			}
			assert.Zero(t, loads.Load())
		})
	}
	assert.False(t, live(t, c, "missing"))
}

// The load's context carries the values of the context of the caller that
// started it, but not its deadline; it is cancelled once every caller has
// stopped waiting, and the load is then abandoned: the next miss starts
// another, and what the abandoned load returns is still stored.
func TestReadOrLoadLoadContext(t *testing.T) {
	type key struct{}
	c, _ := newCollection(t, ttlstore.Options{})
	first := newGate(func(context.Context, string) (any, error) { return user{ID: "a", Name: "abandoned"}, nil })

	base := context.WithValue(context.Background(), key{}, "request 1")
	base, cancelDeadline := context.WithDeadline(base, time.Now().Add(time.Hour))
	defer cancelDeadline()
	ctx1, cancel1 := context.WithCancel(base)
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel1()
	defer cancel2()
	r1 := goReadOrLoad(c, ctx1, "a", first.load)
	awaitWaiters(t, c, "a", 1)
	r2 := goReadOrLoad(c, ctx2, "a", first.load)
	awaitWaiters(t, c, "a", 2)
	loadCtx := awaitSignal(t, first.started, "the first load")
	assert.Equal(t, "request 1", loadCtx.Value(key{}))
	_, hasDeadline := loadCtx.Deadline()
	assert.False(t, hasDeadline, "the load inherited the caller's deadline")

	cancel1()
	assert.Equal(t, context.Canceled, awaitSignal(t, r1, "the first caller").err)
	assert.NoError(t, loadCtx.Err())
	cancel2()
	assert.Equal(t, context.Canceled, awaitSignal(t, r2, "the second caller").err)
	awaitSignal(t, loadCtx.Done(), "the load's context to be cancelled")
	assert.Equal(t, context.Canceled, loadCtx.Err())
	assert.Zero(t, c.LoadWaiters("a"))

	// The first load is abandoned but still running: a new miss starts a
	// second one.
	second := newGate(nil)
	r3 := goReadOrLoad(c, context.Background(), "a", second.load)
	loadCtx2 := awaitSignal(t, second.started, "the second load")
	assert.NoError(t, loadCtx2.Err())
	assert.Nil(t, loadCtx2.Value(key{}))

	// The abandoned load returns: its document is stored, given to no one.
	close(first.release)
	deadline := time.Now().Add(30 * time.Second)
	for !live(t, c, "a") {
		require.True(t, time.Now().Before(deadline), "the abandoned load's document was not stored")
		runtime.Gosched()
	}
	// The second load finds it stored when it returns: it wins.
	close(second.release)
	r := awaitSignal(t, r3, "the third caller")
	require.NoError(t, r.err)
	assert.Equal(t, "abandoned", nameOf(t, r.d))
	assert.Equal(t, int32(1), first.calls.Load())
	assert.Equal(t, int32(1), second.calls.Load())
}

// Loads of different ids run at the same time, even when the ids share a
// part of the table of loads.
func TestReadOrLoadDifferentIDsInParallel(t *testing.T) {
	c, _ := newCollection(t, ttlstore.Options{})
	samePart := []string{"p0"}
	otherPart := ""
	for i := 1; len(samePart) < 2 || otherPart == ""; i++ {
		id := fmt.Sprintf("p%d", i)
		if c.LoadPart(id) == c.LoadPart("p0") {
			samePart = append(samePart, id)
		} else {
			otherPart = id
		}
	}
	tests := []struct {
		name string
		ids  []string
	}{
		{"same part", samePart[:2]},
		{"different parts", []string{"p0", otherPart}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGate(nil)
			r0 := goReadOrLoad(c, context.Background(), tt.ids[0], g.load)
			r1 := goReadOrLoad(c, context.Background(), tt.ids[1], g.load)
			// Both loads are in progress at once: if one waited for the
			// other, the second signal would never come.
			awaitSignal(t, g.started, "a load")
			awaitSignal(t, g.started, "the other load")
			close(g.release)
			for i, r := range []result{awaitSignal(t, r0, "a caller"), awaitSignal(t, r1, "a caller")} {
				require.NoError(t, r.err)
				assert.Equal(t, tt.ids[i], r.d.ID())
			}
			require.NoError(t, c.Delete(tt.ids[0]))
			require.NoError(t, c.Delete(tt.ids[1]))
		})
	}
}

// load may call the collection, ReadOrLoad of other ids and writes of its
// own id included: no lock is held while it runs.
func TestReadOrLoadLoadCallsTheCollection(t *testing.T) {
	c, _ := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(60)})
	load := func(ctx context.Context, id string) (any, error) {
		if _, err := c.Upsert(user{ID: "b", Name: "from a's load"}); err != nil {
			return nil, err
		}
		if _, err := c.Read("b"); err != nil {
			return nil, err
		}
		nested, err := c.ReadOrLoad(ctx, "c", func(_ context.Context, id string) (any, error) {
			return user{ID: id, Name: "nested"}, nil
		})
		if err != nil {
			return nil, err
		}
		if err := c.SetDefaultTTL(ttlstore.TTL(60)); err != nil {
			return nil, err
		}
		n := 0
		for range c.All() {
			n++
		}
		return user{ID: id, Name: fmt.Sprintf("%s, %d documents", nameOf(t, nested), n)}, nil
	}
	d, err := c.ReadOrLoad(context.Background(), "a", load)
	require.NoError(t, err)
	assert.Equal(t, "nested, 2 documents", nameOf(t, d))
	assert.Equal(t, []string{"a", "b", "c"}, ids(c))

	// The load upserts its own id: that write wins over what it returns.
	d, err = c.ReadOrLoad(context.Background(), "self", func(_ context.Context, id string) (any, error) {
		if _, err := c.Upsert(user{ID: id, Name: "written by the load"}); err != nil {
			return nil, err
		}
		return user{ID: id, Name: "returned by the load"}, nil
	})
	require.NoError(t, err)
	assert.Equal(t, "written by the load", nameOf(t, d))
}

// A load that asks, with its own context, for the id it is loading (or one
// that a load up its chain is loading) gets ErrLoadCycle instead of waiting
// for itself; the same id of another collection, or an id the load has
// already stored, is no cycle.
func TestReadOrLoadCycle(t *testing.T) {
	tests := []struct {
		name    string
		load    func(c, other *ttlstore.Collection) func(context.Context, string) (any, error)
		wantErr error
	}{
		{"its own id", func(c, _ *ttlstore.Collection) func(context.Context, string) (any, error) {
			return func(ctx context.Context, id string) (any, error) {
				return c.ReadOrLoad(ctx, id, loaded)
			}
		}, ttlstore.ErrLoadCycle},
		{"its own id, through another id", func(c, _ *ttlstore.Collection) func(context.Context, string) (any, error) {
			return func(ctx context.Context, id string) (any, error) {
				return c.ReadOrLoad(ctx, "b", func(ctx context.Context, _ string) (any, error) {
					if _, err := c.ReadOrLoad(ctx, id, loaded); err != nil {
						return nil, err
					}
					return user{ID: "b"}, nil
				})
			}
		}, ttlstore.ErrLoadCycle},
		{"the same id of another collection", func(_, other *ttlstore.Collection) func(context.Context, string) (any, error) {
			return func(ctx context.Context, id string) (any, error) {
				return other.ReadOrLoad(ctx, id, loaded)
			}
		}, nil},
		{"its own id, once stored", func(c, _ *ttlstore.Collection) func(context.Context, string) (any, error) {
			return func(ctx context.Context, id string) (any, error) {
				if _, err := c.Upsert(user{ID: id, Name: "loaded"}); err != nil {
					return nil, err
				}
				return c.ReadOrLoad(ctx, id, loaded)
			}
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newCollection(t, ttlstore.Options{})
			other, _ := newCollection(t, ttlstore.Options{})
			r := awaitSignal(t, goReadOrLoad(c, context.Background(), "a", tt.load(c, other)), "the caller")
			d, err := r.d, r.err
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Contains(t, err.Error(), `ttlstore: read or load "a": load waits for itself`)
				assert.False(t, live(t, c, "a"))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "loaded", nameOf(t, d))
		})
	}
}

// What load returns must be a document Create accepts, with the id asked
// for; otherwise every caller gets an error saying so, and nothing is
// stored.
func TestReadOrLoadBadDocument(t *testing.T) {
	otherColl, _ := newCollection(t, ttlstore.Options{})
	fromOther := upsert(t, otherColl, `{"id":"a","name":"copied"}`)
	tests := []struct {
		name     string
		v        any
		wantErr  error // nil: stored
		wantMsg  string
		wantName string
	}{
		{"struct with another id", user{ID: "b"}, ttlstore.ErrInvalidDocument,
			`ttlstore: load "a": the loaded document's id is "b", not "a": invalid document`, ""},
		{"JSON with another id", []byte(`{"id":"A"}`), ttlstore.ErrInvalidDocument,
			`ttlstore: load "a": the loaded document's id is "A", not "a": invalid document`, ""},
		{"JSON without an id", []byte(`{"name":"x"}`), ttlstore.ErrInvalidDocument,
			`ttlstore: load "a": missing id: invalid document`, ""},
		{"nil", nil, ttlstore.ErrInvalidDocument, `ttlstore: load "a": document is nil: invalid document`, ""},
		{"not an object", 42, ttlstore.ErrInvalidDocument, "", ""},
		{"bad ttl", []byte(`{"id":"a","ttl":0}`), ttlstore.ErrInvalidTTL, "", ""},
		{"too large", []byte(`{"id":"a","name":"` + strings.Repeat("x", 100) + `"}`), ttlstore.ErrTooLarge, "", ""},
		{"the same id, escaped", []byte(`{"id":"\u0061","name":"escaped"}`), nil, "", "escaped"},
		{"a Document of another collection", fromOther, nil, "", "copied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newCollection(t, ttlstore.Options{MaxDocumentSize: 64})
			const n = 3
			g := newGate(func(context.Context, string) (any, error) { return tt.v, nil })
			results := make([]<-chan result, n)
			for i := range results {
				results[i] = goReadOrLoad(c, context.Background(), "a", g.load)
			}
			awaitWaiters(t, c, "a", n)
			close(g.release)
			for _, ch := range results {
				r := awaitSignal(t, ch, "a caller")
				if tt.wantErr == nil {
					require.NoError(t, r.err)
					assert.Equal(t, tt.wantName, nameOf(t, r.d))
					continue
				}
				require.ErrorIs(t, r.err, tt.wantErr)
				assert.Contains(t, r.err.Error(), `"a"`)
				if tt.wantMsg != "" {
					assert.EqualError(t, r.err, tt.wantMsg)
				}
			}
			assert.Equal(t, tt.wantErr == nil, live(t, c, "a"))
			assert.Equal(t, map[bool]int{true: 0, false: 1}[tt.wantErr != nil], c.Len(), "stored: %v", ids(c))
		})
	}
}

// Close while a load runs: the waiting callers get ErrClosed at once, the
// load's context is cancelled, and what the load returns is not stored.
// After Close, ReadOrLoad returns ErrClosed without calling load.
func TestReadOrLoadClose(t *testing.T) {
	tests := []struct {
		name        string
		heedContext bool // the load returns when its context is cancelled
	}{
		{"load returns when its context is cancelled", true},
		{"load ignores its context", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const n = 3
			c, _ := newCollection(t, ttlstore.Options{})
			upsert(t, c, `{"id":"live"}`)
			g := newGate(nil)
			returned := make(chan struct{})
			load := func(ctx context.Context, id string) (any, error) {
				defer close(returned)
				g.calls.Add(1)
				g.started <- ctx
				if tt.heedContext {
					<-ctx.Done()
					return nil, ctx.Err()
				}
				<-g.release
				return loaded(ctx, id)
			}
			results := make([]<-chan result, n)
			for i := range results {
				results[i] = goReadOrLoad(c, context.Background(), "a", load)
			}
			awaitWaiters(t, c, "a", n)
			loadCtx := awaitSignal(t, g.started, "the load")

			require.NoError(t, c.Close())
			for _, ch := range results {
				r := awaitSignal(t, ch, "a caller")
				require.ErrorIs(t, r.err, ttlstore.ErrClosed)
				assert.EqualError(t, r.err, `ttlstore: read or load "a": collection closed`)
			}
			awaitSignal(t, loadCtx.Done(), "the load's context to be cancelled")
			if !tt.heedContext {
				close(g.release)
			}
			awaitSignal(t, returned, "the load to return")
			assert.Equal(t, ttlstore.Stats{Live: 1}, ttlstore.CoreStats(c.Stats()), "a load stored after Close")

			for _, id := range []string{"live", "a", "b"} {
				_, err := c.ReadOrLoad(context.Background(), id, g.load)
				require.ErrorIs(t, err, ttlstore.ErrClosed)
			}
			assert.Equal(t, int32(1), g.calls.Load())
		})
	}
}

// Loaders are kept for the next loads, at most four idle whatever the
// number of loads that ran at once; the loads they run next behave as the
// first (a panic, runtime.Goexit, which ends its loader, then a load), and
// Close ends the idle ones: no goroutine is left.
func TestReadOrLoadLoaders(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const n = 10
	c, _ := newCollection(t, ttlstore.Options{})
	base := runtime.NumGoroutine()
	g := newGate(nil)
	results := make([]<-chan result, n)
	for i := range results {
		results[i] = goReadOrLoad(c, context.Background(), fmt.Sprintf("k%d", i), g.load)
	}
	for range n {
		awaitSignal(t, g.started, "a load")
	}
	assert.Zero(t, c.IdleLoaders(), "a loader is idle while every one runs a load")
	close(g.release)
	for _, ch := range results {
		require.NoError(t, awaitSignal(t, ch, "a caller").err)
	}
	awaitIdleLoaders(t, c, base, 4)

	for _, tt := range []struct {
		name    string
		load    func(context.Context, string) (any, error)
		wantErr error
	}{
		{"panic", func(context.Context, string) (any, error) { panic("boom") }, ttlstore.ErrLoadPanicked},
		{"runtime.Goexit", func(context.Context, string) (any, error) { runtime.Goexit(); return nil, nil }, ttlstore.ErrLoadPanicked},
		{"load", loaded, nil},
	} {
		_, err := c.ReadOrLoad(context.Background(), "again", tt.load)
		require.ErrorIs(t, err, tt.wantErr, tt.name)
	}
	d, err := c.Read("again")
	require.NoError(t, err)
	assert.Equal(t, "loaded", nameOf(t, d))
	awaitIdleLoaders(t, c, base, 3) // the loader that called Goexit ended

	require.NoError(t, c.Close())
	assert.Zero(t, c.IdleLoaders())
}

// awaitIdleLoaders waits until n loaders of c wait for a load and the
// process has n goroutines more than base: the other loaders have ended.
// The deadline only guards against a hang.
func awaitIdleLoaders(t *testing.T, c *ttlstore.Collection, base, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for c.IdleLoaders() != n || runtime.NumGoroutine() != base+n {
		require.True(t, time.Now().Before(deadline), "timed out waiting for %d idle loaders and %d goroutines; %d and %d",
			n, base+n, c.IdleLoaders(), runtime.NumGoroutine())
		runtime.Gosched()
	}
}

// A durable collection stores the loaded document as any write: it is
// there after a reopen.
func TestReadOrLoadDurable(t *testing.T) {
	dir := t.TempDir()
	clk := newMock()
	c, err := ttlstore.Open(dir, ttlstore.Options{Clock: clk, SweepInterval: ttlstore.ManualSweep, DefaultTTL: ttlstore.TTL(60)})
	require.NoError(t, err)
	d, err := c.ReadOrLoad(context.Background(), "a", loaded)
	require.NoError(t, err)
	require.NoError(t, c.Close())

	c, err = ttlstore.Open(dir, ttlstore.Options{Clock: clk, SweepInterval: ttlstore.ManualSweep, DefaultTTL: ttlstore.TTL(60)})
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	var loads atomic.Int32
	again, err := c.ReadOrLoad(context.Background(), "a", func(ctx context.Context, id string) (any, error) {
		loads.Add(1)
		return loaded(ctx, id)
	})
	require.NoError(t, err)
	assert.Equal(t, d.String(), again.String())
	assert.Zero(t, loads.Load())

	clk.Add(time.Minute)
	again, err = c.ReadOrLoad(context.Background(), "a", loaded)
	require.NoError(t, err)
	assert.NotEqual(t, d.ETag(), again.ETag(), "an expired document was not loaded again")
}

func TestReadOrLoadNilLoadPanics(t *testing.T) {
	c, _ := newCollection(t, ttlstore.Options{})
	assert.PanicsWithValue(t, "ttlstore: ReadOrLoad with a nil load function", func() {
		_, _ = c.ReadOrLoad(context.Background(), "a", nil)
	})
}

// Many goroutines read through a few ids while others write and delete
// them, some loads fail or panic and some callers give up: every call
// returns a document with its id or one of the expected errors, and the
// collection's invariants hold.
func TestReadOrLoadStress(t *testing.T) {
	const goroutines, ops = 8, 300
	errDB := errors.New("database unavailable")
	c, _ := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(60)})
	load := func(ctx context.Context, id string) (any, error) {
		switch rand.IntN(10) {
		case 0:
			return nil, errDB
		case 1:
			panic("boom")
		}
		runtime.Gosched()
		return user{ID: id, Name: "loaded"}, nil
	}
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range ops {
				id := fmt.Sprintf("s%d", rand.IntN(4))
				switch rand.IntN(8) {
				case 0:
					_, err := c.Upsert(user{ID: id, Name: "written"})
					assert.NoError(t, err)
				case 1:
					err := c.Delete(id)
					if err != nil {
						assert.ErrorIs(t, err, ttlstore.ErrNotFound)
					}
				default:
					ctx, cancel := context.WithCancel(context.Background())
					if rand.IntN(4) == 0 {
						cancel()
					}
					d, err := c.ReadOrLoad(ctx, id, load)
					cancel()
					switch {
					case err == nil:
						assert.Equal(t, id, d.ID())
					case errors.Is(err, errDB), errors.Is(err, ttlstore.ErrLoadPanicked), errors.Is(err, context.Canceled):
					default:
						t.Errorf("ReadOrLoad(%q): %v", id, err)
					}
				}
			}
		}()
	}
	wg.Wait()
	require.NoError(t, c.CheckInvariants())
	for i := range 4 {
		assert.Zero(t, c.LoadWaiters(fmt.Sprintf("s%d", i)))
	}
}

func ExampleCollection_ReadOrLoad() {
	clk := exampleClock()
	c, _ := ttlstore.New(ttlstore.Options{DefaultTTL: ttlstore.TTL(60), Clock: clk})
	defer c.Close()

	type User struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	errNoUser := errors.New("no such user")
	db := map[string]string{"u1": "Ada"} // the slow source
	loads := 0
	load := func(_ context.Context, id string) (any, error) {
		loads++
		name, ok := db[id]
		if !ok {
			return nil, fmt.Errorf("user %s: %w", id, errNoUser)
		}
		return User{ID: id, Name: name}, nil
	}

	ctx := context.Background()
	c.ReadOrLoad(ctx, "u1", load)         // a miss: loaded and stored
	d, _ := c.ReadOrLoad(ctx, "u1", load) // a hit
	var u User
	d.Decode(&u)
	fmt.Println(u.Name, "loads:", loads)

	clk.Add(time.Minute) // u1 expires
	c.ReadOrLoad(ctx, "u1", load)
	fmt.Println("after expiry, loads:", loads)

	_, err := c.ReadOrLoad(ctx, "u9", load)
	fmt.Println(errors.Is(err, errNoUser), err)
	// Output:
	// Ada loads: 1
	// after expiry, loads: 2
	// true ttlstore: load "u9": user u9: no such user
}
