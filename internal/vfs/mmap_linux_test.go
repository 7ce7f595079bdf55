//go:build linux && (amd64 || arm64)

package vfs_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore/internal/vfs"
)

// The OS's Appender copies into a shared mapping of a preallocated file,
// remapping as it grows (past 4 MiB here, with appends that straddle the
// mappings' ends); reads see the appends at once; Close cuts the
// preallocated tail.
func TestOSAppender(t *testing.T) {
	name := filepath.Join(t.TempDir(), "log")
	f, err := vfs.OS.Create(name)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.Write([]byte("head"))
	require.NoError(t, err)
	a, err := f.(vfs.Mapper).MapAppend(4)
	require.NoError(t, err)
	want := []byte("head")
	for i := 0; len(want) < 9<<20; i++ {
		p := bytes.Repeat([]byte{byte(i)}, 1+i*7919%70000)
		require.NoError(t, a.Append(p))
		want = append(want, p...)
	}
	assert.Equal(t, int64(len(want)), a.Offset())
	size, err := f.Size()
	require.NoError(t, err)
	assert.Greater(t, size, int64(len(want)), "the file is preallocated past the appends")
	got := make([]byte, len(want))
	_, err = f.ReadAt(got, 0)
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got), "read back what was appended")
	require.NoError(t, f.Sync())
	require.NoError(t, a.Close())
	got, err = os.ReadFile(name)
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got), "Close cut the file to the appends")
}

// On a full disk, growth fails with ENOSPC (from fallocate, not a SIGBUS
// from a page fault): the append that needed it writes nothing, one that
// fits in what is left still goes, and the file is whole after Close.
func TestOSAppenderFull(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", 1<<20)); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
	f, err := vfs.OS.Create(filepath.Join(dir, "log"))
	require.NoError(t, err)
	defer f.Close()
	a, err := f.(vfs.Mapper).MapAppend(0)
	require.NoError(t, err)
	var want []byte
	chunk := bytes.Repeat([]byte("x"), 10000)
	var full error
	for range 200 { // 2 MB: more than the tmpfs holds
		if full = a.Append(chunk); full != nil {
			break
		}
		want = append(want, chunk...)
	}
	require.ErrorIs(t, full, syscall.ENOSPC)
	assert.Equal(t, int64(len(want)), a.Offset(), "the refused append moved the offset")
	require.NoError(t, a.Append([]byte("y")), "an append that fits in the page left still goes")
	want = append(want, 'y')
	require.NoError(t, a.Close())
	got, err := os.ReadFile(filepath.Join(dir, "log"))
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got), "the file holds what was appended, and nothing of the refused append")
}

// Extend preallocates the OS Appender's file from another goroutine while
// appends go on (the race detector watches): it does nothing before the
// first Append or after Close, the appends read back whole, and Close
// cuts whatever Extend wrote ahead.
func TestOSAppenderExtend(t *testing.T) {
	name := filepath.Join(t.TempDir(), "log")
	f, err := vfs.OS.Create(name)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.Write([]byte("head"))
	require.NoError(t, err)
	a, err := f.(vfs.Mapper).MapAppend(4)
	require.NoError(t, err)
	ext := a.(vfs.Extender)
	size := func() int64 {
		n, err := f.Size()
		require.NoError(t, err)
		return n
	}
	require.NoError(t, ext.Extend(1<<20))
	assert.Equal(t, int64(4), size(), "Extend before the first Append")

	want := []byte("head")
	require.NoError(t, a.Append([]byte("x")))
	want = append(want, 'x')
	done := make(chan struct{})
	go func() {
		defer close(done)
		for to := int64(100 << 10); to < 12<<20; to += 300 << 10 {
			if err := ext.Extend(to); err != nil {
				t.Errorf("Extend(%d): %v", to, err)
				return
			}
		}
	}()
	for i := 0; len(want) < 9<<20; i++ {
		p := bytes.Repeat([]byte{byte(i)}, 1+i*7919%70000)
		require.NoError(t, a.Append(p))
		want = append(want, p...)
	}
	<-done
	require.NoError(t, ext.Extend(12<<20))
	assert.Equal(t, int64(12<<20), size(), "the file is preallocated to what Extend was asked")
	got := make([]byte, len(want))
	_, err = f.ReadAt(got, 0)
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got), "read back what was appended")
	require.NoError(t, a.Close())
	require.NoError(t, ext.Extend(20<<20))
	got, err = os.ReadFile(name)
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got), "Close cut the file to the appends, and Extend after it wrote nothing")
}

// On a full disk, Extend fails with ENOSPC and leaves what it preallocated:
// appends go on into it, the first that does not fit fails with ENOSPC and
// writes nothing, and the file is whole after Close.
func TestOSAppenderExtendFull(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", 1<<20)); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
	f, err := vfs.OS.Create(filepath.Join(dir, "log"))
	require.NoError(t, err)
	defer f.Close()
	a, err := f.(vfs.Mapper).MapAppend(0)
	require.NoError(t, err)
	want := []byte("x")
	require.NoError(t, a.Append(want))
	require.ErrorIs(t, a.(vfs.Extender).Extend(2<<20), syscall.ENOSPC)
	size, err := f.Size()
	require.NoError(t, err)
	assert.Greater(t, size, int64(900<<10), "Extend kept what it preallocated")
	chunk := bytes.Repeat([]byte("y"), 10000)
	var full error
	for range 200 { // 2 MB: more than the tmpfs holds
		if full = a.Append(chunk); full != nil {
			break
		}
		want = append(want, chunk...)
	}
	require.ErrorIs(t, full, syscall.ENOSPC)
	assert.Equal(t, int64(len(want)), a.Offset(), "the refused append moved the offset")
	assert.Greater(t, len(want), 900<<10, "the appends used what Extend preallocated")
	require.NoError(t, a.Close())
	got, err := os.ReadFile(filepath.Join(dir, "log"))
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got), "the file holds what was appended, and nothing of the refused append")
}
