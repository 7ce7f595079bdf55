package ttlstore

import (
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWakeAt(t *testing.T) {
	base := time.Unix(1000, 0)
	tests := []struct {
		name      string
		next      int64
		last      time.Time
		interval  time.Duration
		wantAt    time.Time
		wantArmed int64
	}{
		{"first sweep: at the expiry", 1005, time.Time{}, time.Second, time.Unix(1005, 0), 1005},
		{"expiry after the interval: at the expiry", 1005, base, time.Second, time.Unix(1005, 0), 1005},
		{"expiry within the interval: when the interval ends", 1005, base, 10 * time.Second, time.Unix(1010, 0), math.MinInt64},
		{"expiry in the past, interval passed: now-ish (at the expiry)", 900, base.Add(-time.Hour), time.Second, time.Unix(900, 0), 900},
		{"expiry exactly at the interval's end", 1010, base, 10 * time.Second, time.Unix(1010, 0), 1010},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at, armed := wakeAt(tt.next, tt.last, tt.interval)
			assert.True(t, tt.wantAt.Equal(at), "at %v, want %v", at, tt.wantAt)
			assert.Equal(t, tt.wantArmed, armed)
		})
	}
}

// sameShardIDs returns n ids that hash to one shard of c.
func sameShardIDs(c *Collection, n int) (*shard, []string) {
	want, _ := c.shardFor("x0")
	ids := []string{"x0"}
	for i := 1; len(ids) < n; i++ {
		id := fmt.Sprintf("x%d", i)
		if s, _ := c.shardFor(id); s == want {
			ids = append(ids, id)
		}
	}
	return want, ids
}

// TestSweepBatchesReleaseTheLock checks R10 and R11 from the inside: with
// SweepBatch 2 and five expired documents in one shard, the sweep deletes
// two, releases the lock and reports them, then two more, then one; and
// OnExpire always runs with the shard's lock free.
func TestSweepBatchesReleaseTheLock(t *testing.T) {
	clk := clock.NewMock()
	var c *Collection
	var s *shard
	var remaining []int
	c, err := New(Options{Clock: clk, SweepInterval: ManualSweep, SweepBatch: 2, DefaultTTL: TTL(10),
		OnExpire: func(Document) {
			require.True(t, s.mu.TryLock(), "OnExpire called with the shard locked")
			remaining = append(remaining, s.docs.len())
			s.mu.Unlock()
		}})
	require.NoError(t, err)
	defer c.Close()
	var ids []string
	s, ids = sameShardIDs(c, 5)
	for _, id := range ids {
		_, err := c.Upsert([]byte(`{"id":"` + id + `"}`))
		require.NoError(t, err)
	}
	clk.Add(10 * time.Second)
	assert.Equal(t, 5, c.Sweep())
	assert.Equal(t, []int{3, 3, 1, 1, 0}, remaining)
	require.NoError(t, c.checkInvariants())
}

// TestTTLOffLeavesNothingForTheSweeper checks R14's "the sweeper has nothing
// to look at": with TTL off the index is empty, so the sweeper sets no timer.
func TestTTLOffLeavesNothingForTheSweeper(t *testing.T) {
	c, err := New(Options{Clock: clock.NewMock(), SweepInterval: ManualSweep, DefaultTTL: TTL(10)})
	require.NoError(t, err)
	defer c.Close()
	for i := range 100 {
		_, err := c.Upsert([]byte(fmt.Sprintf(`{"id":"d%d","ttl":%d}`, i, i+1)))
		require.NoError(t, err)
	}
	require.NotEqual(t, neverExpires, c.earliestExpiry())
	require.NoError(t, c.SetDefaultTTL(nil))
	assert.Equal(t, neverExpires, c.earliestExpiry())
	for i := range c.shards {
		x := &c.shards[i].index
		assert.Equal(t, 0, x.near.tree.Len(), "with TTL off the sweeper's trees are empty")
		assert.Nil(t, x.far)
		assert.Equal(t, c.shards[i].docs.len(), len(x.near.never.items))
	}
	require.NoError(t, c.SetDefaultTTL(TTL(Never)))
	assert.Equal(t, int64(1), c.earliestExpiry(), "turning on again indexes the stored ttls")
	require.NoError(t, c.checkInvariants())
}

// TestSweepStopsBetweenBatches: a sweep whose stop channel is closed (as
// Close closes the background sweeper's) finishes the batch it is in, reports
// it, and stops; the rest waits, invisible, for the next sweep.
func TestSweepStopsBetweenBatches(t *testing.T) {
	clk := clock.NewMock()
	reported := 0
	c, err := New(Options{Clock: clk, SweepInterval: ManualSweep, SweepBatch: 2, DefaultTTL: TTL(10),
		OnExpire: func(Document) { reported++ }})
	require.NoError(t, err)
	defer c.Close()
	_, ids := sameShardIDs(c, 5)
	for _, id := range ids {
		_, err := c.Upsert([]byte(`{"id":"` + id + `"}`))
		require.NoError(t, err)
	}
	clk.Add(10 * time.Second)
	stop := make(chan struct{})
	close(stop)
	assert.Equal(t, 2, c.sweep(stop))
	assert.Equal(t, 2, reported)
	assert.Equal(t, Stats{Expired: 3, Swept: 2}, CoreStats(c.Stats()))
	assert.Equal(t, 3, c.Sweep())
	assert.Equal(t, 5, reported)
	require.NoError(t, c.checkInvariants())
}

