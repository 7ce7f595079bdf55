package jsonscan

import "encoding/binary"

// stringRun finds the first byte at or after i that is not strSafe, for a
// string whose first word had none: it returns the offset j of a word of
// s that holds it, the word, and a mask m whose first flagged byte is it
// (as stopBytes flags it), so that it is at j + bits.TrailingZeros64(m)/8;
// or, when no such byte comes before the
// last eight bytes of s, an offset within them from which the caller
// looks at the last bytes (lastBytes), and a zero mask. The bulk goes
// sixteen bytes at a time (SSE2 on amd64, stringrun_amd64.s: a loop of 17
// instructions where the word loop inlined in fastScan ran 27 a word,
// since a function as large as fastScan spills and reloads its registers
// in its loops; two words at a time elsewhere, stringRunGo). It is
// declared in stringrun_amd64.go and stringrun_other.go.
//
//	func stringRun(s []byte, i int) (j int, x uint64, m uint64)

// stringRunGo is stringRun in Go, two words at a time: the version for
// processors without stringrun_amd64.s, which TestStringRun also checks
// on amd64.
func stringRunGo(s []byte, i int) (int, uint64, uint64) {
	for ; len(s)-i >= 16; i += 16 {
		w := s[i : i+16 : i+16]
		if x := binary.LittleEndian.Uint64(w); stopBytes(x) != 0 {
			return i, x, stopBytes(x)
		}
		if x := binary.LittleEndian.Uint64(w[8:]); stopBytes(x) != 0 {
			return i + 8, x, stopBytes(x)
		}
	}
	if len(s)-i >= 8 {
		if x := binary.LittleEndian.Uint64(s[i:]); stopBytes(x) != 0 {
			return i, x, stopBytes(x)
		}
		i += 8
	}
	return i, 0, 0
}
