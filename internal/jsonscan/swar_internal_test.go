package jsonscan

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestSpecialBytes checks the word-at-a-time string scan (stopBytes and
// firstIsQuote) against the byte table for every byte value in every
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

// forEachWord calls check with words that have every byte value in every
// position, after plain bytes and before various bytes, and with random
// words.
func forEachWord(plain byte, check func(w [8]byte)) {
	for pos := 0; pos < 8; pos++ {
		for c := 0; c < 256; c++ {
			for _, fill := range []byte{plain, 0, 1, '0', '9', ' ', '"', '#', '\\', ']', 0x1f, 0x7f, 0x80, 0xb9, 0xba, 0xff} {
				var w [8]byte
				for j := range w {
					w[j] = plain
				}
				w[pos] = byte(c)
				for j := pos + 1; j < 8; j++ {
					w[j] = fill
				}
				check(w)
			}
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 1 << 20 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], r.Uint64())
		check(w)
	}
}

func TestNonDigits(t *testing.T) {
	forEachWord('5', func(w [8]byte) {
		first := 8
		for j, c := range w {
			if c < '0' || c > '9' {
				first = j
				break
			}
		}
		m := nonDigits(binary.LittleEndian.Uint64(w[:]))
		got := 8
		if m != 0 {
			got = bits.TrailingZeros64(m) >> 3
		}
		if got != first {
			t.Fatalf("nonDigits(%q): first non-digit %d, want %d", w[:], got, first)
		}
	})
}

func TestWordScans(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	alphabet := []byte("aZ09 \t\n\r\"\\\x00\x1f\x7f\x80\xff.,:{}[]")
	for range 20000 {
		s := make([]byte, r.IntN(40))
		for j := range s {
			if r.IntN(3) == 0 {
				s[j] = alphabet[r.IntN(len(alphabet))]
			} else {
				s[j] = "abcdefgh      01234567"[r.IntN(22)]
			}
		}
		for i := 0; i <= len(s); i++ {
			// stringStop stops at the first byte that is not strSafe, or
			// where fewer than eight bytes are left before it.
			want := i
			for want < len(s) && strSafe[s[want]] {
				want++
			}
			if got := stringStop(s, i); got > want || got < want && len(s)-got >= 8 {
				t.Fatalf("stringStop(%q, %d) = %d, want %d", s, i, got, want)
			}
			want = i
			for want < len(s) && '0' <= s[want] && s[want] <= '9' {
				want++
			}
			if got := digitsEnd(s, i); got != want {
				t.Fatalf("digitsEnd(%q, %d) = %d, want %d", s, i, got, want)
			}
			if got, want := skipSpace(s, i), skipWS(s, i); got != want {
				t.Fatalf("skipSpace(%q, %d) = %d, want %d", s, i, got, want)
			}
			if len(s) >= 8 && i < len(s) && len(s)-i < 8 {
				var w [8]byte
				copy(w[:], s[i:])
				if got, want := lastBytes(s, i), binary.LittleEndian.Uint64(w[:]); got != want {
					t.Fatalf("lastBytes(%q, %d) = %#x, want %#x", s, i, got, want)
				}
			}
		}
	}
}

// TestStringRun checks stringRun (SSE2 on amd64) and stringRunGo against
// the byte table, with every byte value at every position of strings of
// up to 50 bytes, from every start for the bytes that matter most.
func TestStringRun(t *testing.T) {
	plain := []byte("abcdefghijklmnopqrstuvwxyz0123456789 ABCDEFGHIJKLMNOP")
	for n := 0; n <= 50; n++ {
		for pos := -1; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				if pos < 0 && c > 0 {
					break
				}
				s := append([]byte(nil), plain[:n]...)
				if pos >= 0 {
					s[pos] = byte(c)
				}
				starts := n
				if pos >= 0 && !strings.ContainsRune("\x00\x1f !\"\\\x7f", rune(c)) && c != 0x80 && c != 0xff {
					starts = 0 // every start only for these bytes
				}
				for i := 0; i <= starts; i++ {
					checkStringRun(t, "stringRun", stringRun, s, i)
					checkStringRun(t, "stringRunGo", stringRunGo, s, i)
				}
			}
		}
	}
}

// checkStringRun checks run(s, i): a word of s and a mask whose first
// flagged byte is the first byte at or after i that is not strSafe, or a
// zero mask and an offset within the last eight bytes of s that no such
// byte comes before.
func checkStringRun(t *testing.T, name string, run func([]byte, int) (int, uint64, uint64), s []byte, i int) {
	t.Helper()
	first := i
	for first < len(s) && strSafe[s[first]] {
		first++
	}
	j, x, m := run(s, i)
	switch {
	case m != 0:
		if len(s)-j < 8 || x != binary.LittleEndian.Uint64(s[j:]) || j+bits.TrailingZeros64(m)>>3 != first {
			t.Fatalf("%s(%q, %d) = %d, %#x, %#x; first stop at %d", name, s, i, j, x, m, first)
		}
	case j > first || len(s)-j >= 8 || j < i:
		t.Fatalf("%s(%q, %d) = %d with no stop; first stop at %d", name, s, i, j, first)
	}
}
