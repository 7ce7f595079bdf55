package ttlstore_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
)

// waitFor receives n ids from ch, which the background sweeper's OnExpire
// feeds, failing the test if they do not come. Between receives it moves
// clk forward by 1 ms: a mock clock runs a timer only inside Add or Set; a
// timer the sweeper sets just after an Add has looked at its timers would
// otherwise wait for the next move; and firing such a timer late sets the
// mock's time back to it, so a poke of Add(0) might never reach an expiry.
// A 20 s wait moves the mock by at most 20 s. The deadline only guards against a
// hang; the outcome never depends on how fast the sweeper is.
func waitFor(t *testing.T, clk *clock.Mock, ch <-chan string, n int) []string {
	t.Helper()
	var got []string
	deadline := time.After(20 * time.Second)
	for len(got) < n {
		select {
		case id := <-ch:
			got = append(got, id)
		case <-deadline:
			t.Fatalf("the sweeper reported %d of %d documents: %v", len(got), n, got)
		default:
			clk.Add(time.Millisecond)
		}
	}
	return got
}

// TestBackgroundSweeperMonthJump moves a mock clock by 30 days in one Add
// with the background sweeper running. The sweeper sets one timer for the
// next expiry it knows of, never one per interval, so the jump fires a few
// timers (the mock sleeps 1 ms for each) instead of 2.6 million; a sweeper
// that ticked every SweepInterval would make this test time out.
func TestBackgroundSweeperMonthJump(t *testing.T) {
	expired := make(chan string, 100)
	c, clk := newCollection(t, ttlstore.Options{
		DefaultTTL:    ttlstore.TTL(60),
		SweepInterval: time.Second,
		OnExpire:      func(d ttlstore.Document) { expired <- d.ID() },
	})
	upsert(t, c, `{"id":"minute"}`)
	upsert(t, c, `{"id":"hour","ttl":3600}`)
	upsert(t, c, `{"id":"day","ttl":86400}`)
	upsert(t, c, `{"id":"forever","ttl":-1}`)
	began := time.Now()
	clk.Add(30 * 24 * time.Hour)
	t.Logf("Add(30 days) took %v of real time", time.Since(began))
	got := waitFor(t, clk, expired, 3)
	slicesSort(got)
	assert.Equal(t, []string{"day", "hour", "minute"}, got)
	assert.Equal(t, []string{"forever"}, ids(c))
	assert.Equal(t, ttlstore.Stats{Live: 1, Swept: 3}, c.Stats())
}

// TestBackgroundSweeperWakesForEarlierExpiry: the sweeper sleeps on a timer
// for an expiry an hour away; a document written later that expires sooner
// must wake it, so that it is swept on time.
func TestBackgroundSweeperWakesForEarlierExpiry(t *testing.T) {
	expired := make(chan string, 10)
	c, clk := newCollection(t, ttlstore.Options{
		DefaultTTL:    ttlstore.TTL(-1),
		SweepInterval: time.Second,
		OnExpire:      func(d ttlstore.Document) { expired <- d.ID() },
	})
	upsert(t, c, `{"id":"late","ttl":3600}`)
	upsert(t, c, `{"id":"soon","ttl":5}`)
	for range 5 { // one second at a time, as a service's clock would go
		clk.Add(time.Second)
	}
	assert.Equal(t, []string{"soon"}, waitFor(t, clk, expired, 1))
	assert.True(t, live(t, c, "late"))
	select {
	case id := <-expired:
		t.Fatalf("%s was swept before it expired", id)
	default:
	}
}

// TestCloseWaitsForCallbacks: Close waits for the OnExpire call in progress;
// documents the sweeper did not reach before it stopped stay invisible, and
// a later Sweep removes them, each reported once. (That it stops between
// batches is TestSweepStopsBetweenBatches.)
func TestCloseWaitsForCallbacks(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	var calls, finished atomic.Int32
	c, clk := newCollection(t, ttlstore.Options{
		DefaultTTL:    ttlstore.TTL(10),
		SweepInterval: time.Second,
		SweepBatch:    1,
		OnExpire: func(ttlstore.Document) {
			if calls.Add(1) == 1 {
				close(entered)
				<-release
			}
			finished.Add(1)
		},
	})
	const n = 200
	for i := range n {
		upsert(t, c, fmt.Sprintf(`{"id":"d%d"}`, i))
	}
	clk.Add(10 * time.Second)
	<-entered // the sweeper is inside its first callback
	closed := make(chan struct{})
	go func() {
		assert.NoError(t, c.Close())
		close(closed)
	}()
	close(release)
	<-closed
	assert.Equal(t, calls.Load(), finished.Load(), "Close returned while a callback was running")
	st := c.Stats()
	assert.Equal(t, n, int(st.Swept)+st.Expired, "a document was lost")
	assert.Equal(t, 0, c.Len())
	assert.Equal(t, st.Expired, c.Sweep(), "Sweep works after Close")
	assert.Equal(t, uint64(n), c.Stats().Swept)
	assert.Equal(t, int32(n), finished.Load(), "every swept document was reported once")
}

func TestCloseIsIdempotentAndRejectsCalls(t *testing.T) {
	c, _ := newCollection(t, ttlstore.Options{SweepInterval: time.Second, DefaultTTL: ttlstore.TTL(5)})
	d := upsert(t, c, `{"id":"x"}`)
	require.NoError(t, c.Close())
	require.NoError(t, c.Close())
	calls := map[string]error{}
	_, calls["create"] = c.Create([]byte(`{"id":"y"}`))
	_, calls["upsert"] = c.Upsert([]byte(`{"id":"y"}`))
	_, calls["replace"] = c.Replace([]byte(`{"id":"x"}`))
	_, calls["replaceIfMatch"] = c.ReplaceIfMatch([]byte(`{"id":"x"}`), d.ETag())
	_, calls["read"] = c.Read("x")
	_, calls["touch"] = c.Touch("x")
	calls["delete"] = c.Delete("x")
	calls["deleteIfMatch"] = c.DeleteIfMatch("x", d.ETag())
	calls["setDefaultTTL"] = c.SetDefaultTTL(nil)
	for name, err := range calls {
		assert.ErrorIs(t, err, ttlstore.ErrClosed, name)
	}
	assert.Equal(t, 1, c.Len(), "Close dropped the contents")
	assert.Equal(t, int32(5), *c.DefaultTTL())
}

func TestNewRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opts ttlstore.Options
		want error
	}{
		{"negative batch", ttlstore.Options{SweepBatch: -1}, ttlstore.ErrInvalidOptions},
		{"negative size", ttlstore.Options{MaxDocumentSize: -1}, ttlstore.ErrInvalidOptions},
		{"zero DefaultTTL", ttlstore.Options{DefaultTTL: ttlstore.TTL(0)}, ttlstore.ErrInvalidTTL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ttlstore.New(tt.opts)
			assert.ErrorIs(t, err, tt.want)
			assert.Nil(t, c)
		})
	}
	c, err := ttlstore.New(ttlstore.Options{})
	require.NoError(t, err, "the zero Options must work")
	require.NoError(t, c.Close())
}
