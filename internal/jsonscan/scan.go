package jsonscan

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// strSafe reports the bytes that may appear unescaped in a string and need
// no special handling: ASCII except control characters, '"' and '\\'.
// Bytes >= 0x80 are checked as UTF-8 by scanString.
var strSafe = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = true
	}
	t['"'] = false
	t['\\'] = false
	return t
}()

// isHex reports the hexadecimal digits allowed in \uXXXX escapes.
var isHex = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	return t
}()

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// skipWS returns the offset of the first byte at or after i that is not JSON
// whitespace (space, tab, newline, carriage return), or len(s).
func skipWS(s []byte, i int) int {
	for i < len(s) {
		c := s[i]
		if c > ' ' || (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
			return i
		}
		i++
	}
	return i
}

// scanString scans the string literal whose opening quote is s[i]. It returns
// the offset just past the closing quote and whether the string contains a
// backslash escape. Invalid UTF-8 in the string is an error.
func scanString(s []byte, i int) (end int, escaped bool, err error) {
	return scanStringUTF8(s, i, true)
}

// scanStringUTF8 is scanString; with strict false it takes invalid UTF-8
// as content, as Unquote must.
func scanStringUTF8(s []byte, i int, strict bool) (end int, escaped bool, err error) {
	i++
	for {
		// Skip ordinary bytes: eight at a time while possible, then byte by
		// byte near the end of the input.
		if len(s)-i >= 8 {
			x := binary.LittleEndian.Uint64(s[i:])
			m := stopBytes(x)
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
			if firstIsQuote(x, m) {
				return i + 1, escaped, nil
			}
		} else {
			for i < len(s) && strSafe[s[i]] {
				i++
			}
			if i >= len(s) {
				return i, escaped, errEOF(i)
			}
		}
		switch s[i] {
		case '"':
			return i + 1, escaped, nil
		case '\\':
			escaped = true
			if i+1 >= len(s) {
				return i, escaped, errEOF(i + 1)
			}
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for j := i + 2; j < i+6; j++ {
					if j >= len(s) {
						return j, escaped, errEOF(j)
					}
					if !isHex[s[j]] {
						return j, escaped, errChar(s, j, "in \\u hexadecimal character escape")
					}
				}
				i += 6
			default:
				return i + 1, escaped, errChar(s, i+1, "in string escape")
			}
		default:
			if s[i] >= utf8.RuneSelf {
				r, n := utf8.DecodeRune(s[i:])
				if r == utf8.RuneError && n == 1 && strict {
					return i, escaped, errInvalidUTF8(s)
				}
				i += n
				continue
			}
			// a control character
			return i, escaped, errChar(s, i, "in string literal")
		}
	}
}

