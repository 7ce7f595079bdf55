package jsonscan

import "encoding/binary"

// skipNested returns the offset just past the object or array that starts
// at src[i] and is the value of a top-level member (so it is at depth 2),
// or -1 if that is not a valid value nesting at most maxDepth deep (or if
// it nests deeper than maxFastDepth).
//
// It scans the whole value in one loop, a state machine whose states are
// the labels open, key, value, after and closed, with the byte at src[i]
// in c on entry to each. The open containers are kept as a stack of bits
// in one word (set for an object, the innermost lowest) rather than on the
// goroutine stack, so no call is made per level, and '{' and '[' (as '}'
// and ']') differ in the bit 0x20, which is what is pushed and compared.
func skipNested(src []byte, i, maxDepth int) int {
	n := len(src)
	src = src[:n:n]
	var (
		stack uint64 // bit k: whether the container k levels out is an object
		depth = 1    // the depth of the innermost open container
		c     = src[i]
	)

open:
	// c = src[i] opens a container.
	if depth++; depth > maxDepth || depth > maxFastDepth {
		return -1
	}
	stack = stack<<1 | uint64(c>>5&1) // '{' has 0x20, '[' has not
	i++
	if uint(i) >= uint(n) {
		return -1
	}
	if c = src[i]; c <= ' ' {
		if i = skipSpace(src, i); uint(i) >= uint(n) {
			return -1
		}
		c = src[i]
	}
	if c|0x20 == '}' { // '}' or ']': empty if it matches
		if uint64(c>>5&1) != stack&1 {
			return -1
		}
		i++
		goto closed
	}
	if stack&1 == 0 {
		goto value
	}

key:
	// c = src[i] should open a key of the innermost object.
	if c != '"' {
		return -1
	}
	if i = stringStop(src, i+1); uint(i) < uint(n) && src[i] == '"' {
		i++
	} else if i, _ = stringTail(src, i); i < 0 {
		return -1
	}
	if uint(i) >= uint(n) {
		return -1
	}
	if c = src[i]; c != ':' {
		if c > ' ' {
			return -1
		}
		if i = skipSpace(src, i); uint(i) >= uint(n) || src[i] != ':' {
			return -1
		}
	}
	i++
	if uint(i) >= uint(n) {
		return -1
	}
	if c = src[i]; c <= ' ' {
		if c == ' ' && uint(i+1) < uint(n) && src[i+1] > ' ' {
			i++ // one space after the colon, as indented input has
			c = src[i]
		} else if i = skipSpace(src, i); uint(i) >= uint(n) {
			return -1
		} else {
			c = src[i]
		}
	}

value:
	// c = src[i] should start a value in the innermost container.
	if c == '"' {
		if i = stringStop(src, i+1); uint(i) < uint(n) && src[i] == '"' {
			i++
		} else if i, _ = stringTail(src, i); i < 0 {
			return -1
		}
	} else if c-'0' < 10 || c == '-' {
		// A number, as in fastScan.
		if c == '-' {
			if i++; uint(i) >= uint(n) {
				return -1
			}
			c = src[i]
		}
		if c == '0' {
			i++
		} else if c-'1' < 9 {
			i = digitsEnd(src, i+1)
		} else {
			return -1
		}
		if uint(i) < uint(n) && src[i] == '.' {
			if i++; uint(i) >= uint(n) || src[i]-'0' >= 10 {
				return -1
			}
			i = digitsEnd(src, i+1)
		}
		if uint(i) < uint(n) && src[i]|0x20 == 'e' {
			if i = exponentEnd(src, i); i < 0 {
				return -1
			}
		}
	} else if c == '{' || c == '[' {
		goto open
	} else if c == 't' && n-i >= 4 && binary.LittleEndian.Uint32(src[i:]) == wordTrue {
		i += 4
	} else if c == 'f' && n-i >= 5 && binary.LittleEndian.Uint32(src[i+1:]) == wordAlse {
		i += 5
	} else if c == 'n' && n-i >= 4 && binary.LittleEndian.Uint32(src[i:]) == wordNull {
		i += 4
	} else {
		return -1
	}

after:
	// A value just ended at src[i-1], in the innermost container.
	if uint(i) >= uint(n) {
		return -1
	}
	if c = src[i]; c <= ' ' {
		if i = skipSpace(src, i); uint(i) >= uint(n) {
			return -1
		}
		c = src[i]
	}
	if c == ',' {
		i++
		if uint(i) >= uint(n) {
			return -1
		}
		if c = src[i]; c <= ' ' {
			if i = skipSpace(src, i); uint(i) >= uint(n) {
				return -1
			}
			c = src[i]
		}
		if stack&1 != 0 {
			goto key
		}
		goto value
	}
	if c|0x20 != '}' || uint64(c>>5&1) != stack&1 { // not the right closing bracket
		return -1
	}
	i++

closed:
	// The innermost container just closed at src[i-1].
	stack >>= 1
	if depth--; depth == 1 {
		return i
	}
	goto after
}
