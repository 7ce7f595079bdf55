//go:build unix

package vfs

import (
	"os"
	"path/filepath"
	"syscall"
)

// lockKeyOf returns the key of the lock file name: its directory's device
// and inode numbers, which every path to the directory shares (through
// symbolic links, or spelled differently), and its base name.
func lockKeyOf(name string) (lockKey, error) {
	fi, err := os.Stat(filepath.Dir(name))
	if err != nil {
		return lockKey{}, lockErr(name, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return pathKey(name)
	}
	return lockKey{dev: uint64(st.Dev), ino: uint64(st.Ino), base: filepath.Base(name)}, nil
}
