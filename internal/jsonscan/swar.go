package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// SWAR ("SIMD within a register"): eight input bytes are loaded as one
// little-endian uint64 and classified together with a handful of integer
// operations, instead of one comparison and branch per byte. Each
// classifier returns a mask with the high bit of a byte set where that byte
// is of interest, so the first one is at bits.TrailingZeros64(mask)/8.
//
// The classifiers subtract or add a constant from every byte at once; a
// borrow or carry then crosses into the next byte only out of a byte that
// is itself flagged. Bytes above the first flagged byte may thus be flagged
// spuriously, but the lowest flagged byte, which is all the callers use,
// is exact, and the mask is zero exactly when no byte is of interest.
// swar_internal_test.go checks each classifier against a byte table for
// every byte value in every position.

const (
	lsb = 0x0101010101010101 // the low bit of every byte
	msb = 0x8080808080808080 // the high bit of every byte
)

// stopBytes flags the bytes of x (eight string bytes) that are not strSafe:
// control characters, '"', '\\' and the bytes above 0x7F, which the
// string scanners check as UTF-8.
//
// For a byte c below 0x80 and no borrow from below: c-0x20 has its high bit
// set exactly when c < 0x20; (c^'"')-1 when c == '"'; (c^'\\')-1 when
// c == '\\'. Or-ing in x itself flags the bytes above 0x7F.
func stopBytes(x uint64) uint64 {
	q := x ^ ('"' * lsb)
	b := x ^ ('\\' * lsb)
	return ((x - 0x20*lsb) | (q - lsb) | (b - lsb) | x) & msb
}

// firstIsQuote reports whether the first byte flagged in m = stopBytes(x),
// m != 0, is '"'. That byte is exact both in m and in the equivalent mask
// of quote bytes, so no byte needs reloading.
func firstIsQuote(x, m uint64) bool {
	q := x ^ ('"' * lsb)
	return m&-m&(q-lsb)&^q != 0
}

// nonDigits flags the bytes of x that are not ASCII digits. For a byte c
// and no borrow or carry from below: c-'0' has its high bit set when
// c < '0' or c >= 0xB0, and c+0x46 when '9' < c < 0xBA; a carry out of a
// byte (c >= 0xBA) only leaves a byte already flagged by c-'0'.
func nonDigits(x uint64) uint64 {
	return ((x - '0'*lsb) | (x + 0x46*lsb)) & msb
}

// stringStop returns the offset of the first byte at or after i that is
// not strSafe, looking a word at a time; when fewer than eight bytes are
// left before it finds one, it returns the offset where the word loop
// stopped and the caller goes on byte by byte. It is small enough to be
// inlined.
func stringStop(s []byte, i int) int {
	for len(s)-i >= 8 {
		if m := stopBytes(binary.LittleEndian.Uint64(s[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	return i
}

// digitsEnd returns the offset of the first byte at or after i that is not
// an ASCII digit, or len(s). It is small enough to be inlined.
func digitsEnd(s []byte, i int) int {
	for len(s)-i >= 8 {
		if m := nonDigits(binary.LittleEndian.Uint64(s[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < len(s) && s[i]-'0' < 10 {
		i++
	}
	return i
}

// lastBytes returns the bytes of s from i on, of which there are fewer than
// eight, as a little-endian word whose other bytes are zero: it loads the
// last word of s and shifts the bytes before i out. s must have at least
// eight bytes, and i must be less than len(s). A zero byte is neither
// plain string content nor a digit, so the word scans stop at the end of
// s without a byte loop.
func lastBytes(s []byte, i int) uint64 {
	return binary.LittleEndian.Uint64(s[len(s)-8:]) >> (uint(8-(len(s)-i)) * 8 & 63)
}

// skipSpace is skipWS for the fast path: it returns the offset of the first
// byte at or after i that is not JSON whitespace, or len(s), and skips
// runs of spaces, such as indentation, a word at a time: in x^"        ",
// the spaces are the zero bytes, so the first byte that is not a space is
// the lowest byte that is not zero.
func skipSpace(s []byte, i int) int {
	for uint(i) < uint(len(s)) {
		c := s[i]
		if c > ' ' || wsBits>>(c&63)&1 == 0 {
			break
		}
		if c == ' ' && len(s)-i >= 8 {
			if y := binary.LittleEndian.Uint64(s[i:]) ^ ' '*lsb; y != 0 {
				i += bits.TrailingZeros64(y) >> 3
			} else {
				i += 8
			}
			continue
		}
		i++
	}
	return i
}

// wsBits has bit c set for each JSON whitespace byte c.
const wsBits uint64 = 1<<' ' | 1<<'\n' | 1<<'\r' | 1<<'\t'
