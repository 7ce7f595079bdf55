package ttlstore_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/vfs"
)

// The log of these tests, on a MemFS.
const mappedLog = "db/0000000000000001.log"

// openMapped opens a collection with policy on a new MemFS whose files
// preallocate 4 KiB ahead of their appends, as the OS's do 4 MiB, and
// writes n documents.
func openMapped(t *testing.T, policy ttlstore.SyncPolicy, n int) (*vfs.MemFS, *ttlstore.Collection) {
	t.Helper()
	fsys := vfs.NewMemFS()
	fsys.SetPreallocation(4096)
	c, err := openMem(t, fsys, newMock(), policy, 1<<30)
	require.NoError(t, err)
	for i := range n {
		upsert(t, c, fmt.Sprintf(`{"id":"d%d","v":%d}`, i, i))
	}
	return fsys, c
}

// zeroTail is how many bytes past its last record the log name of fsys
// holds: zero bytes, or the log would not open.
func zeroTail(t *testing.T, fsys *vfs.MemFS, name string) int {
	t.Helper()
	b, err := fsys.ReadFile(name)
	require.NoError(t, err)
	records, _, err := ttlstore.LogEnds(b)
	require.NoError(t, err)
	return len(b) - int(records[len(records)-1])
}

// A kill -9 keeps every write acknowledged under SyncNever: the log's
// records were copied through its mapping, followed by the zero tail the
// process did not live to cut, which a restart takes for the end of the
// log (not torn) and cuts; a clean Close leaves no tail. The second run
// has the log's zeroer preallocate (vfs.MemFS.SetExtend) while 4
// goroutines write, and kills the process with the zeroer perhaps still
// at work.
func TestDurableMappedKillKeepsWrites(t *testing.T) {
	for _, extend := range []bool{false, true} {
		t.Run(fmt.Sprintf("extend=%v", extend), func(t *testing.T) { mappedKillKeepsWrites(t, extend) })
	}
}

func mappedKillKeepsWrites(t *testing.T, extend bool) {
	fsys, c := openMapped(t, ttlstore.SyncNever, 50)
	n := 51
	if extend {
		fsys.SetExtend(true)
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 500 {
					if _, err := c.Upsert(fmt.Appendf(nil, `{"id":"g%d-%d","pad":"%0500d"}`, g, i, 0)); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		n += 4 * 500
	}
	want := shownOf(c)
	killed := fsys.Kill()
	c.Close()
	require.Positive(t, zeroTail(t, killed, mappedLog), "the log was not preallocated: not appended through a mapping")

	c, err := openMem(t, killed, newMock(), ttlstore.SyncNever, 1<<30)
	require.NoError(t, err)
	assert.True(t, shownOf(c).equal(want), "reopened to\n  %v\nwant\n  %v", shownOf(c), want)
	assert.Zero(t, c.Stats().TornBytes, "the zero tail counted as torn")
	assert.Zero(t, zeroTail(t, killed, mappedLog), "the restart did not cut the zero tail")
	upsert(t, c, `{"id":"after"}`)
	require.NoError(t, c.Close())
	assert.Zero(t, zeroTail(t, killed, mappedLog), "Close left a zero tail")

	c, err = openMem(t, killed, newMock(), ttlstore.SyncNever, 1<<30)
	require.NoError(t, err)
	defer c.Close()
	assert.Len(t, ids(c), n)
}

// A power loss keeps only what was synced: under SyncNever, none of the
// writes since the log was created (the directory opens, empty and not
// torn); under SyncAlways every acknowledged one; and with the unsynced
// appends torn at random, a prefix of the writes.
func TestDurableMappedPowerLoss(t *testing.T) {
	fsys, c := openMapped(t, ttlstore.SyncNever, 50)
	crashed := fsys.Crash(nil, false)
	c.Close()
	c, err := openMem(t, crashed, newMock(), ttlstore.SyncNever, 1<<30)
	require.NoError(t, err)
	assert.Empty(t, ids(c), "a write that was never synced survived a power loss")
	assert.Zero(t, c.Stats().TornBytes)
	require.NoError(t, c.Close())

	fsys, c = openMapped(t, ttlstore.SyncAlways, 50)
	want := shownOf(c)
	crashed = fsys.Crash(nil, false)
	c.Close()
	c, err = openMem(t, crashed, newMock(), ttlstore.SyncAlways, 1<<30)
	require.NoError(t, err)
	assert.True(t, shownOf(c).equal(want), "reopened to\n  %v\nwant\n  %v", shownOf(c), want)
	require.NoError(t, c.Close())

	seeds := uint64(50)
	if ttlstore.RaceRepeat(t) {
		seeds = 10 // the repeats of -count under -race (see RaceRepeat)
	}
	for seed := range seeds {
		fsys, c = openMapped(t, ttlstore.SyncNever, 0)
		require.NoError(t, c.Compact()) // syncs the log: a base to tear from
		for i := range 20 {
			upsert(t, c, fmt.Sprintf(`{"id":"d%d"}`, i))
		}
		crashed = fsys.Crash(rand.New(rand.NewPCG(seed, 1)), true)
		c.Close()
		c, err = openMem(t, crashed, newMock(), ttlstore.SyncNever, 1<<30)
		require.NoError(t, err, "seed %d", seed)
		got := ids(c)
		for i := range got {
			assert.Contains(t, got, fmt.Sprintf("d%d", i), "seed %d: not a prefix of the writes: %v", seed, got)
		}
		require.NoError(t, c.Close())
	}
}

// The disk filling while the log's mapping grows refuses the write that
// needed the room, with ErrIO and ENOSPC, and leaves the collection as it
// was, in memory and after a restart; the failure is final, as a failed
// write(2) is.
func TestDurableMappedDiskFull(t *testing.T) {
	fsys, c := openMapped(t, ttlstore.SyncNever, 1)
	want := shownOf(c)
	tail := int64(zeroTail(t, fsys, mappedLog))
	fsys.SetCapacity(fsysUsed(t, fsys)) // no room past the preallocated tail
	pad := bytes.Repeat([]byte("x"), int(tail))
	_, err := c.Upsert([]byte(fmt.Sprintf(`{"id":"big","pad":%q}`, pad)))
	require.ErrorIs(t, err, ttlstore.ErrIO)
	require.ErrorIs(t, err, syscall.ENOSPC)
	assert.True(t, shownOf(c).equal(want), "the refused write changed memory")
	_, err = c.Upsert([]byte(`{"id":"small"}`))
	require.ErrorIs(t, err, ttlstore.ErrIO, "a failed log is final")

	killed := fsys.Kill()
	c.Close()
	killed.SetCapacity(0)
	c, err = openMem(t, killed, newMock(), ttlstore.SyncNever, 1<<30)
	require.NoError(t, err)
	defer c.Close()
	assert.True(t, shownOf(c).equal(want), "reopened to\n  %v\nwant\n  %v", shownOf(c), want)
	assert.Zero(t, c.Stats().TornBytes, "the refused write left bytes in the log")
}
