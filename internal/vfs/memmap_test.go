package vfs_test

import (
	"bytes"
	"errors"
	"io/fs"
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore/internal/vfs"
)

// mapAppend opens an Appender of a new file "log" of m holding head, synced.
func mapAppend(t *testing.T, m *vfs.MemFS, head string) (vfs.File, vfs.Appender) {
	t.Helper()
	f := create(t, m, "log", head, true)
	require.NoError(t, m.SyncDir("/"))
	a, err := f.(vfs.Mapper).MapAppend(int64(len(head)))
	require.NoError(t, err)
	return f, a
}

// bytesOf returns the contents of name in fsys.
func bytesOf(t *testing.T, fsys vfs.FS, name string) []byte {
	t.Helper()
	return []byte(readFile(t, fsys, name))
}

// withZeros is s followed by n zero bytes.
func withZeros(s string, n int) []byte { return append([]byte(s), make([]byte, n)...) }

// An Appender writes in place over the zero tail it preallocates; Close
// cuts the tail. Kill keeps every append, synced or not; Crash keeps what
// was synced, at the size synced, and no more.
func TestMemFSAppender(t *testing.T) {
	m := vfs.NewMemFS()
	m.SetPreallocation(16)
	f, a := mapAppend(t, m, "head")
	require.NoError(t, a.Append([]byte("one")))
	assert.Equal(t, withZeros("headone", 13), bytesOf(t, m, "log"), "16 bytes preallocated past the old end")
	require.NoError(t, f.Sync())
	require.NoError(t, a.Append([]byte("two")))
	assert.Equal(t, int64(10), a.Offset())
	size, err := f.Size()
	require.NoError(t, err)
	assert.Equal(t, int64(20), size, "Size counts the zero tail")

	killed := m.Kill()
	assert.Equal(t, withZeros("headonetwo", 10), bytesOf(t, killed, "log"), "kill -9 keeps every append")
	crashed := killed.Crash(nil, false)
	assert.Equal(t, withZeros("headone", 13), bytesOf(t, crashed, "log"), "power loss keeps what was synced, at its synced size")
	assert.ErrorIs(t, a.Append([]byte("x")), vfs.ErrCrashed)

	// Close cuts the zero tail; Sync makes the cut durable.
	m = vfs.NewMemFS()
	m.SetPreallocation(16)
	f, a = mapAppend(t, m, "head")
	require.NoError(t, a.Append([]byte("one")))
	require.NoError(t, f.Sync())
	require.NoError(t, a.Close())
	require.NoError(t, a.Close(), "a second Close does nothing")
	assert.ErrorIs(t, a.Append([]byte("x")), fs.ErrClosed)
	assert.Equal(t, []byte("headone"), bytesOf(t, m, "log"))
	require.NoError(t, f.Sync())
	assert.Equal(t, []byte("headone"), bytesOf(t, m.Crash(nil, false), "log"))
}

// An append that is not synced can be lost by a crash, as an unsynced
// Write can, though it overwrote preallocated zeros rather than extend the
// file; but not as a suffix: the kernel writes a mapping's pages back in any
// order, so each CrashPage of the unsynced appends is kept or reads as zero
// bytes, and a later page may be kept when an earlier one is not.
func TestMemFSAppenderCrashLosesPages(t *testing.T) {
	unsynced := bytes.Repeat([]byte("0123456789abcdef"), 3*vfs.CrashPage/16)
	head := []byte("headsynced")
	holes := 0
	for seed := range uint64(200) {
		m := vfs.NewMemFS()
		m.SetPreallocation(8 * vfs.CrashPage)
		f, a := mapAppend(t, m, "head")
		require.NoError(t, a.Append([]byte("synced")))
		require.NoError(t, f.Sync())
		require.NoError(t, a.Append(unsynced))
		got := bytesOf(t, m.Crash(rand.New(rand.NewPCG(seed, 0)), true), "log")
		require.True(t, bytes.HasPrefix(got, head), "the synced bytes: %q", got[:len(head)])
		require.GreaterOrEqual(t, len(got), 4+8*vfs.CrashPage, "the synced size (its preallocation)")
		want := append(slices.Clone(head), unsynced...)
		lost := false
		for from := len(head); from < len(want); {
			to := min(from-from%vfs.CrashPage+vfs.CrashPage, len(want))
			switch page := got[from:to]; {
			case bytes.Equal(page, want[from:to]):
				if lost {
					holes++
				}
			case !bytes.ContainsFunc(page, func(r rune) bool { return r != 0 }):
				lost = true
			default:
				t.Fatalf("seed %d: page at %d is neither what was appended nor zero: %q", seed, from, page)
			}
			from = to
		}
		require.False(t, bytes.ContainsFunc(got[len(want):], func(r rune) bool { return r != 0 }), "zero bytes after the appends")
	}
	assert.Positive(t, holes, "a crash never kept a page after one it lost")
}

