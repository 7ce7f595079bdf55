package vfs

// The real file system, as the os package gives it, with three platform
// differences kept in their own files:
//
//   - File.Sync is fdatasync(2) on Linux (sync_linux.go) and os.File.Sync
//     elsewhere (sync_other.go; F_FULLFSYNC on macOS, FlushFileBuffers on
//     Windows). File.WriteBack is sync_file_range(2) on 64-bit Linux
//     (writeback_linux.go) and does nothing elsewhere (writeback_other.go).
//   - FS.Lock is flock(2) where the syscall package has it (lock_flock.go),
//     together with a lock table inside the process that keys a lock by its
//     directory's device and inode and its name (locktable.go), so that in
//     one process it outlives its file and is found through any path; the
//     table alone elsewhere (lock_other.go), keyed by the directory's path
//     with symbolic links evaluated where there are no inode numbers.
//   - On Windows, SyncDir only checks that the directory exists (a
//     directory cannot be flushed there; NTFS journals its metadata), and
//     files are not opened with O_APPEND, because Windows then denies
//     Truncate; Write seeks to the end first instead, which is an append as
//     long as one File at a time writes the file (the durable mode has one
//     writer; concurrent writers through several Files can interleave).
//
// Errors are those of the os package: *fs.PathError (or *os.LinkError for
// Rename) naming the path, matchable with errors.Is against fs.ErrNotExist,
// fs.ErrClosed, syscall.ENOSPC and the like.

import (
	"io"
	"os"
	"runtime"
)

// OS is the real file system, through the os package. It has no state; it
// is a variable only because an interface value cannot be a constant, and
// nothing may assign to it.
//
// Files are created with mode 0600 and directories with mode 0700 (less the
// umask). OS is safe for concurrent use; so is each File it opens, as an
// *os.File is, except that concurrent Read calls share one offset.
var OS FS = osFS{}

// emulateAppend is true where files are opened without O_APPEND and Write
// seeks to the end itself; see the top of this file.
const emulateAppend = runtime.GOOS == "windows"

// appendFlag is O_APPEND where the platform's O_APPEND allows Truncate.
var appendFlag = func() int {
	if emulateAppend {
		return 0
	}
	return os.O_APPEND
}()

type osFS struct{}

func (osFS) Create(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC|appendFlag, 0o600)
	if err != nil {
		return nil, err
	}
	return &osFile{f: f}, nil
}

func (osFS) Open(name string) (File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return &osFile{f: f}, nil
}

func (osFS) OpenAppend(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|appendFlag, 0)
	if err != nil {
		return nil, err
	}
	return &osFile{f: f}, nil
}

func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }

func (osFS) Remove(name string) error { return os.Remove(name) }

func (osFS) MkdirAll(dir string) error { return os.MkdirAll(dir, 0o700) }

func (osFS) List(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if runtime.GOOS == "windows" {
		return d.Close()
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return err
	}
	return d.Close()
}

func (osFS) Lock(name string) (io.Closer, error) { return lockFile(name) }

// osFile is a File on an *os.File.
type osFile struct {
	f *os.File
}

func (f *osFile) Read(p []byte) (int, error)              { return f.f.Read(p) }
func (f *osFile) ReadAt(p []byte, off int64) (int, error) { return f.f.ReadAt(p, off) }
func (f *osFile) Write(p []byte) (int, error)             { return write(f.f, p) }
func (f *osFile) Close() error                            { return f.f.Close() }
func (f *osFile) Sync() error                             { return datasync(f.f) }
func (f *osFile) Truncate(size int64) error               { return f.f.Truncate(size) }
func (f *osFile) WriteBack(off, n int64) error            { return writeBack(f.f, off, n) }

func (f *osFile) Size() (int64, error) {
	fi, err := f.f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// write appends p to f: with O_APPEND the kernel puts it at the end; where
// emulateAppend is set, a seek to the end comes first.
func write(f *os.File, p []byte) (int, error) {
	if emulateAppend {
		if _, err := f.Seek(0, io.SeekEnd); err != nil {
			return 0, err
		}
	}
	return f.Write(p)
}
