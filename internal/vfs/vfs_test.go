package vfs_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"path"
	"runtime"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/ttlstore/ttlstore/internal/vfs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// filesystems are the FS implementations the conformance suite runs on,
// each with a fresh, empty, existing directory to work in.
var filesystems = []struct {
	name string
	new  func(t *testing.T) (vfs.FS, string)
}{
	{"OS", func(t *testing.T) (vfs.FS, string) { return vfs.OS, t.TempDir() }},
	{"MemFS", func(t *testing.T) (vfs.FS, string) {
		m := vfs.NewMemFS()
		require.NoError(t, m.MkdirAll("/data/db"))
		return m, "/data/db"
	}},
}

// writeFile creates name with data, synced and closed.
func writeFile(t *testing.T, fsys vfs.FS, name, data string) {
	t.Helper()
	f, err := fsys.Create(name)
	require.NoError(t, err)
	n, err := f.Write([]byte(data))
	require.NoError(t, err)
	require.Equal(t, len(data), n)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
}

// assertLocked checks that Lock of name fails with ErrLocked; a lock it
// gets nonetheless is released.
func assertLocked(t *testing.T, fsys vfs.FS, name, msg string) {
	t.Helper()
	l, err := fsys.Lock(name)
	if err == nil {
		l.Close()
	}
	assert.ErrorIs(t, err, vfs.ErrLocked, msg)
}

// readFile returns the contents of name, read with Open and Read.
func readFile(t *testing.T, fsys vfs.FS, name string) string {
	t.Helper()
	f, err := fsys.Open(name)
	require.NoError(t, err)
	defer f.Close()
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	return string(b)
}

func write(t *testing.T, f vfs.File, data string) {
	t.Helper()
	n, err := f.Write([]byte(data))
	require.NoError(t, err)
	require.Equal(t, len(data), n)
}

