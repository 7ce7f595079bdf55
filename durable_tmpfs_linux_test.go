//go:build linux

package ttlstore_test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
)

// mountTmpfs mounts a tmpfs of size bytes on a new temporary directory and
// unmounts it when the test ends. It skips the test where mounting is not
// allowed (not root, or in a container without the capability).
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// freeBytes is what the file system of dir has free.
func freeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	require.NoError(t, syscall.Statfs(dir, &st))
	return int64(st.Bavail) * int64(st.Bsize) // Bsize is an int32 on 32-bit platforms
}

// TestDurableTmpfsFullConcurrentWriters is TestDurableDiskFullConcurrentWriters
// on a real file system: a 1 MiB tmpfs, filled (by a file beside the
// collection's directory, before its first write) to a few bytes to a few
// pages short of full once the writes of newDiskFullWriters are in, then
// 32 writers under each policy until ENOSPC. The log's zeroer (the
// background preallocation of a mapped log, vfs.Extender) takes all that
// is free at the first write, and meets ENOSPC first; the writers' appends
// use what it preallocated, and the first that does not fit meets ENOSPC. After Close, the filler's
// removal and Open, the collection shows exactly what each writer was told,
// as it did in memory before Close.
func TestDurableTmpfsFullConcurrentWriters(t *testing.T) {
	rooms := []int64{0, 1000, 5000, 9000, 20000, 40000}
	if raceEnabled {
		rooms = rooms[:3]
	}
	for _, policy := range []ttlstore.SyncPolicy{ttlstore.SyncAlways, ttlstore.SyncEverySecond, ttlstore.SyncNever} {
		t.Run(policy.String(), func(t *testing.T) {
			for i, room := range rooms {
				mnt := mountTmpfs(t, 1<<20)
				dir := filepath.Join(mnt, "db")
				opts := ttlstore.Options{Clock: newMock(), SweepInterval: ttlstore.ManualSweep, Sync: policy}
				c, err := ttlstore.Open(dir, opts)
				require.NoError(t, err)
				// The filler goes before the first write: from then
				// on the log's zeroer may take what is free.
				filler := filepath.Join(mnt, "filler")
				require.NoError(t, os.WriteFile(filler, make([]byte, max(freeBytes(t, mnt)-room-dfPreload, 0)), 0o600))
				w := newDiskFullWriters(t, c)
				w.run(t, c, uint64(i))
				when := fmt.Sprintf("room %d", room)
				w.check(t, c, when+", in memory")
				if err := c.Close(); err != nil {
					require.ErrorIs(t, err, syscall.ENOSPC)
				}

				require.NoError(t, os.Remove(filler))
				c, err = ttlstore.Open(dir, opts)
				require.NoError(t, err)
				w.check(t, c, when+", after Close and Open")
				require.NoError(t, c.CheckInvariants())
				require.NoError(t, c.Close())
			}
		})
	}
}
