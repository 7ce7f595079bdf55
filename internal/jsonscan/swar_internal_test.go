package jsonscan

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// TestSpecialBytes checks the word-at-a-time string scan (stopBytes, which
// is specialBytes and the bytes above 0x7F, and firstIsQuote) against the byte table for every byte value in every
// position, followed by various bytes, and for random words.
func TestSpecialBytes(t *testing.T) {
	check := func(w [8]byte) {
		first := 8
		for j, c := range w {
			if !strSafe[c] {
				first = j
				break
			}
		}
		m := stopBytes(binary.LittleEndian.Uint64(w[:]))
		got := 8
		if m != 0 {
			got = bits.TrailingZeros64(m) >> 3
		}
		if got != first {
			t.Fatalf("stopBytes(%q): first special byte %d, want %d", w[:], got, first)
		}
		if m != 0 {
			if q := firstIsQuote(binary.LittleEndian.Uint64(w[:]), m); q != (w[first] == '"') {
				t.Fatalf("firstIsQuote(%q) = %v, first special byte %q", w[:], q, w[first])
			}
		}
	}
	for pos := 0; pos < 8; pos++ {
		for c := 0; c < 256; c++ {
			for _, fill := range []byte{'a', 0x80, 0xff, '!', '#', '[', ']', 0x1f, '"', '\\'} {
				var w [8]byte
				for j := range w {
					w[j] = 'a'
				}
				w[pos] = byte(c)
				for j := pos + 1; j < 8; j++ {
					w[j] = fill
				}
				check(w)
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 20 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], r.Uint64())
		check(w)
	}
}
