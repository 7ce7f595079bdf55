package ttlstore_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/vfs"
)

// TestDurableDiskFullConcurrentWriters fills the disk under 32 concurrent
// writers, at many fill levels and under each sync policy: what each writer
// was told and what the collection shows must agree, in memory before Close
// and after a restart (a clean Close, a kill -9, or under SyncAlways a power
// loss). A refused upsert is not there; a refused delete removed nothing.
// Before commit groups, a group-commit batch that ENOSPC cut short kept the
// whole records of writers told ErrIO, and a restart replayed them.
func TestDurableDiskFullConcurrentWriters(t *testing.T) {
	levels := 48
	if raceEnabled {
		levels = 12
	}
	for _, policy := range []ttlstore.SyncPolicy{ttlstore.SyncAlways, ttlstore.SyncEverySecond, ttlstore.SyncNever} {
		t.Run(policy.String(), func(t *testing.T) {
			for level := range levels {
				// Room for a few to a few hundred records past the
				// preload, so that the disk fills at every point of
				// a batch.
				diskFullRound(t, policy, uint64(level), int64(level)*97+int64(level%7))
			}
		})
	}
}

// diskFullRound is one round of TestDurableDiskFullConcurrentWriters with
// room bytes free after the preload.
func diskFullRound(t *testing.T, policy ttlstore.SyncPolicy, seed uint64, room int64) {
	const (
		writers   = 32
		idsEach   = 3
		opsEach   = 40
		preloaded = "{\"id\":\"%s\",\"v\":0}"
	)
	fsys := vfs.NewMemFS()
	clk := newMock()
	c, err := openMem(t, fsys, clk, policy, 1<<30)
	require.NoError(t, err)
	id := func(g, k int) string { return fmt.Sprintf("w%02d-%d", g, k) }
	// want[id] is the JSON value v of the last acknowledged write, or -1
	// for deleted.
	want := make(map[string]int)
	for g := range writers {
		for k := range idsEach {
			upsert(t, c, fmt.Sprintf(preloaded, id(g, k)))
			want[id(g, k)] = 0
		}
	}
	fsys.SetCapacity(fsysUsed(t, fsys) + room)

	var mu sync.Mutex // protects want
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(g)))
			for n := 1; n <= opsEach; n++ {
				k := rng.IntN(idsEach)
				var err error
				v := -1
				if rng.IntN(3) == 0 {
					err = c.Delete(id(g, k))
				} else {
					v = n
					_, err = c.Upsert([]byte(fmt.Sprintf(`{"id":"%s","v":%d,"pad":"%0*d"}`, id(g, k), v, rng.IntN(60), 0)))
				}
				switch {
				case err == nil:
					mu.Lock()
					want[id(g, k)] = v
					mu.Unlock()
				case errors.Is(err, ttlstore.ErrNotFound) && v == -1:
					// deleted already: nothing changes
				case errors.Is(err, ttlstore.ErrIO):
					return // the log has failed: every later write fails too
				default:
					t.Errorf("%s: %v", id(g, k), err)
					return
				}
			}
		}()
	}
	wg.Wait()

	check := func(c *ttlstore.Collection, when string) {
		t.Helper()
		for id, v := range want {
			d, err := c.Read(id)
			if v == -1 {
				require.ErrorIs(t, err, ttlstore.ErrNotFound, "%s (room %d, %s): deleted, and the delete acknowledged", id, room, when)
				continue
			}
			require.NoError(t, err, "%s (room %d, %s): a refused delete removed it", id, room, when)
			var got struct{ V int }
			require.NoError(t, d.Decode(&got))
			require.Equal(t, v, got.V, "%s (room %d, %s): not the last acknowledged write", id, room, when)
		}
	}
	check(c, "in memory")
	// A clean Close, a kill -9, or (SyncAlways) a power loss, in turn.
	restarted, how := fsys, "Close"
	switch {
	case seed%3 == 1 || seed%3 == 2 && policy != ttlstore.SyncAlways:
		restarted, how = fsys.Kill(), "kill -9"
	case seed%3 == 2:
		restarted, how = fsys.Crash(nil, false), "power loss"
	}
	closeErr := c.Close() // ErrIO if the disk filled; ErrCrashed after a kill
	if how == "Close" && closeErr != nil {
		require.ErrorIs(t, closeErr, ttlstore.ErrIO)
	}
	restarted.SetCapacity(0)
	c, err = openMem(t, restarted, clk, policy, 1<<30)
	require.NoError(t, err, how)
	check(c, "after "+how)
	require.NoError(t, c.CheckInvariants())
	require.NoError(t, c.Close())
}
