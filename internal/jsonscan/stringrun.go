package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// stopIndex16Go is stopIndex16 in Go, two words at a time: the version for
// processors without stringrun_amd64.s, which TestStopIndex16 also checks
// on amd64.
func stopIndex16Go(s []byte) int {
	end := len(s) &^ 15
	for i := 0; i < end; i += 16 {
		w := s[i : i+16 : i+16]
		if m := stopBytes(binary.LittleEndian.Uint64(w)); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		if m := stopBytes(binary.LittleEndian.Uint64(w[8:])); m != 0 {
			return i + 8 + bits.TrailingZeros64(m)>>3
		}
	}
	return end
}
