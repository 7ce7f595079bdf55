//go:build linux && (amd64 || arm64)

package vfs

// CopyInOrder exposes copyInOrder to the tests.
var CopyInOrder = copyInOrder
