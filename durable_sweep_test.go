package ttlstore_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/vfs"
)

// expiryLog opens durable collections on one MemFS and records what they
// report to OnExpire.
type expiryLog struct {
	fsys     *vfs.MemFS
	clk      *monotonicClock
	policy   ttlstore.SyncPolicy
	reported []string
}

func (x *expiryLog) open(t *testing.T) *ttlstore.Collection {
	t.Helper()
	c, err := ttlstore.OpenFS(x.fsys, "db", ttlstore.Options{
		DefaultTTL:    ttlstore.TTL(100),
		Clock:         x.clk,
		SweepInterval: ttlstore.ManualSweep,
		Sync:          x.policy,
		OnExpire:      func(d ttlstore.Document) { x.reported = append(x.reported, d.ID()) },
	}, 1<<30, false)
	require.NoError(t, err)
	return c
}

// TestDurableSweptReportedOnce is issue 23's case: a document swept (and
// reported to OnExpire) before a restart is neither back nor reported again
// after it, whether the restart was clean, a kill -9, or (under
// SyncAlways) a power loss, and whether or not a compaction ran between.
// Before sweeps were logged, Open brought it back expired and the next
// sweep reported it a second time, unless a compaction had run.
func TestDurableSweptReportedOnce(t *testing.T) {
	type restart struct {
		name string
		do   func(*vfs.MemFS, *ttlstore.Collection) *vfs.MemFS
	}
	closeCleanly := restart{"Close", func(fs *vfs.MemFS, c *ttlstore.Collection) *vfs.MemFS {
		require.NoError(t, c.Close())
		return fs
	}}
	kill := restart{"kill -9", func(fs *vfs.MemFS, c *ttlstore.Collection) *vfs.MemFS {
		k := fs.Kill()
		_ = c.Close()
		return k
	}}
	powerLoss := restart{"power loss", func(fs *vfs.MemFS, c *ttlstore.Collection) *vfs.MemFS {
		k := fs.Crash(nil, false)
		_ = c.Close()
		return k
	}}
	for _, tc := range []struct {
		policy   ttlstore.SyncPolicy
		restarts []restart
	}{
		{ttlstore.SyncAlways, []restart{closeCleanly, kill, powerLoss}},
		{ttlstore.SyncEverySecond, []restart{closeCleanly, kill}},
		{ttlstore.SyncNever, []restart{closeCleanly, kill}},
	} {
		for _, r := range tc.restarts {
			for _, compact := range []bool{false, true} {
				name := tc.policy.String() + "/" + r.name
				if compact {
					name += "/compacted"
				}
				t.Run(name, func(t *testing.T) {
					x := &expiryLog{fsys: vfs.NewMemFS(), clk: &monotonicClock{Mock: newMock()}, policy: tc.policy}
					c := x.open(t)
					upsert(t, c, `{"id":"a"}`)          // expires at 100 s
					upsert(t, c, `{"id":"b","ttl":-1}`) // never
					require.NoError(t, c.Close())
					x.clk.Add(150 * time.Second)

					c = x.open(t)
					require.Equal(t, 1, c.Sweep())
					require.Equal(t, []string{"a"}, x.reported)
					if compact {
						require.NoError(t, c.Compact())
					}
					x.fsys = r.do(x.fsys, c)

					c = x.open(t)
					defer c.Close()
					assert.Equal(t, ttlstore.Stats{Live: 1}, ttlstore.CoreStats(c.Stats()), "a is back after the restart")
					assert.Zero(t, c.Sweep())
					assert.Equal(t, []string{"a"}, x.reported, "reported again after the restart")
					assert.Equal(t, []string{"b"}, ids(c))
					require.NoError(t, c.CheckInvariants())
				})
			}
		}
	}
}

// TestDurableSweepLeavesWhatItCannotLog: a durable collection's Sweep after
// Close, or after its log failed, removes nothing (the removal could not be
// logged, so a restart would bring the documents back and report them
// again); they stay invisible, and the next Open sweeps and reports each
// once.
func TestDurableSweepLeavesWhatItCannotLog(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cause func(*testing.T, *vfs.MemFS, *ttlstore.Collection)
	}{
		{"after Close", func(t *testing.T, _ *vfs.MemFS, c *ttlstore.Collection) {
			require.NoError(t, c.Close())
		}},
		{"after a full disk", func(t *testing.T, fsys *vfs.MemFS, c *ttlstore.Collection) {
			fsys.SetCapacity(fsysUsed(t, fsys) + 5)
			_, err := c.Upsert([]byte(`{"id":"c","pad":"xxxxxxxxxxxxxxxxxxxxxxxx"}`))
			require.ErrorIs(t, err, syscall.ENOSPC)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := &expiryLog{fsys: vfs.NewMemFS(), clk: &monotonicClock{Mock: newMock()}}
			c := x.open(t)
			upsert(t, c, `{"id":"a"}`)
			upsert(t, c, `{"id":"b","ttl":-1}`)
			x.clk.Add(150 * time.Second)
			tc.cause(t, x.fsys, c)

			assert.Zero(t, c.Sweep(), "swept what it could not log")
			assert.Empty(t, x.reported)
			st := c.Stats()
			assert.Equal(t, 1, st.Expired, "the expired document stays, invisible")
			assert.Equal(t, []string{"b"}, ids(c), "the expired document is visible")
			_ = c.Close()

			x.fsys.SetCapacity(0)
			c = x.open(t)
			defer c.Close()
			assert.Equal(t, 1, c.Sweep())
			assert.Equal(t, []string{"a"}, x.reported, "reported once, after the restart")
			assert.Equal(t, []string{"b"}, ids(c))
		})
	}
}
