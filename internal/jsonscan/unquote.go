package jsonscan

import (
	"fmt"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Unquote decodes the raw JSON string literal raw (including its quotes)
// exactly as encoding/json decodes a string: escapes are resolved, \uXXXX
// surrogate pairs are combined, and a lone surrogate or an invalid UTF-8 byte
// decodes to U+FFFD. It returns an error wrapping ErrSyntax if raw is not
// exactly one valid JSON string literal (no surrounding whitespace).
func Unquote(raw []byte) (string, error) {
	if len(raw) == 0 {
		return "", errEOF(0)
	}
	if raw[0] != '"' {
		return "", errChar(raw, 0, "looking for beginning of string literal")
	}
	end, escaped, err := scanStringUTF8(raw, 0, false)
	if err != nil {
		return "", err
	}
	if end != len(raw) {
		return "", fmt.Errorf("jsonscan: offset %d: invalid character %s after string literal: %w", end, quoteCharAt(raw, end), ErrSyntax)
	}
	content := raw[1 : end-1]
	if !escaped && utf8.Valid(content) {
		return string(content), nil
	}
	return string(appendUnescaped(make([]byte, 0, len(content)), content)), nil
}

// appendUnescaped appends to b the decoded value of the content s of a string
// literal (without quotes) that scanString accepted, the way encoding/json
// decodes it. When s is valid UTF-8 the decoded value is never longer than s.
func appendUnescaped(b, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			switch s[i+1] {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r := hex4(s[i+2 : i+6])
				i += 6
				if utf16.IsSurrogate(r) {
					// A high surrogate followed by a \u escape of a low
					// surrogate is one code point; anything else is invalid
					// and decodes to U+FFFD, leaving the next escape alone.
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						if dec := utf16.DecodeRune(r, hex4(s[i+2:i+6])); dec != unicode.ReplacementChar {
							i += 6
							b = utf8.AppendRune(b, dec)
							continue
						}
					}
					r = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, r)
				continue
			default: // '"', '\\', '/'
				b = append(b, s[i+1])
			}
			i += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, n := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && n == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, s[i:i+n]...)
			}
			i += n
		}
	}
	return b
}

// hex4 decodes four validated hexadecimal digits.
func hex4(h []byte) rune {
	var r rune
	for _, c := range h[:4] {
		switch {
		case c <= '9':
			c -= '0'
		case c <= 'F':
			c -= 'A' - 10
		default:
			c -= 'a' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