// TestConformance runs the same contract against OS and MemFS.
func TestConformance(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, fsys vfs.FS, dir string)
	}{
		{"create write read back", func(t *testing.T, fsys vfs.FS, dir string) {
			name := path.Join(dir, "f")
			f, err := fsys.Create(name)
			require.NoError(t, err)
			write(t, f, "hello ")
			write(t, f, "world")
			size, err := f.Size()
			require.NoError(t, err)
			assert.Equal(t, int64(11), size)
			buf := make([]byte, 5)
			n, err := f.ReadAt(buf, 6)
			require.NoError(t, err)
			assert.Equal(t, "world", string(buf[:n]))
			// Appending moved the offset to the end, as O_APPEND does.
			n, err = f.Read(buf)
			assert.Equal(t, 0, n)
			assert.ErrorIs(t, err, io.EOF)
			require.NoError(t, f.Close())
			assert.Equal(t, "hello world", readFile(t, fsys, name))
		}},
		{"write back changes nothing and fails once closed", func(t *testing.T, fsys vfs.FS, dir string) {
			name := path.Join(dir, "f")
			f, err := fsys.Create(name)
			require.NoError(t, err)
			write(t, f, "hello world")
			require.NoError(t, f.WriteBack(0, 5))
			require.NoError(t, f.WriteBack(5, 6))
			require.NoError(t, f.WriteBack(0, 0)) // sync_file_range: to the end
			write(t, f, "!")
			require.NoError(t, f.Close())
			assert.Equal(t, "hello world!", readFile(t, fsys, name))
			if fsys != vfs.OS || runtime.GOOS == "linux" {
				assert.ErrorIs(t, f.WriteBack(0, 1), fs.ErrClosed)
			}
		}},
		{"open append reads from the start and appends", func(t *testing.T, fsys vfs.FS, dir string) {
			name := path.Join(dir, "f")
			writeFile(t, fsys, name, "abc")
			f, err := fsys.OpenAppend(name)
			require.NoError(t, err)
			buf := make([]byte, 2)
			n, err := f.Read(buf)
			require.NoError(t, err)
			assert.Equal(t, "ab", string(buf[:n]))
			write(t, f, "def")
			require.NoError(t, f.Sync())
			require.NoError(t, f.Close())
			assert.Equal(t, "abcdef", readFile(t, fsys, name))
		}},
		{"read at the end", func(t *testing.T, fsys vfs.FS, dir string) {
			name := path.Join(dir, "f")
			writeFile(t, fsys, name, "abc")
			f, err := fsys.Open(name)
			require.NoError(t, err)
			defer f.Close()
			for _, c := range []struct {
				off  int64
				size int
				want string
				err  error
			}{
				{0, 3, "abc", nil},
				{1, 4, "bc", io.EOF},
				{3, 2, "", io.EOF},
				{10, 2, "", io.EOF},
				{10, 0, "", nil},
			} {
				buf := make([]byte, c.size)
				n, err := f.ReadAt(buf, c.off)
				assert.Equal(t, c.want, string(buf[:n]), "ReadAt(%d bytes, %d)", c.size, c.off)
				assert.Equal(t, c.err, err, "ReadAt(%d bytes, %d)", c.size, c.off)
			}
			_, err = f.ReadAt(make([]byte, 1), -1)
			assert.Error(t, err)
		}},
		{"truncate then append", func(t *testing.T, fsys vfs.FS, dir string) {
			name := path.Join(dir, "f")
			f, err := fsys.Create(name)
			require.NoError(t, err)
			write(t, f, "abcdef")
			require.NoError(t, f.Sync())
			require.NoError(t, f.Truncate(3))
			size, err := f.Size()
			require.NoError(t, err)
			assert.Equal(t, int64(3), size)
			write(t, f, "XY")
			require.NoError(t, f.Truncate(7))
			require.NoError(t, f.Close())
			assert.Equal(t, "abcXY\x00\x00", readFile(t, fsys, name))
		}},
		{"create truncates an existing file", func(t *testing.T, fsys vfs.FS, dir string) {
			name := path.Join(dir, "f")
			writeFile(t, fsys, name, "old content")
			f, err := fsys.Create(name)
			require.NoError(t, err)
			size, err := f.Size()
			require.NoError(t, err)
			assert.Equal(t, int64(0), size)
			write(t, f, "new")
			require.NoError(t, f.Close())
			assert.Equal(t, "new", readFile(t, fsys, name))
		}},
		{"rename replaces", func(t *testing.T, fsys vfs.FS, dir string) {
			tmp, final := path.Join(dir, "snap.tmp"), path.Join(dir, "snap")
			writeFile(t, fsys, final, "old")
			writeFile(t, fsys, tmp, "new")
			require.NoError(t, fsys.Rename(tmp, final))
			require.NoError(t, fsys.SyncDir(dir))
			assert.Equal(t, "new", readFile(t, fsys, final))
			_, err := fsys.Open(tmp)
			assert.ErrorIs(t, err, fs.ErrNotExist)
			names, err := fsys.List(dir)
			require.NoError(t, err)
			assert.Equal(t, []string{"snap"}, names)
		}},
		{"rename errors", func(t *testing.T, fsys vfs.FS, dir string) {
			err := fsys.Rename(path.Join(dir, "missing"), path.Join(dir, "x"))
			assert.ErrorIs(t, err, fs.ErrNotExist)
			writeFile(t, fsys, path.Join(dir, "f"), "f")
			err = fsys.Rename(path.Join(dir, "f"), path.Join(dir, "nodir", "f"))
			assert.ErrorIs(t, err, fs.ErrNotExist)
			require.NoError(t, fsys.MkdirAll(path.Join(dir, "sub")))
			err = fsys.Rename(path.Join(dir, "f"), path.Join(dir, "sub"))
			assert.ErrorIs(t, err, syscall.EEXIST)
			assert.Equal(t, "f", readFile(t, fsys, path.Join(dir, "f")))
		}},
		{"remove", func(t *testing.T, fsys vfs.FS, dir string) {
			name := path.Join(dir, "f")
			writeFile(t, fsys, name, "abc")
			require.NoError(t, fsys.Remove(name))
			_, err := fsys.Open(name)
			assert.ErrorIs(t, err, fs.ErrNotExist)
			assert.ErrorIs(t, fsys.Remove(name), fs.ErrNotExist)
			names, err := fsys.List(dir)
			require.NoError(t, err)
			assert.Empty(t, names)
			require.NoError(t, fsys.MkdirAll(path.Join(dir, "sub", "deeper")))
			assert.ErrorIs(t, fsys.Remove(path.Join(dir, "sub")), syscall.ENOTEMPTY)
			require.NoError(t, fsys.Remove(path.Join(dir, "sub", "deeper")))
			require.NoError(t, fsys.Remove(path.Join(dir, "sub")))
		}},
		{"list is sorted", func(t *testing.T, fsys vfs.FS, dir string) {
			for _, n := range []string{"c", "a", "b10", "b2"} {
				writeFile(t, fsys, path.Join(dir, n), n)
			}
			require.NoError(t, fsys.MkdirAll(path.Join(dir, "sub", "deeper", "x")))
			require.NoError(t, fsys.MkdirAll(path.Join(dir, "sub", "deeper"))) // exists: fine
			names, err := fsys.List(dir)
			require.NoError(t, err)
			assert.Equal(t, []string{"a", "b10", "b2", "c", "sub"}, names)
			names, err = fsys.List(path.Join(dir, "sub"))
			require.NoError(t, err)
			assert.Equal(t, []string{"deeper"}, names)
			names, err = fsys.List(path.Join(dir, "sub", "deeper", "x"))
			require.NoError(t, err)
			assert.Empty(t, names)
		}},
		{"missing files and directories", func(t *testing.T, fsys vfs.FS, dir string) {
			missing := path.Join(dir, "missing")
			inMissing := path.Join(dir, "nodir", "f")
			_, err := fsys.Open(missing)
			assert.ErrorIs(t, err, fs.ErrNotExist, "Open")
			_, err = fsys.OpenAppend(missing)
			assert.ErrorIs(t, err, fs.ErrNotExist, "OpenAppend")
			_, err = fsys.Create(inMissing)
			assert.ErrorIs(t, err, fs.ErrNotExist, "Create")
			_, err = fsys.List(missing)
			assert.ErrorIs(t, err, fs.ErrNotExist, "List")
			assert.ErrorIs(t, fsys.SyncDir(missing), fs.ErrNotExist, "SyncDir")
			_, err = fsys.Lock(inMissing)
			assert.ErrorIs(t, err, fs.ErrNotExist, "Lock")
		}},
		{"mkdirall through a file", func(t *testing.T, fsys vfs.FS, dir string) {
			writeFile(t, fsys, path.Join(dir, "f"), "f")
			err := fsys.MkdirAll(path.Join(dir, "f", "g"))
			assert.ErrorIs(t, err, syscall.ENOTDIR)
		}},
		{"open is read only", func(t *testing.T, fsys vfs.FS, dir string) {
			name := path.Join(dir, "f")
			writeFile(t, fsys, name, "abc")
			f, err := fsys.Open(name)
			require.NoError(t, err)
			n, err := f.Write([]byte("def"))
			assert.Error(t, err)
			assert.Equal(t, 0, n)
			assert.Error(t, f.Truncate(1))
			require.NoError(t, f.Close())
			assert.Equal(t, "abc", readFile(t, fsys, name))
		}},
		{"closed file", func(t *testing.T, fsys vfs.FS, dir string) {
			f, err := fsys.Create(path.Join(dir, "f"))
			require.NoError(t, err)
			require.NoError(t, f.Close())
			_, err = f.Write([]byte("x"))
			assert.ErrorIs(t, err, fs.ErrClosed, "Write")
			_, err = f.Read(make([]byte, 1))
			assert.ErrorIs(t, err, fs.ErrClosed, "Read")
			_, err = f.ReadAt(make([]byte, 1), 0)
			assert.ErrorIs(t, err, fs.ErrClosed, "ReadAt")
			assert.ErrorIs(t, f.Sync(), fs.ErrClosed, "Sync")
			assert.ErrorIs(t, f.Truncate(0), fs.ErrClosed, "Truncate")
			_, err = f.Size()
			assert.ErrorIs(t, err, fs.ErrClosed, "Size")
			assert.ErrorIs(t, f.Close(), fs.ErrClosed, "Close")
		}},
		{"lock conflicts and release", func(t *testing.T, fsys vfs.FS, dir string) {
			name := path.Join(dir, "LOCK")
			l1, err := fsys.Lock(name)
			require.NoError(t, err)
			_, err = fsys.Lock(name)
			assert.ErrorIs(t, err, vfs.ErrLocked)
			_, err = fsys.Lock(path.Join(dir, ".", "LOCK"))
			assert.ErrorIs(t, err, vfs.ErrLocked, "same file, another spelling")
			other, err := fsys.Lock(path.Join(dir, "OTHER"))
			require.NoError(t, err)
			names, err := fsys.List(dir)
			require.NoError(t, err)
			assert.Equal(t, []string{"LOCK", "OTHER"}, names, "Lock creates the file")
			require.NoError(t, l1.Close())
			assert.ErrorIs(t, l1.Close(), fs.ErrClosed)
			l2, err := fsys.Lock(name)
			require.NoError(t, err, "released")
			require.NoError(t, l2.Close())
			require.NoError(t, other.Close())
		}},
		{"lock outlives its file", func(t *testing.T, fsys vfs.FS, dir string) {
			// A lock is on the name in its directory, not on the file
			// that happens to be there: removing or replacing the file
			// does not free it for another holder in this process.
			name := path.Join(dir, "LOCK")
			l, err := fsys.Lock(name)
			require.NoError(t, err)
			require.NoError(t, fsys.Remove(name))
			assertLocked(t, fsys, name, "the file was removed")
			writeFile(t, fsys, path.Join(dir, "new"), "")
			require.NoError(t, fsys.Rename(path.Join(dir, "new"), name))
			assertLocked(t, fsys, name, "another file took its name")
			require.NoError(t, l.Close())
			l, err = fsys.Lock(name)
			require.NoError(t, err, "released")
			require.NoError(t, l.Close())
		}},
		{"lock keeps an existing file", func(t *testing.T, fsys vfs.FS, dir string) {
			name := path.Join(dir, "LOCK")
			writeFile(t, fsys, name, "pid 42")
			l, err := fsys.Lock(name)
			require.NoError(t, err)
			require.NoError(t, l.Close())
			assert.Equal(t, "pid 42", readFile(t, fsys, name))
		}},
		{"concurrent appends stay whole", func(t *testing.T, fsys vfs.FS, dir string) {
			name := path.Join(dir, "log")
			writeFile(t, fsys, name, "")
			const writers, records, size = 8, 50, 16
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					f, err := fsys.OpenAppend(name)
					if err != nil {
						errs <- err
						return
					}
					defer f.Close()
					rec := bytes.Repeat([]byte{byte('a' + w)}, size)
					for range records {
						if _, err := f.Write(rec); err != nil {
							errs <- err
							return
						}
					}
					errs <- f.Sync()
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			got := readFile(t, fsys, name)
			require.Len(t, got, writers*records*size)
			count := map[byte]int{}
			for i := 0; i < len(got); i += size {
				rec := got[i : i+size]
				require.Equal(t, string(bytes.Repeat([]byte{rec[0]}, size)), rec, "record at %d", i)
				count[rec[0]]++
			}
			for w := range writers {
				assert.Equal(t, records, count[byte('a'+w)])
			}
		}},
	}
	for _, fsc := range filesystems {
		t.Run(fsc.name, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					fsys, dir := fsc.new(t)
					c.run(t, fsys, dir)
				})
			}
		})
	}
}

// TestOSErrorsNamePaths checks that OS errors say which file they are about.
func TestOSErrorsNamePaths(t *testing.T) {
	missing := path.Join(t.TempDir(), "missing")
	_, err := vfs.OS.Open(missing)
	var pe *fs.PathError
	require.True(t, errors.As(err, &pe), "%T", err)
	assert.Equal(t, missing, pe.Path)
	assert.Contains(t, err.Error(), missing)
}
