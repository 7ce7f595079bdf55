package patch

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
)

// Apply never builds a tree of the document. It walks the document's bytes
// to the place a path names, checking the structure of every object and
// array it walks through (keys, colons, commas, the closing bracket where
// it belongs), and skips every value it does not need to look into, trusting
// it to be valid JSON: a string ends at the next unescaped quote, an object
// or array at the bracket that brings the nesting back to where it began.
// An operation then costs one walk and one copy of the document with the
// change spliced in. The skipping never reads out of bounds and always
// moves forward, whatever the bytes, so an invalid document cannot make
// Apply panic or loop; it can make it copy invalid bytes, which is why the
// document must be valid JSON (see Apply).

// skipString returns the offset just past the string whose opening quote
// is b[i], or -1 when it is not terminated.
func skipString(b []byte, i int) int {
	if i = stringEnd(b, i+1); i < 0 {
		return -1
	}
	return i + 1
}

// stringEnd returns the offset of the quote that closes the string whose
// content starts at b[i], or -1 when there is none. It looks for the quote
// and for backslashes eight bytes at a time; a backslash skips the byte
// after it (in valid JSON, \u's hex digits are neither).
func stringEnd(b []byte, i int) int {
	for {
		if len(b)-i >= 8 {
			x := binary.LittleEndian.Uint64(b[i:])
			m := zeroBytes(x^'"'*lsb) | zeroBytes(x^'\\'*lsb)
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		} else {
			for i < len(b) && b[i] != '"' && b[i] != '\\' {
				i++
			}
			if i >= len(b) {
				return -1
			}
		}
		if b[i] == '"' {
			return i
		}
		i += 2
	}
}

// zeroBytes flags the zero bytes of x with their high bit. A borrow can
// flag bytes above the lowest zero byte spuriously, never below it, so the
// lowest flagged byte is exact, and the mask is zero exactly when x has no
// zero byte.
func zeroBytes(x uint64) uint64 { return (x - lsb) &^ x & msb }

// skipValue returns the offset just past the value that starts at b[i], or
// -1 when the bytes end before it does.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		return skipContainer(b, i)
	}
	return scalarEnd(b, i)
}

// scalarEnd returns the offset of the delimiter after the number or
// literal that starts at b[i]. It moves at least one byte, so that a stray
// delimiter still moves the caller forward.
func scalarEnd(b []byte, i int) int {
	for i++; i < len(b) && !ends[b[i]]; i++ {
	}
	return i
}

// ends has the bytes that end a number or a literal.
var ends = func() (t [256]bool) {
	for _, c := range " \t\r\n,:[]{}\"" {
		t[c] = true
	}
	return t
}()

// skipContainer returns the offset just past the object or array whose
// opening bracket is b[i], or -1 when the bytes end before it does.
//
// It goes from token to token, a state machine whose states are the labels
// value (b[i] starts a value), after (a value ended at b[i-1]) and closed
// (a container closed at b[i-1]). In valid JSON a value is followed by
// ',' (or ':' after a key, which it takes as the same kind of separator:
// a key is skipped as a string value) or by a closing bracket, and a
// separator by a value. It does not check that a bracket closes the
// container it opened, or that keys sit where they should: counting
// brackets finds the end of a valid value, and on anything else every step
// still moves forward and every read is within b.
func skipContainer(b []byte, i int) int {
	n := len(b)
	b = b[:n:n]
	depth := 0
	var c byte
value:
	if uint(i) >= uint(n) {
		return -1
	}
	switch c = b[i]; c {
	case '"':
		// The string, as stringEnd skips it, inline: most values here are
		// short strings, and the call would cost as much as the search.
		for i++; ; {
			if n-i >= 8 {
				x := binary.LittleEndian.Uint64(b[i:])
				if m := zeroBytes(x^'"'*lsb) | zeroBytes(x^'\\'*lsb); m != 0 {
					i += bits.TrailingZeros64(m) >> 3
				} else {
					i += 8
					continue
				}
			} else {
				for i < n && b[i] != '"' && b[i] != '\\' {
					i++
				}
				if i >= n {
					return -1
				}
			}
			if b[i] == '"' {
				break
			}
			i += 2
		}
		i++
	case '{', '[':
		depth++
		if i++; uint(i) < uint(n) && isWS(b[i]) {
			i = skipWS(b, i)
		}
		if uint(i) < uint(n) && b[i]|0x20 == '}' { // empty
			i++
			goto closed
		}
		goto value
	default:
		for i++; i < n && !ends[b[i]]; i++ {
		}
	}
after:
	if uint(i) >= uint(n) {
		return -1
	}
	switch c = b[i]; c {
	case ',', ':':
		if i++; uint(i) < uint(n) && b[i] <= ' ' {
			i = skipWS(b, i)
		}
		goto value
	case '}', ']':
		i++
		goto closed
	case ' ', '\t', '\r', '\n':
		i = skipWS(b, i)
		goto after
	}
	goto value // out of place: taken as a value, which moves forward
closed:
	if depth--; depth <= 0 {
		return i
	}
	goto after
}

