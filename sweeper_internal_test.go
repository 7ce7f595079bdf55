package ttlstore

import (
	"fmt"
	"math"
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
		assert.Equal(t, 0, x.tree.Len(), "with TTL off the sweeper's tree is empty")
		assert.Equal(t, c.shards[i].docs.len(), len(x.never.items))
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
	assert.Equal(t, Stats{Expired: 3, Swept: 2}, c.Stats())
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
	c, err := New(Options{SweepInterval: ManualSweep})
	require.NoError(t, err)
	defer c.Close()
	assert.NotNil(t, c.mono, "the nil Clock is the monotonic wall clock")
}
