package vfs

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLockTable tests the in-process locks that OS.Lock uses where there is
// no flock(2); they are built everywhere so that they are tested here.
func TestLockTable(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "LOCK")
	var table lockTable

	l, err := table.lock(name)
	require.NoError(t, err)
	_, err = os.Stat(name)
	require.NoError(t, err, "the lock file is created")

	_, err = table.lock(name)
	assert.ErrorIs(t, err, ErrLocked)
	_, err = table.lock(filepath.Join(dir, "sub", "..", "LOCK"))
	assert.ErrorIs(t, err, ErrLocked, "another spelling of the same path")
	_, err = table.lock(filepath.Join(dir, "nodir", "LOCK"))
	assert.ErrorIs(t, err, fs.ErrNotExist)

	other, err := table.lock(filepath.Join(dir, "OTHER"))
	require.NoError(t, err)
	require.NoError(t, l.Close())
	assert.ErrorIs(t, l.Close(), fs.ErrClosed)
	l, err = table.lock(name)
	require.NoError(t, err, "released")
	require.NoError(t, l.Close())
	require.NoError(t, other.Close())
	assert.Empty(t, table.held)
}
