package patch

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// This file is the package's one JSON validator. Everything Apply copies
// into its output, the document's bytes and the operations' values, passes
// through scanValue or scanObject first, so the output is valid JSON
// whenever the engine's own writing is. The scanner checks strict RFC 8259
// grammar and UTF-8 (Go's rules: no surrogate halves, no overlong forms),
// never recurses (nesting is tracked on a byte stack, so a deep input cannot
// exhaust the goroutine stack) and does not allocate below 32 levels of
// nesting. scan_test.go checks it against encoding/json.Valid and
// utf8.Valid.

// syntaxError is a validation failure at byte offset off of the input.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string { return "offset " + strconv.Itoa(e.off) + ": " + e.msg }

func errAt(off int, msg string) *syntaxError { return &syntaxError{off, msg} }

// unexpected describes the byte at b[i], or the end of b.
func unexpected(b []byte, i int) *syntaxError {
	if i >= len(b) {
		return errAt(i, "unexpected end of JSON")
	}
	return errAt(i, "invalid character "+strconv.QuoteRune(rune(b[i])))
}

// wsBits has bit c set for each JSON whitespace byte c.
const wsBits uint64 = 1<<' ' | 1<<'\n' | 1<<'\r' | 1<<'\t'

func isWS(c byte) bool { return c <= ' ' && wsBits>>c&1 != 0 }

// skipWS returns the offset of the first byte at or after i that is not
// JSON whitespace, or len(b).
func skipWS(b []byte, i int) int {
	for i < len(b) && isWS(b[i]) {
		i++
	}
	return i
}

const (
	lsb = 0x0101010101010101 // the low bit of every byte
	msb = 0x8080808080808080 // the high bit of every byte
)

// stopBytes flags, with the high bit of each byte, the bytes of the
// little-endian word x that end a run of plain string content: control
// characters, '"', '\\' and bytes above 0x7F. A borrow can flag bytes above
// the first flagged one spuriously, never below it, so the lowest flagged
// byte is exact and the mask is zero exactly when no byte is flagged.
func stopBytes(x uint64) uint64 {
	q := x ^ ('"' * lsb)
	s := x ^ ('\\' * lsb)
	return ((x - 0x20*lsb) | (q - lsb) | (s - lsb) | x) & msb
}

// scanString validates the string whose opening quote is b[i] and returns
// the offset just past its closing quote, and whether it holds a backslash
// escape.
func scanString(b []byte, i int) (end int, escaped bool, err error) {
	i++
	for {
		for len(b)-i >= 8 {
			m := stopBytes(binary.LittleEndian.Uint64(b[i:]))
			if m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(b) {
			return 0, false, errAt(i, "unterminated string")
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, escaped, nil
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return 0, false, errAt(i, "unterminated string")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(b)-i < 6 || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return 0, false, errAt(i, `invalid \u escape`)
				}
				i += 6
			default:
				return 0, false, errAt(i, "invalid escape "+strconv.Quote(string(b[i:i+2])))
			}
		case c < 0x20:
			return 0, false, errAt(i, "control character in string")
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return 0, false, errAt(i, "invalid UTF-8")
			}
			i += size
		default:
			i++
		}
	}
}

func isHex(c byte) bool { return c-'0' < 10 || (c|0x20)-'a' < 6 }

func isDigit(c byte) bool { return c-'0' < 10 }

// scanNumber validates the number that starts at b[i] and returns the
// offset just past it, and whether it is written as an integer (no
// fraction, no exponent). What follows the number is the caller's to check.
func scanNumber(b []byte, i int) (end int, integer bool, err error) {
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i]-'1' < 9:
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	default:
		return 0, false, errAt(start, "invalid number")
	}
	integer = true
	if i < len(b) && b[i] == '.' {
		integer = false
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return 0, false, errAt(start, "invalid number")
		}
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	}
	if i < len(b) && b[i]|0x20 == 'e' {
		integer = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return 0, false, errAt(start, "invalid number")
		}
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	}
	return i, integer, nil
}

// scanLiteral checks that b[i:] begins with lit and returns the offset past it.
func scanLiteral(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, unexpected(b, i)
	}
	return i + len(lit), nil
}