// Growth is OpAllocate: the hook can fail it, and the capacity bounds it,
// first to what the append needs, then to nothing; either way nothing of
// the append is written, and the Appender goes on once there is room.
func TestMemFSAppenderFull(t *testing.T) {
	m := vfs.NewMemFS()
	m.SetPreallocation(100)
	_, a := mapAppend(t, m, "head")
	m.SetCapacity(4 + 10) // room for 10 bytes, not for 100
	require.NoError(t, a.Append([]byte("0123456")), "the append takes what it needs")
	assert.Equal(t, []byte("head0123456"), bytesOf(t, m, "log"))
	err := a.Append([]byte("789abc"))
	require.ErrorIs(t, err, syscall.ENOSPC)
	assert.Equal(t, []byte("head0123456"), bytesOf(t, m, "log"), "a refused append wrote nothing")
	require.NoError(t, a.Append([]byte("789")), "what fits still goes")

	injected := errors.New("EIO")
	m.SetCapacity(0)
	m.SetHook(func(op vfs.Op, _ string) error {
		if op == vfs.OpAllocate {
			return injected
		}
		return nil
	})
	require.ErrorIs(t, a.Append([]byte("x")), injected)
	assert.Equal(t, []byte("head0123456789"), bytesOf(t, m, "log"))
	m.SetHook(nil)
	require.NoError(t, a.Append([]byte("x")))
	assert.Equal(t, withZeros("head0123456789x", 99), bytesOf(t, m, "log"))
}

// A file written behind an Appender's back (Write, Truncate) does not let
// the Appender change the synced bytes in place.
func TestMemFSAppenderKeepsSynced(t *testing.T) {
	m := vfs.NewMemFS()
	f, a := mapAppend(t, m, "head")
	require.NoError(t, f.Truncate(2))
	require.NoError(t, f.Sync())
	_, err := f.Write([]byte("ad"))
	require.NoError(t, err)
	require.NoError(t, f.Sync()) // synced: "head", sharing the array
	require.NoError(t, a.Append([]byte("XY")), "appends at 4, over nothing")
	a2, err := f.(vfs.Mapper).MapAppend(2)
	require.NoError(t, err)
	require.NoError(t, a2.Append([]byte("ZZ")), "appends at 2, over synced bytes")
	assert.Equal(t, []byte("heZZXY"), bytesOf(t, m, "log"))
	assert.Equal(t, []byte("head"), bytesOf(t, m.Crash(nil, false), "log"), "the synced bytes changed in place")
}

// Extend of a MemFS Appender does nothing unless SetExtend said so; then
// it extends the zero tail (OpAllocate, which the hook may fail), up to the
// capacity (ENOSPC, keeping what fitted), which appends then fill in place;
// Close cuts it, and Extend after Close or Kill does nothing.
func TestMemFSAppenderExtend(t *testing.T) {
	m := vfs.NewMemFS()
	_, a := mapAppend(t, m, "head")
	ext := a.(vfs.Extender)
	ops := m.Ops()
	require.NoError(t, ext.Extend(100))
	assert.Equal(t, ops, m.Ops(), "Extend without SetExtend is no step")
	assert.Equal(t, []byte("head"), bytesOf(t, m, "log"), "Extend without SetExtend")

	m.SetExtend(true)
	ops = m.Ops()
	require.NoError(t, ext.Extend(20))
	require.NoError(t, ext.Extend(10), "Extend short of the file's size")
	assert.Equal(t, ops+1, m.Ops(), "one OpAllocate")
	assert.Equal(t, withZeros("head", 16), bytesOf(t, m, "log"))
	require.NoError(t, a.Append([]byte("one")))
	assert.Equal(t, withZeros("headone", 13), bytesOf(t, m, "log"), "the append went into the zero tail")

	m.SetHook(func(op vfs.Op, _ string) error {
		if op == vfs.OpAllocate {
			return syscall.EIO
		}
		return nil
	})
	require.ErrorIs(t, ext.Extend(40), syscall.EIO)
	m.SetHook(nil)
	assert.Len(t, bytesOf(t, m, "log"), 20, "a failed Extend extends nothing")

	m.SetCapacity(30)
	require.ErrorIs(t, ext.Extend(40), syscall.ENOSPC)
	assert.Equal(t, withZeros("headone", 23), bytesOf(t, m, "log"), "Extend kept what fitted")
	require.NoError(t, a.Append(bytes.Repeat([]byte("x"), 23)), "an append into the tail needs no room")
	require.ErrorIs(t, a.Append([]byte("y")), syscall.ENOSPC)

	killed := m.Kill()
	require.ErrorIs(t, ext.Extend(50), vfs.ErrCrashed)
	_, a = mapAppend(t, killed, "")
	require.NoError(t, a.(vfs.Extender).Extend(8), "Kill passes SetExtend on")
	assert.Len(t, bytesOf(t, killed, "log"), 8)
	require.NoError(t, a.Close())
	require.NoError(t, a.(vfs.Extender).Extend(16))
	assert.Empty(t, bytesOf(t, killed, "log"), "Close cut the tail, and Extend after it did nothing")
}
