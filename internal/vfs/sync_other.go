//go:build !linux

package vfs

import "os"

// datasync flushes f with os.File.Sync: F_FULLFSYNC on macOS,
// FlushFileBuffers on Windows, fsync(2) elsewhere.
func datasync(f *os.File) error { return f.Sync() }
