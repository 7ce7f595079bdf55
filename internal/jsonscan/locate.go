package jsonscan

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// For stringEnd's word at a time: quotes has a quote in every byte, lows a
// 1 and highs the top bit.
const (
	quotes = 0x2222222222222222
	lows   = 0x0101010101010101
	highs  = 0x8080808080808080
)

// Locate returns the Fields that Strip(nil, src, maxDepth) returns, for a
// src that is known to be valid JSON and already in stored form, as a
// patch of a stored document is: '{', the members joined by ',' with no
// whitespace between them, '}', and no top-level "_ts" or "_etag". It
// trusts src: it does not check UTF-8, escapes, numbers or literals, only
// the structure that the Fields and the depth depend on. Strip's output for
// such a src is src itself, so the offsets in the Fields are offsets into
// src.
//
// ok is false when src is not in stored form (whitespace between members
// or around the object, a top-level "_ts" or "_etag"), has a second "id" or
// "ttl" member, nests deeper than maxDepth, or ends too soon; the caller
// then runs Strip, which validates it and says what is wrong. For a valid
// src in stored form, Locate reads the bytes of strings with bytes.IndexByte
// rather than validating each, which is what makes it several times faster
// than Strip on documents with long strings. TestLocateAgrees and
// FuzzLocate check that it never disagrees with Strip.
func Locate(src []byte, maxDepth int) (f Fields, ok bool) {
	n := len(src)
	if n < 2 || src[0] != '{' || src[n-1] != '}' || maxDepth < 1 {
		return Fields{}, false
	}
	if n == 2 {
		f.StampAt = 1
		return f, true
	}
	i := 1
	for {
		// A member; src[i] should open its key.
		if src[i] != '"' {
			return Fields{}, false
		}
		keyStart := i
		if i = stringEnd(src, i); i < 0 {
			return Fields{}, false
		}
		key := keyOther
		if k := src[keyStart+1 : i-1]; len(k) <= len("_etag") {
			key = classifyKey(k, bytes.IndexByte(k, '\\') >= 0)
		} else if bytes.IndexByte(k, '\\') >= 0 {
			key = classifyKey(k, true)
		}
		if key == keyTS || key == keyEtag {
			return Fields{}, false
		}
		// Whitespace around the colon is part of the member: stored as
		// written.
		if i = skipWS(src, i); i >= n || src[i] != ':' {
			return Fields{}, false
		}
		if i = skipWS(src, i+1); i >= n {
			return Fields{}, false
		}
		valStart := i
		switch c := src[i]; c {
		case '"':
			i = stringEnd(src, i)
		case '{', '[':
			i = nestedEnd(src, i, maxDepth)
		default: // a number or a literal, trusted
			for i < n && src[i] != ',' && src[i] != '}' {
				if src[i] <= ' ' {
					return Fields{}, false
				}
				i++
			}
		}
		if i < 0 || i >= n {
			return Fields{}, false
		}
		switch key {
		case keyID:
			if f.IDKind != KindNone {
				return Fields{}, false
			}
			f.IDKind, f.IDRaw = kindOf[src[valStart]], src[valStart:i:i]
			if f.IDKind == KindString {
				f.IDStart, f.IDEnd = valStart+1, i-1
				f.IDEscaped = bytes.IndexByte(src[valStart+1:i-1], '\\') >= 0
			}
		case keyTTL:
			if f.TTLKind != KindNone {
				return Fields{}, false
			}
			f.TTLKind, f.TTLRaw = kindOf[src[valStart]], src[valStart:i:i]
		}
		if src[i] == ',' {
			i++
			if i >= n {
				return Fields{}, false
			}
			continue
		}
		if src[i] != '}' || i != n-1 {
			return Fields{}, false
		}
		f.StampAt = n - 1
		return f, true
	}
}

// stringEnd returns the offset just past the string whose opening quote is
// src[i], or -1 if it does not end: the first quote after it that an odd
// number of backslashes does not escape.
func stringEnd(src []byte, i int) int {
	j := i + 1
	for {
		// Most keys and many values end within eight bytes: those are
		// looked at in one word, which costs less than the call.
		q := -1
		if len(src)-j >= 8 {
			x := binary.LittleEndian.Uint64(src[j:]) ^ quotes
			// The lowest byte flagged is the first quote: a borrow
			// flags only bytes above a zero byte.
			if m := (x - lows) &^ x & highs; m != 0 {
				q = j + bits.TrailingZeros64(m)>>3
			}
		}
		if q < 0 {
			if j >= len(src) {
				return -1
			}
			k := bytes.IndexByte(src[j:], '"')
			if k < 0 {
				return -1
			}
			q = j + k
		}
		b := 0
		for p := q - 1; p > i && src[p] == '\\'; p-- {
			b++
		}
		if b%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

// nestedEnd returns the offset just past the object or array that starts at
// src[i], the value of a top-level member (depth 2), or -1 if it nests
// deeper than maxDepth or does not end.
func nestedEnd(src []byte, i, maxDepth int) int {
	depth := 1
	for n := len(src); i < n; {
		switch src[i] {
		case '"':
			if i = stringEnd(src, i); i < 0 {
				return -1
			}
			continue
		case '{', '[':
			if depth++; depth > maxDepth {
				return -1
			}
		case '}', ']':
			if depth--; depth == 1 {
				return i + 1
			}
		}
		i++
	}
	return -1
}

// ValidValue reports whether v is one valid JSON value (whitespace around
// it allowed) that Strip would accept as the value of a top-level member of
// a document nesting at most maxDepth deep: strict RFC 8259 and valid UTF-8,
// v's own containers counting from depth 2.
func ValidValue(v []byte, maxDepth int) bool {
	i := skipWS(v, 0)
	if i >= len(v) {
		return false
	}
	_, end, _, err := scanValue(v, i, 1, maxDepth)
	return err == nil && skipWS(v, end) == len(v)
}