// scanValue validates the JSON value that starts at b[i] (no whitespace
// before it) and returns the offset just past it, and whether whitespace
// occurs between its tokens (so that writing it compactly means dropping
// some). What follows the value is the caller's to check.
func scanValue(b []byte, i int) (end int, ws bool, err error) {
	var stackBuf [32]byte
	stack := stackBuf[:0] // '{' or '[' for each open container
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return 0, false, unexpected(b, i)
		}
		switch c := b[i]; {
		case c == '"':
			if i, _, err = scanString(b, i); err != nil {
				return 0, false, err
			}
		case c == '{' || c == '[':
			j := skipWS(b, i+1)
			ws = ws || j != i+1
			if j < len(b) && b[j] == c+2 { // '}' is '{'+2, ']' is '['+2
				i = j + 1
				break
			}
			stack = append(stack, c)
			if c == '[' {
				i = j
				continue
			}
			if i, err = scanKey(b, j, &ws); err != nil {
				return 0, false, err
			}
			continue
		case c == '-' || isDigit(c):
			if i, _, err = scanNumber(b, i); err != nil {
				return 0, false, err
			}
		case c == 't':
			if i, err = scanLiteral(b, i, "true"); err != nil {
				return 0, false, err
			}
		case c == 'f':
			if i, err = scanLiteral(b, i, "false"); err != nil {
				return 0, false, err
			}
		case c == 'n':
			if i, err = scanLiteral(b, i, "null"); err != nil {
				return 0, false, err
			}
		default:
			return 0, false, unexpected(b, i)
		}
		// A value ended at b[i]: close containers until one goes on.
		for {
			if len(stack) == 0 {
				return i, ws, nil
			}
			j := skipWS(b, i)
			ws = ws || j != i
			if j >= len(b) {
				return 0, false, unexpected(b, j)
			}
			top := stack[len(stack)-1]
			if b[j] == ',' {
				k := skipWS(b, j+1)
				ws = ws || k != j+1
				if top == '[' {
					i = k
				} else if i, err = scanKey(b, k, &ws); err != nil {
					return 0, false, err
				}
				break
			}
			if b[j] != top+2 {
				return 0, false, unexpected(b, j)
			}
			stack = stack[:len(stack)-1]
			i = j + 1
		}
	}
}

// scanKey validates an object member's key at b[i], the colon after it
// and the whitespace around the colon, and returns the offset of the
// member's value. It sets *ws when it skips whitespace.
func scanKey(b []byte, i int, ws *bool) (int, error) {
	if i >= len(b) || b[i] != '"' {
		return 0, unexpected(b, i)
	}
	i, _, err := scanString(b, i)
	if err != nil {
		return 0, err
	}
	j := skipWS(b, i)
	if j >= len(b) || b[j] != ':' {
		return 0, unexpected(b, j)
	}
	k := skipWS(b, j+1)
	if j != i || k != j+1 {
		*ws = true
	}
	return k, nil
}

// scanWhole validates b as one JSON value with optional whitespace around
// it, and returns the value's bytes without that whitespace and whether
// whitespace occurs inside it.
func scanWhole(b []byte) (v []byte, ws bool, err error) {
	i := skipWS(b, 0)
	end, ws, err := scanValue(b, i)
	if err != nil {
		return nil, false, err
	}
	if j := skipWS(b, end); j != len(b) {
		return nil, false, errAt(j, "data after the value")
	}
	return b[i:end], ws, nil
}

// appendCompact appends the valid JSON value v to dst without its
// insignificant whitespace.
func appendCompact(dst, v []byte) []byte {
	for i := 0; i < len(v); {
		c := v[i]
		if isWS(c) {
			i++
			continue
		}
		if c != '"' {
			dst = append(dst, c)
			i++
			continue
		}
		end, _, err := scanString(v, i)
		if err != nil { // v is valid, so this cannot happen; keep the rest whole
			return append(dst, v[i:]...)
		}
		dst = append(dst, v[i:end]...)
		i = end
	}
	return dst
}
