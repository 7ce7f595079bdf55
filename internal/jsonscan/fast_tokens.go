package jsonscan

import "unicode/utf8"

// The fast path's scanners for the tokens it does not scan inline. Like
// fastScan, they build no errors: they return a negative offset for
// anything they do not accept.

// kindOf maps the first byte of a valid value to its kind.
var kindOf = func() (t [256]Kind) {
	t['"'] = KindString
	t['{'] = KindObject
	t['['] = KindArray
	t['t'] = KindTrue
	t['f'] = KindFalse
	t['n'] = KindNull
	t['-'] = KindNumber
	for c := '0'; c <= '9'; c++ {
		t[c] = KindNumber
	}
	return t
}()

// Literals as little-endian words, each compared with one load.
const (
	wordTrue = 't' | 'r'<<8 | 'u'<<16 | 'e'<<24
	wordNull = 'n' | 'u'<<8 | 'l'<<16 | 'l'<<24
	wordAlse = 'a' | 'l'<<8 | 's'<<16 | 'e'<<24 // "false" after its 'f'
)

// stringTail scans the rest of a string from s[i] on, where stringStop
// stopped (no escape seen so far), and returns the offset just past the
// closing quote and whether the string has a backslash escape, or a
// negative offset if the string is not valid.
func stringTail(s []byte, i int) (int, bool) {
	esc := false
	for {
		i = stringStop(s, i)
		for uint(i) < uint(len(s)) && strSafe[s[i]] { // fewer than 8 bytes left
			i++
		}
		if uint(i) >= uint(len(s)) {
			return -1, esc
		}
		switch c := s[i]; {
		case c == '"':
			return i + 1, esc
		case c == '\\':
			esc = true
			if len(s)-i < 2 {
				return -1, esc
			}
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(s)-i < 6 || !isHex[s[i+2]] || !isHex[s[i+3]] || !isHex[s[i+4]] || !isHex[s[i+5]] {
					return -1, esc
				}
				i += 6
			default:
				return -1, esc
			}
		case c >= utf8.RuneSelf:
			// A run of multibyte characters, checked as UTF-8 exactly as
			// scanString does. The sequences of two bytes (Latin, Greek,
			// Cyrillic...) and most of three (the rest of the BMP, CJK
			// included) are checked here: their lead byte alone says
			// that any continuation bytes make a valid sequence (not
			// for E0 and ED, which have narrower second bytes).
			for i < len(s) && s[i] >= utf8.RuneSelf {
				c := s[i]
				if 0xC2 <= c && c <= 0xDF && i+1 < len(s) && s[i+1]&0xC0 == 0x80 {
					i += 2
					continue
				}
				if 0xE1 <= c && c <= 0xEF && c != 0xED && i+2 < len(s) && s[i+1]&0xC0 == 0x80 && s[i+2]&0xC0 == 0x80 {
					i += 3
					continue
				}
				r, size := utf8.DecodeRune(s[i:])
				if r == utf8.RuneError && size == 1 {
					return -1, esc
				}
				i += size
			}
		default: // a control character
			return -1, esc
		}
	}
}

// exponentEnd returns the offset just past the exponent of a number that
// starts at s[i], which is 'e' or 'E', or -1 if it is not valid.
func exponentEnd(s []byte, i int) int {
	i++
	if uint(i) < uint(len(s)) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if uint(i) >= uint(len(s)) || s[i]-'0' >= 10 {
		return -1
	}
	return digitsEnd(s, i+1)
}
