//go:build go1.25

package ttlstore_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/vfs"
)

// TestSynctestMonthOverSpreadExpiries runs a Collection on the default clock
// (Options.Clock nil) inside a testing/synctest bubble, where time is virtual
// and timers fire as soon as every goroutine of the bubble is blocked. A
// month passes over documents whose expiries are spread across every second
// of a day; the background sweeper, started in the bubble, removes and
// reports every one of them, and Close leaves no goroutine behind (synctest
// fails the test otherwise).
func TestSynctestMonthOverSpreadExpiries(t *testing.T) {
	n := spreadDocs()
	if ttlstore.RaceRepeat(t) {
		n /= 10 // the repeats of -count under -race
	}
	synctest.Test(t, func(t *testing.T) {
		var reported atomic.Int64
		c, err := ttlstore.New(ttlstore.Options{
			DefaultTTL: ttlstore.TTL(3600),
			OnExpire:   func(ttlstore.Document) { reported.Add(1) },
		})
		require.NoError(t, err)
		defer c.Close()
		for i := range n {
			_, err := c.Upsert([]byte(fmt.Sprintf(`{"id":"s%d","ttl":%d}`, i, 60+i%86400)))
			require.NoError(t, err)
		}
		d, err := c.Read("s0")
		require.NoError(t, err)
		exp, _ := d.ExpiresAt()
		want := time.Now().Add(60 * time.Second).Truncate(time.Second)
		assert.True(t, want.Equal(exp), "expires at %v, want %v: the bubble's clock is the collection's", exp, want)

		time.Sleep(59 * time.Second)
		synctest.Wait()
		assert.Zero(t, reported.Load(), "nothing expires before its second")
		assert.Equal(t, n, c.Len())

		time.Sleep(30*24*time.Hour - 59*time.Second)
		synctest.Wait() // the sweeper is idle again: it has swept everything due
		assert.Equal(t, int64(n), reported.Load())
		assert.Equal(t, ttlstore.Stats{Swept: uint64(n)}, ttlstore.CoreStats(c.Stats()))
		require.NoError(t, c.CheckInvariants())
	})
}

// TestSynctestSyncEverySecond: under SyncEverySecond a write is fsynced
// about a second after it returns, by the background syncer, so a power
// loss after that second keeps it. The syncer runs on the real clock (here
// the bubble's) and arms a timer only while something is unsynced: a month
// with no writes costs no sync.
func TestSynctestSyncEverySecond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fsys := vfs.NewMemFS()
		c, err := ttlstore.OpenFS(fsys, "db", ttlstore.Options{Sync: ttlstore.SyncEverySecond}, 1<<30, false)
		require.NoError(t, err)
		defer c.Close()
		_, err = c.Upsert([]byte(`{"id":"a"}`))
		require.NoError(t, err)
		synctest.Wait()
		assert.Zero(t, c.Stats().LogSyncs, "synced at once under SyncEverySecond")

		time.Sleep(1100 * time.Millisecond)
		synctest.Wait()
		assert.Equal(t, uint64(1), c.Stats().LogSyncs, "not synced a second later")

		time.Sleep(30 * 24 * time.Hour)
		synctest.Wait()
		assert.Equal(t, uint64(1), c.Stats().LogSyncs, "synced with nothing to sync")

		c2, err := ttlstore.OpenFS(fsys.Crash(nil, false), "db", ttlstore.Options{}, 1<<30, false)
		require.NoError(t, err)
		defer c2.Close()
		assert.Equal(t, 1, c2.Len(), "a write synced a second after it was lost in a power loss")
	})
}
