package ttlstore

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore/internal/vfs"
)

// TestCompactorSkipsWhatCompactDid: the compactor, told by a write that
// the log passed its bound, compacts only if the log is still past it
// once it has the compaction's mutex. An explicit Compact that ran in
// between has started a new log, and a second snapshot of the same
// documents would only cost the disk (1M documents: seconds of writing).
// Before this look, TestDurableCompaction once saw a directory with the
// compactor's snapshot still being written, in a run of -race -count=20.
// The compactor's goroutine is never told here (its bound
// is 1 TiB): the test takes its turns itself, so it does not depend on
// the goroutine's timing.
func TestCompactorSkipsWhatCompactDid(t *testing.T) {
	fsys := vfs.NewMemFS()
	c, err := open(fsys, "db", Options{SweepInterval: ManualSweep, Sync: SyncNever}, 1<<40, false)
	require.NoError(t, err)
	defer c.Close()
	for i := range 200 {
		_, err := c.Upsert([]byte(fmt.Sprintf(`{"id":"d%d","v":%d}`, i%50, i)))
		require.NoError(t, err)
	}
	d := c.d
	logNum := func() uint64 {
		d.log.mu.Lock()
		defer d.log.mu.Unlock()
		return d.log.num
	}
	pastBound := func() {
		d.log.mu.Lock()
		d.log.compactAt = 0
		d.log.mu.Unlock()
	}
	first := logNum()

	pastBound()
	require.NoError(t, c.Compact())
	require.NoError(t, d.compactFull(c), "the compactor's turn, after Compact")
	require.Equal(t, first+1, logNum(), "one compaction: the compactor found nothing to do")

	pastBound()
	require.NoError(t, d.compactFull(c), "the compactor's turn, the log past its bound")
	require.Equal(t, first+2, logNum(), "the compactor compacts a log past its bound")

	require.NoError(t, d.compactFull(c))
	require.Equal(t, first+2, logNum(), "and not again once it has")
	require.NoError(t, c.checkInvariants())
}
