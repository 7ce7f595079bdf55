//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package vfs_test

import (
	"os"
	"path"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore/internal/vfs"
)

// TestOSLockIsFlock checks that OS.Lock and a flock(2) taken by anyone
// else (here, another open file description, as another process would
// have) keep each other out.
func TestOSLockIsFlock(t *testing.T) {
	name := path.Join(t.TempDir(), "LOCK")
	other, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	require.NoError(t, err)
	defer other.Close()
	fd := int(other.Fd())

	require.NoError(t, syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB))
	_, err = vfs.OS.Lock(name)
	assert.ErrorIs(t, err, vfs.ErrLocked, "held by another description")
	require.NoError(t, syscall.Flock(fd, syscall.LOCK_UN))

	l, err := vfs.OS.Lock(name)
	require.NoError(t, err)
	err = syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
	assert.ErrorIs(t, err, syscall.EWOULDBLOCK, "OS.Lock holds a real flock")
	require.NoError(t, l.Close())
	require.NoError(t, syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB), "Close released it")

	fi, err := os.Stat(name)
	require.NoError(t, err)
	assert.Zero(t, fi.Mode().Perm()&0o077, "created 0600: %v", fi.Mode())
}