// TestMonoClock: the default clock agrees with the wall clock to the
// second, its unixSeconds with its Now, and rounds down before 1970.
func TestMonoClock(t *testing.T) {
	m := newMonoClock()
	wall := time.Now().Unix()
	assert.InDelta(t, wall, m.unixSeconds(), 1)
	assert.InDelta(t, m.Now().Unix(), m.unixSeconds(), 1)
	assert.True(t, m.Until(m.Now().Add(time.Hour)) > 59*time.Minute)

	past := &monoClock{start: time.Now(), startNanos: -1_500_000_000}
	assert.Equal(t, int64(-2), past.unixSeconds(), "-1.5 s is in second -2")
	past.startNanos = -500_000_000
	assert.Equal(t, int64(-1), past.unixSeconds(), "-0.5 s is in second -1")
	past.startNanos = 2_500_000_000
	assert.Equal(t, int64(2), past.unixSeconds(), "2.5 s is in second 2")
	c, err := New(Options{SweepInterval: ManualSweep})
	require.NoError(t, err)
	defer c.Close()
	assert.NotNil(t, c.mono, "the nil Clock is the monotonic wall clock")
}

// virtualClock is a clock that runs by itself but takes no real time: as a
// waiter, it jumps to the time waited for at once, the way a real clock's
// timer would fire on time, without clock.Mock's 1 ms sleep per timer. It
// stops at end: a wait for a later time blocks until done.
type virtualClock struct {
	clock.Clock // unused: a Collection on it reads only Now
	end         time.Time
	mu          sync.Mutex
	now         time.Time
	waits       int // waits that reached their time
}

func (v *virtualClock) Now() time.Time {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.now
}

func (v *virtualClock) waitUntil(at time.Time, wake, done <-chan struct{}) waitResult {
	select {
	case <-done:
		return waitDone
	case <-wake:
		return waitWoken
	default:
	}
	if at.After(v.end) {
		<-done
		return waitDone
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if at.After(v.now) {
		v.now = at
	}
	v.waits++
	return waitDue
}

// TestSweeperLatenessOnARunningClock shows that on a clock that runs by
// itself (the timer path) expired documents are removed within
// SweepInterval of their expiry, and that the sweeper wakes at most once
// per SweepInterval: expiries spread over every second of an hour, swept
// with intervals of 1 s and 7 s on a virtual clock.
func TestSweeperLatenessOnARunningClock(t *testing.T) {
	for _, interval := range []time.Duration{time.Second, 7 * time.Second} {
		t.Run(interval.String(), func(t *testing.T) {
			const n, span = 5000, 3600
			v := &virtualClock{now: time.Unix(1_700_000_000, 0), end: time.Unix(1_700_000_000+span+60, 0)}
			var mu sync.Mutex
			late := map[string]int64{} // id -> seconds between expiry and removal
			all := make(chan struct{})
			c, err := New(Options{Clock: v, SweepInterval: ManualSweep, DefaultTTL: TTL(Never),
				OnExpire: func(d Document) {
					exp, _ := d.ExpiresAt()
					mu.Lock()
					defer mu.Unlock()
					late[d.ID()] = v.Now().Unix() - exp.Unix()
					if len(late) == n {
						close(all)
					}
				}})
			require.NoError(t, err)
			for i := range n {
				_, err := c.Upsert([]byte(fmt.Sprintf(`{"id":"d%d","ttl":%d}`, i, 1+i%span)))
				require.NoError(t, err)
			}
			// Start the background sweeper by hand, on the virtual clock.
			c.interval, c.waiter, c.stopped = interval, v, make(chan struct{})
			go c.runSweeper()
			select {
			case <-all:
			case <-time.After(20 * time.Second): // a guard against a hang
				t.Fatalf("swept %d of %d", c.Stats().Swept, n)
			}
			require.NoError(t, c.Close())
			worst := int64(0)
			for id, s := range late {
				require.GreaterOrEqual(t, s, int64(0), "%s was removed before it expired", id)
				worst = max(worst, s)
			}
			assert.LessOrEqual(t, worst, int64(interval/time.Second), "removed later than SweepInterval after expiry")
			assert.LessOrEqual(t, v.waits, span/int(interval/time.Second)+2, "woke more than once per SweepInterval")
			t.Logf("interval %v: %d sweeps over %d s, latest removal %d s after expiry", interval, v.waits, span, worst)
		})
	}
}

// TestPollWaiter: a wait on a manually moved clock ends when the clock is
// moved to the time (by any number of steps), or at once on wake or done,
// and never sets a timer on the clock.
func TestPollWaiter(t *testing.T) {
	clk := clock.NewMock()
	w := newWaiter(clk)
	require.IsType(t, &pollWaiter{}, w, "a *clock.Mock gets the poll waiter")
	require.IsType(t, timerWaiter{}, newWaiter(clock.New()), "a running clock gets the timer waiter")

	never := make(chan struct{})
	at := clk.Now().Add(time.Hour)
	assert.Equal(t, waitDue, w.waitUntil(clk.Now(), never, never), "a time already reached")

	ready := make(chan struct{})
	close(ready)
	assert.Equal(t, waitWoken, w.waitUntil(at, ready, never))
	assert.Equal(t, waitDone, w.waitUntil(at, never, ready))

	got := make(chan waitResult)
	go func() { got <- w.waitUntil(at, never, never) }()
	clk.Add(59 * time.Minute)
	select {
	case r := <-got:
		t.Fatalf("the wait ended (%v) before its time", r)
	default:
	}
	clk.Add(time.Minute)
	assert.Equal(t, waitDue, <-got)
}
