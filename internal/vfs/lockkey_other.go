//go:build !unix

package vfs

// lockKeyOf returns the key of the lock file name: where the syscall
// package gives no inode numbers, its directory's absolute path with
// symbolic links evaluated, and its base name.
func lockKeyOf(name string) (lockKey, error) { return pathKey(name) }