// place is an object or array of the document: the offsets of its opening
// and closing brackets.
type place struct {
	open, close int
	object      bool
}

// rootOf returns the top-level object of doc.
func rootOf(doc []byte) (place, *failure) {
	i, j := skipWS(doc, 0), len(doc)-1
	for j >= 0 && isWS(doc[j]) {
		j--
	}
	if i >= j || doc[i] != '{' || doc[j] != '}' {
		return place{}, fail(ErrInvalidDocument, "not a JSON object")
	}
	return place{open: i, close: j, object: true}, nil
}

// placeOf returns the object or array that is the value of e, or false
// when that value is something else. The lookup that found e has already
// skipped the value, so its end is known.
func placeOf(b []byte, e entry) (place, bool) {
	if c := b[e.val]; c != '{' && c != '[' {
		return place{}, false
	}
	return place{open: e.val, close: e.end - 1, object: b[e.val] == '{'}, true
}

// brokenAt is the failure for document bytes that are not JSON where Apply
// walked.
func brokenAt(i int) *failure {
	return fail(ErrInvalidDocument, errAt(i, "not valid JSON").Error())
}

// entry is a member of an object or an element of an array, and what
// surrounds it, so that it can be replaced or removed: its value runs from
// val to end; for a member, key is the offset of its key (for an element,
// key == val). prev is the end of the entry before it (-1 for the first)
// and next the start of the entry after it (-1 for the last).
type entry struct {
	key, val, end int
	prev, next    int
}

// scan describes what a lookup found in an object or array: the entry
// looked for, and where a new entry would go.
type scan struct {
	// n counts the entries: for an array, those up to and including the
	// one looked for, or all of them when it was not found; for an object,
	// it is only known to be more than zero when the object has members.
	n int
	// after is the offset a new entry goes at: the end of the last entry,
	// or just after the opening bracket when there is none (only set when
	// the entry looked for was not found).
	after int
	// found is the entry looked for: for an object, the last member of the
	// name (dups counts the members of that name); for an array, the
	// element of the index.
	found entry
	dups  int
}

