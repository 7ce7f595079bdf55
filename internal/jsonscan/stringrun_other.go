//go:build !amd64

package jsonscan

// stopIndex16 returns the offset of the first byte of s that is not
// strSafe, or, if none of the first len(s)&^15 bytes is one, len(s)&^15:
// on amd64 sixteen bytes at a time (stringrun_amd64.s), elsewhere two
// words at a time (stopIndex16Go).
func stopIndex16(s []byte) int { return stopIndex16Go(s) }
