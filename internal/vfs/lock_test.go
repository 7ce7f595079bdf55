package vfs_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore/internal/vfs"
)

// TestOSLockThroughSymlink: a directory reached through a symbolic link is
// the same directory, so OS.Lock of a name in it conflicts with a lock
// taken through the real path, in this process, even once the locked file
// is removed (when no flock could tell: a new file has a new inode).
func TestOSLockThroughSymlink(t *testing.T) {
	for _, tt := range []struct {
		name   string
		remove bool // remove the locked file before locking again
	}{
		{"file in place", false},
		{"file removed", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			real := filepath.Join(dir, "real")
			link := filepath.Join(dir, "link")
			require.NoError(t, os.Mkdir(real, 0o700))
			if err := os.Symlink(real, link); err != nil {
				t.Skipf("no symbolic links here: %v", err)
			}
			l, err := vfs.OS.Lock(filepath.Join(real, "LOCK"))
			require.NoError(t, err)
			if tt.remove {
				require.NoError(t, os.Remove(filepath.Join(real, "LOCK")))
			}
			for _, name := range []string{
				filepath.Join(link, "LOCK"),
				filepath.Join(real, "LOCK"),
			} {
				assertLocked(t, vfs.OS, name, name)
			}
			require.NoError(t, l.Close())
			l, err = vfs.OS.Lock(filepath.Join(link, "LOCK"))
			require.NoError(t, err, "released")
			require.NoError(t, l.Close())
		})
	}
}