// lookupMember finds the members named name in the object p.
//
// A path names the last member of a name, so in principle the whole object
// must be scanned. It is not when the bytes show that it need not be: a
// key that decodes to name is written either with a backslash escape or
// as name itself between quotes. So when the object holds no backslash,
// the number of times name occurs between quotes in its bytes bounds the
// number of members of that name: none, and the name is absent without a
// scan; one, and the scan stops at the member that has it. Counting is a
// search of the bytes (bytes.Index, vectorized), where a scan walks every
// token.
func lookupMember(b []byte, p place, name string) (s scan, f *failure) {
	s.found = entry{key: -1, val: -1, prev: -1, next: -1}
	occurs := -1 // an upper bound on the members named name, -1 for none known
	if obj := b[p.open+1 : p.close]; bytes.IndexByte(obj, '\\') < 0 {
		occurs = countQuoted(obj, name)
	}
	if occurs == 0 {
		last := p.close - 1
		for last > p.open && isWS(b[last]) {
			last--
		}
		if last > p.open {
			s.n = 1
		}
		s.after = last + 1
		return s, nil
	}
	s.after = p.open + 1
	i := skipWS(b, p.open+1)
	if i == p.close {
		return s, nil
	}
	prev, pending := -1, false
	for {
		if i >= p.close || b[i] != '"' {
			return s, brokenAt(i)
		}
		keyEnd := skipString(b, i)
		if keyEnd < 0 || keyEnd >= p.close {
			return s, brokenAt(i)
		}
		j := keyEnd
		if b[j] != ':' {
			if j = skipWS(b, j); j >= p.close || b[j] != ':' {
				return s, brokenAt(j)
			}
		}
		if j++; j < p.close && isWS(b[j]) {
			j = skipWS(b, j)
		}
		end := skipValue(b, j)
		if end < 0 || end > p.close || j == p.close {
			return s, brokenAt(j)
		}
		s.n++
		match := keyIs(b[i:keyEnd], name)
		if match {
			s.found, s.dups, pending = entry{key: i, val: j, end: end, prev: prev, next: -1}, s.dups+1, true
		}
		k := end
		if k < p.close && isWS(b[k]) {
			k = skipWS(b, k)
		}
		if k == p.close {
			s.after = end
			return s, nil
		}
		if k > p.close || b[k] != ',' {
			return s, brokenAt(k)
		}
		prev, i = end, skipWS(b, k+1)
		if pending {
			s.found.next, pending = i, false
		}
		if match && occurs == 1 { // no further member can have the name
			return s, nil
		}
	}
}

// countQuoted returns how many times name occurs in b between two quotes,
// up to 2 (it stops counting there).
func countQuoted(b []byte, name string) int {
	var buf [64]byte
	quoted := append(append(append(buf[:0], '"'), name...), '"')
	n := 0
	for i := 0; n < 2; n++ {
		j := bytes.Index(b[i:], quoted)
		if j < 0 {
			break
		}
		i += j + 1 // the closing quote may open the next occurrence
	}
	return n
}

// lookupElement scans the array p up to the element of index idx, or to
// its end when idx is negative or past the last element; found.val is -1
// when there is no element idx.
func lookupElement(b []byte, p place, idx int) (s scan, f *failure) {
	s.after = p.open + 1
	s.found = entry{key: -1, val: -1, prev: -1, next: -1}
	i := skipWS(b, p.open+1)
	if i == p.close {
		return s, nil
	}
	prev := -1
	for {
		end := skipValue(b, i)
		if end < 0 || end > p.close || i == p.close {
			return s, brokenAt(i)
		}
		k := skipWS(b, end)
		if k != p.close && (k > p.close || b[k] != ',') {
			return s, brokenAt(k)
		}
		next := -1
		if k != p.close {
			next = skipWS(b, k+1)
		}
		if s.n == idx {
			s.found = entry{key: i, val: i, end: end, prev: prev, next: next}
			s.n++
			return s, nil // n and after are not needed beyond the element
		}
		s.n++
		if next < 0 {
			s.after = end
			return s, nil
		}
		prev, i = end, next
	}
}

// keyIs reports whether the JSON string raw (quotes included) decodes to
// name. An escape makes the decoded string shorter than raw, so equal
// lengths compare bytes, and only a longer raw with a backslash is decoded.
func keyIs(raw []byte, name string) bool {
	c := raw[1 : len(raw)-1]
	switch {
	case len(c) == len(name):
		return string(c) == name && bytes.IndexByte(c, '\\') < 0
	case len(c) > len(name) && bytes.IndexByte(c, '\\') >= 0:
		var s string
		return json.Unmarshal(raw, &s) == nil && s == name
	}
	return false
}