// scanNumber scans the number literal starting at s[i], which is '-' or a
// digit, and returns the offset just past it.
func scanNumber(s []byte, i int) (int, error) {
	if s[i] == '-' {
		i++
		if i >= len(s) {
			return i, errEOF(i)
		}
	}
	switch c := s[i]; {
	case c == '0':
		i++
	case '1' <= c && c <= '9':
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	default:
		return i, errChar(s, i, "in numeric literal")
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) {
			return i, errEOF(i)
		}
		if !isDigit(s[i]) {
			return i, errChar(s, i, "after decimal point in numeric literal")
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) {
			return i, errEOF(i)
		}
		if !isDigit(s[i]) {
			return i, errChar(s, i, "in exponent of numeric literal")
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	return i, nil
}

// scanLiteral scans the literal lit (true, false or null) whose first byte is
// s[i] and returns the offset just past it.
func scanLiteral(s []byte, i int, lit string) (int, error) {
	if len(s)-i >= len(lit) && string(s[i:i+len(lit)]) == lit {
		return i + len(lit), nil
	}
	for j := 1; j < len(lit); j++ {
		if i+j >= len(s) {
			return i + j, errEOF(i + j)
		}
		if s[i+j] != lit[j] {
			return i + j, errChar(s, i+j, "in literal "+lit+" (expecting "+quoteChar(lit[j])+")")
		}
	}
	panic("unreachable")
}

// scanValue scans the value starting at s[i] (whitespace already skipped),
// which is nested inside containers of the given depth (0 for the top-level
// value). It returns the value's kind, the offset just past it, and for a
// string whether it contains a backslash escape.
func scanValue(s []byte, i, depth, maxDepth int) (kind Kind, end int, escaped bool, err error) {
	if i >= len(s) {
		return KindNone, i, false, errEOF(i)
	}
	switch c := s[i]; c {
	case '"':
		end, escaped, err = scanString(s, i)
		return KindString, end, escaped, err
	case '{':
		end, err = scanNested(s, i, depth, maxDepth)
		return KindObject, end, false, err
	case '[':
		end, err = scanNested(s, i, depth, maxDepth)
		return KindArray, end, false, err
	case 't':
		end, err = scanLiteral(s, i, "true")
		return KindTrue, end, false, err
	case 'f':
		end, err = scanLiteral(s, i, "false")
		return KindFalse, end, false, err
	case 'n':
		end, err = scanLiteral(s, i, "null")
		return KindNull, end, false, err
	default:
		if c == '-' || isDigit(c) {
			end, err = scanNumber(s, i)
			return KindNumber, end, false, err
		}
		return KindNone, i, false, errChar(s, i, "looking for beginning of value")
	}
}

// scanKeyColon scans an object key starting at s[i], the colon after it and
// the whitespace around the colon, and returns the offset of the value.
func scanKeyColon(s []byte, i int) (int, error) {
	if i >= len(s) {
		return i, errEOF(i)
	}
	if s[i] != '"' {
		return i, errChar(s, i, "looking for beginning of object key string")
	}
	i, _, err := scanString(s, i)
	if err != nil {
		return i, err
	}
	i = skipWS(s, i)
	if i >= len(s) {
		return i, errEOF(i)
	}
	if s[i] != ':' {
		return i, errChar(s, i, "after object key")
	}
	return skipWS(s, i+1), nil
}

// scanNested validates the object or array starting at s[i], which sits
// inside containers of the given depth, and returns the offset just past it.
// It uses an explicit stack of open containers rather than recursion, so
// deep input cannot exhaust the goroutine stack.
func scanNested(s []byte, i, depth, maxDepth int) (int, error) {
	// stack holds the opening bracket of each open container. Nesting up to
	// len(small) levels below the starting depth needs no allocation.
	var small [64]byte
	stack := small[:0]
	var err error
	for {
		// Value phase: s[i] starts a value (whitespace already skipped).
		if i >= len(s) {
			return i, errEOF(i)
		}
		switch c := s[i]; c {
		case '{', '[':
			if depth++; depth > maxDepth {
				return i, errTooDeep(i, maxDepth)
			}
			i = skipWS(s, i+1)
			if i < len(s) && s[i] == c+2 { // '{'+2 == '}', '['+2 == ']'
				i++
				depth--
				break // an empty container is a complete value
			}
			stack = append(stack, c)
			if c == '{' {
				if i, err = scanKeyColon(s, i); err != nil {
					return i, err
				}
			}
			continue
		case '"':
			if i, _, err = scanString(s, i); err != nil {
				return i, err
			}
		case 't':
			if i, err = scanLiteral(s, i, "true"); err != nil {
				return i, err
			}
		case 'f':
			if i, err = scanLiteral(s, i, "false"); err != nil {
				return i, err
			}
		case 'n':
			if i, err = scanLiteral(s, i, "null"); err != nil {
				return i, err
			}
		default:
			if c != '-' && !isDigit(c) {
				return i, errChar(s, i, "looking for beginning of value")
			}
			if i, err = scanNumber(s, i); err != nil {
				return i, err
			}
		}

		// After-value phase: a value just ended at s[i-1].
		for {
			if len(stack) == 0 {
				return i, nil
			}
			i = skipWS(s, i)
			if i >= len(s) {
				return i, errEOF(i)
			}
			open := stack[len(stack)-1]
			c := s[i]
			if c == ',' {
				i = skipWS(s, i+1)
				if open == '{' {
					if i, err = scanKeyColon(s, i); err != nil {
						return i, err
					}
				}
				break // next value
			}
			if c == open+2 {
				i++
				depth--
				stack = stack[:len(stack)-1]
				continue
			}
			if open == '{' {
				return i, errChar(s, i, "after object key:value pair")
			}
			return i, errChar(s, i, "after array element")
		}
	}
}

// Error constructors. They are only called on failure, so they may allocate.

func errEOF(off int) error {
	return fmt.Errorf("jsonscan: offset %d: unexpected end of JSON input: %w", off, ErrSyntax)
}

func errChar(s []byte, off int, context string) error {
	return fmt.Errorf("jsonscan: offset %d: invalid character %s %s: %w", off, quoteCharAt(s, off), context, ErrSyntax)
}

func errTooDeep(off, maxDepth int) error {
	return fmt.Errorf("jsonscan: offset %d: exceeded maximum nesting depth %d: %w", off, maxDepth, ErrTooDeep)
}

func errDuplicate(s []byte, off int) error {
	end, _, _ := scanStringUTF8(s, off, false)
	return fmt.Errorf("jsonscan: offset %d: duplicate key %s: %w", off, s[off:end], ErrDuplicateKey)
}

func errInvalidUTF8(s []byte) error {
	off := 0
	for off < len(s) {
		r, n := utf8.DecodeRune(s[off:])
		if r == utf8.RuneError && n == 1 {
			break
		}
		off += n
	}
	return fmt.Errorf("jsonscan: offset %d: invalid UTF-8 byte %#02x: %w", off, s[off], ErrInvalidUTF8)
}

// quoteChar formats c for an error message like encoding/json does.
func quoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	q := strconv.QuoteRune(rune(c))
	return "'" + q[1:len(q)-1] + "'"
}

// quoteCharAt formats the character at s[off] for an error message: the
// whole UTF-8 sequence it starts, or its hexadecimal value if it does not
// start one.
func quoteCharAt(s []byte, off int) string {
	c := s[off]
	if c < utf8.RuneSelf {
		return quoteChar(c)
	}
	r, n := utf8.DecodeRune(s[off:])
	if r == utf8.RuneError && n <= 1 {
		return fmt.Sprintf("byte %#02x", c)
	}
	return strconv.QuoteRune(r)
}
