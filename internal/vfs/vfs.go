// Package vfs is the one seam between ttlstore's durable mode and the disk:
// the few file-system calls its log and snapshots need, so that tests can
// crash it, tear its writes, fail its fsyncs and fill its disk.
//
// Two implementations live here: OS, the real file system, and MemFS, an
// in-memory file system that remembers what was synced and can be reset to
// exactly that state (a crash), optionally keeping a random part of what was
// not synced (a torn write), and that can fail any operation on demand.
//
// A File may also be a Mapper (mapped.go): it can append through a shared
// memory mapping, with no system call an append.
//
// Names are slash-separated paths as the os package takes them. Every file
// is created with mode 0600 and every directory with mode 0700.
package vfs

import (
	"errors"
	"io"
)

// File is an open file. Writes go to the end of the file (files are opened
// for appending); reads go anywhere with ReadAt, or from the start with Read.
type File interface {
	io.Reader
	io.ReaderAt
	// Write appends p. On error, a prefix of p may have been written (a
	// short write, as with a full disk).
	io.Writer
	io.Closer
	// Sync makes everything written so far durable (fdatasync where the
	// platform has it). After a Sync that failed, nothing about what was
	// written since the last successful Sync may be assumed.
	Sync() error
	// WriteBack writes the bytes [off, off+n) of the file to the device
	// and waits until they are written (sync_file_range(2) on Linux, on
	// 64-bit platforms; nothing elsewhere), without the metadata or the
	// device cache flush that Sync adds: it makes nothing durable. A
	// writer of a large file calls it as it goes, so that the kernel
	// never holds much of that file unwritten and a Sync of another file
	// (a log's) does not queue behind it. After an error, nothing about
	// what was written may be assumed, as after a failed Sync.
	WriteBack(off, n int64) error
	// Truncate cuts the file to size bytes; later writes append after it.
	Truncate(size int64) error
	// Size returns the file's current size in bytes.
	Size() (int64, error)
}

// FS is a file system.
type FS interface {
	// Create creates the file name, or truncates it if it exists, and
	// opens it for reading and appending. The new directory entry is
	// durable only after SyncDir of its directory.
	Create(name string) (File, error)
	// Open opens an existing file for reading only.
	Open(name string) (File, error)
	// OpenAppend opens an existing file for reading and appending.
	OpenAppend(name string) (File, error)
	// Rename renames oldname to newname, replacing newname if it exists,
	// atomically. It is durable only after SyncDir of the directory.
	Rename(oldname, newname string) error
	// Remove removes the file name. It is durable only after SyncDir.
	Remove(name string) error
	// MkdirAll creates the directory dir and any missing parents.
	MkdirAll(dir string) error
	// List returns the names (not paths) of the entries of dir, sorted.
	List(dir string) ([]string, error)
	// SyncDir makes the directory's entries (creations, renames, removals)
	// durable.
	SyncDir(dir string) error
	// Lock takes an exclusive lock on the file name, creating it if
	// needed, and returns ErrLocked at once if another holder (in this
	// process or another) has it. Closing the returned Closer releases it;
	// so does the end of the process. Within one process the lock is on
	// the name in its directory, not on the file: removing or replacing
	// the file does not release it, and another path to the same
	// directory (a symbolic link) finds it. Against other processes, OS
	// relies on flock(2), which is on the file: once the file is removed,
	// another process can create a new one and lock it.
	Lock(name string) (io.Closer, error)
}

// ErrLocked is returned by FS.Lock when the lock is held elsewhere.
var ErrLocked = errors.New("vfs: locked by another holder")

// ErrInjected is the error MemFS returns for an operation a test made fail,
// unless the test chose another.
var ErrInjected = errors.New("vfs: injected fault")

// ErrCrashed is returned by every operation on a MemFS, and on the files and
// locks opened through it, after MemFS.Crash or MemFS.Kill replaced it with a
// new one: the process that used it is dead, and whatever its goroutines
// still try to do must neither reach the new file system nor panic.
var ErrCrashed = errors.New("vfs: file system crashed")
