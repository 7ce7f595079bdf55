package jsonscan

// stopIndex16 returns the offset of the first byte of s that is not
// strSafe, looking sixteen bytes at a time (SSE2, stringrun_amd64.s), or,
// if none of the first len(s)&^15 bytes is one, len(s)&^15.
//
//go:noescape
func stopIndex16(s []byte) int
