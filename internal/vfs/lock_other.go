//go:build !(darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd)

package vfs

import "io"

// lockFile locks name in processLocks, the lock table of this process: the
// syscall package has no flock(2) here (Windows, Solaris, AIX, Plan 9,
// wasm). The lock then guards only against holders in this process, not
// against another process opening the same directory; and it is released
// when the process ends only because the table goes with it.
func lockFile(name string) (io.Closer, error) { return processLocks.lock(name) }
