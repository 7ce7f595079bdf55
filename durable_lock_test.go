package ttlstore_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/vfs"
)

// TestDurableLockedWithoutLockFile: a directory open in this process
// cannot be opened again in it, even after its LOCK file was removed, and
// whatever path leads to it (a symbolic link); Close releases it, and the
// first collection's writes are all there after it.
func TestDurableLockedWithoutLockFile(t *testing.T) {
	for _, tt := range []struct {
		name string
		// dirs returns the file system, the directory, and another path
		// to it; remove removes the LOCK file.
		dirs   func(t *testing.T) (fsys vfs.FS, dir, other string)
		remove func(t *testing.T, fsys vfs.FS, dir string)
	}{
		{"MemFS", func(t *testing.T) (vfs.FS, string, string) {
			return vfs.NewMemFS(), "db", "/./db"
		}, func(t *testing.T, fsys vfs.FS, dir string) {
			require.NoError(t, fsys.Remove(dir+"/LOCK"))
		}},
		{"OS", func(t *testing.T) (vfs.FS, string, string) {
			dir := filepath.Join(t.TempDir(), "db")
			return vfs.OS, dir, dir
		}, removeOSLock},
		{"OS through a symbolic link", func(t *testing.T) (vfs.FS, string, string) {
			dir := filepath.Join(t.TempDir(), "db")
			require.NoError(t, os.Mkdir(dir, 0o700))
			link := filepath.Join(t.TempDir(), "link")
			if err := os.Symlink(dir, link); err != nil {
				t.Skipf("no symbolic links here: %v", err)
			}
			return vfs.OS, dir, link
		}, removeOSLock},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fsys, dir, other := tt.dirs(t)
			opts := ttlstore.Options{Clock: newMock(), SweepInterval: ttlstore.ManualSweep}
			a, err := ttlstore.OpenFS(fsys, dir, opts, 1<<30, false)
			require.NoError(t, err)
			upsert(t, a, `{"id":"a1"}`)
			tt.remove(t, fsys, dir)
			for _, path := range []string{dir, other} {
				b, err := ttlstore.OpenFS(fsys, path, opts, 1<<30, false)
				if err == nil {
					b.Close()
				}
				assert.ErrorIs(t, err, ttlstore.ErrLocked, "a second Open through %s", path)
			}
			upsert(t, a, `{"id":"a2"}`)
			want := shownOf(a)
			require.NoError(t, a.Close())

			b, err := ttlstore.OpenFS(fsys, other, opts, 1<<30, false)
			require.NoError(t, err, "Close released the directory")
			defer b.Close()
			assert.True(t, shownOf(b).equal(want), "got %v, want %v", shownOf(b), want)
		})
	}
}

func removeOSLock(t *testing.T, _ vfs.FS, dir string) {
	require.NoError(t, os.Remove(filepath.Join(dir, "LOCK")))
}

// TestDurableFailedOpenReleasesDirectory: an Open that fails after taking
// the directory gives it back, so the next Open says what is wrong with
// the directory, not ErrLocked.
func TestDurableFailedOpenReleasesDirectory(t *testing.T) {
	dir := t.TempDir()
	bad := append([]byte("ttlstore"), make([]byte, 8)...) // a header with a bad CRC
	require.NoError(t, os.WriteFile(filepath.Join(dir, "0000000000000001.log"), bad, 0o600))
	opts := ttlstore.Options{Clock: newMock(), SweepInterval: ttlstore.ManualSweep}
	for range 2 {
		c, err := ttlstore.Open(dir, opts)
		if err == nil {
			c.Close()
		}
		require.ErrorIs(t, err, ttlstore.ErrCorrupt)
	}
	require.NoError(t, os.Remove(filepath.Join(dir, "0000000000000001.log")))
	c, err := ttlstore.Open(dir, opts)
	require.NoError(t, err)
	require.NoError(t, c.Close())
}
