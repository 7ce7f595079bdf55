package cosmosql

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"unicode/utf8"
)

// The lazy decoder: when a query reads the document only through top-level
// members (c.cat, c["cat"], c.a.b), decodeFields scans the top-level object
// once, validating every byte as encoding/json would, and decodes only the
// values of those members. Anything it does not handle exactly like
// decodeJSON (a non-object document, trailing data, nesting deeper than
// maxScanDepth, any malformed byte) makes it give up, and the caller falls
// back to decodeJSON, so results and errors stay those of the full decode.

// maxScanDepth bounds the scanner's recursion; deeper documents take the full decode.
const maxScanDepth = 500

// jsonScanner walks JSON text without allocating.
type jsonScanner struct {
	b []byte
	i int
}

// ws skips JSON whitespace.
func (s *jsonScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// eat consumes c if it is the next byte.
func (s *jsonScanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// value skips one JSON value starting at s.i, nested depth deep.
func (s *jsonScanner) value(depth int) bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, ok := s.str()
		return ok
	case c == '{':
		return s.object(depth + 1)
	case c == '[':
		return s.array(depth + 1)
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	}
	return false
}

// object skips an object starting at its '{'.
func (s *jsonScanner) object(depth int) bool {
	if depth > maxScanDepth {
		return false
	}
	s.i++
	s.ws()
	if s.eat('}') {
		return true
	}
	for {
		s.ws()
		if _, ok := s.str(); !ok {
			return false
		}
		s.ws()
		if !s.eat(':') {
			return false
		}
		s.ws()
		if !s.value(depth) {
			return false
		}
		s.ws()
		if s.eat('}') {
			return true
		}
		if !s.eat(',') {
			return false
		}
	}
}

// array skips an array starting at its '['.
func (s *jsonScanner) array(depth int) bool {
	if depth > maxScanDepth {
		return false
	}
	s.i++
	s.ws()
	if s.eat(']') {
		return true
	}
	for {
		s.ws()
		if !s.value(depth) {
			return false
		}
		s.ws()
		if s.eat(']') {
			return true
		}
		if !s.eat(',') {
			return false
		}
	}
}

// lit skips the literal word w.
func (s *jsonScanner) lit(w string) bool {
	if len(s.b)-s.i < len(w) || string(s.b[s.i:s.i+len(w)]) != w {
		return false
	}
	s.i += len(w)
	return true
}

// digits skips a run of decimal digits and reports whether there was one.
func (s *jsonScanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// number skips a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (s *jsonScanner) number() bool {
	s.eat('-')
	// after a leading 0 no digit may follow; one that does fails the caller's delimiter check
	if !s.eat('0') && !s.digits() {
		return false
	}
	if s.eat('.') && !s.digits() {
		return false
	}
	if s.eat('e') || s.eat('E') {
		if !s.eat('+') {
			s.eat('-')
		}
		return s.digits()
	}
	return true
}

const (
	lows  = 0x0101010101010101
	highs = 0x8080808080808080
)

// hasCtl reports whether b holds a control character, which JSON strings may not.
func hasCtl(b []byte) bool {
	for len(b) >= 16 {
		x, y := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
		if ((x-lows*0x20) & ^x | (y-lows*0x20) & ^y)&highs != 0 {
			return true
		}
		b = b[16:]
	}
	for len(b) >= 8 {
		x := binary.LittleEndian.Uint64(b)
		if (x-lows*0x20) & ^x & highs != 0 {
			return true
		}
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// str skips a string starting at its opening quote. escaped reports whether
// it holds a backslash (its text then differs from its bytes). The quote
// and backslash searches only move forward, so the scan stays linear.
func (s *jsonScanner) str() (escaped, ok bool) {
	if !s.eat('"') {
		return false, false
	}
	b, i, end := s.b, s.i, -1
	for {
		if end < i { // the next quote, unless an escape consumed the last one found
			j := bytes.IndexByte(b[i:], '"')
			if j < 0 {
				return false, false
			}
			end = i + j
		}
		k := bytes.IndexByte(b[i:end], '\\')
		if k < 0 {
			if hasCtl(b[i:end]) {
				return false, false
			}
			s.i = end + 1
			return escaped, true
		}
		n := escapeLen(b[i+k:])
		if n == 0 || hasCtl(b[i:i+k]) {
			return false, false
		}
		escaped = true
		i += k + n
	}
}

// escapeLen is the length of the valid escape sequence at b (b[0] is the
// backslash), or 0 when it is not one.
func escapeLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(b) < 6 {
			return 0
		}
		for _, h := range b[2:6] {
			if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
				return 0
			}
		}
		return 6
	}
	return 0
}

// decodeFields decodes the top-level members of the object doc whose names
// are in fields (the last one wins when a name repeats, as encoding/json
// does) into m, cleared first, or a new map when m is nil. ok is false when
// doc is not something it scans exactly like decodeJSON; the caller must
// then use decodeJSON.
func decodeFields(doc []byte, fields []string, m map[string]any) (_ map[string]any, ok bool) {
	clear(m)
	s := jsonScanner{b: doc}
	s.ws()
	if !s.eat('{') {
		return nil, false
	}
	s.ws()
	closed := s.eat('}')
	for !closed {
		s.ws()
		ks := s.i
		escaped, ok := s.str()
		if !ok {
			return nil, false
		}
		ke := s.i
		s.ws()
		if !s.eat(':') {
			return nil, false
		}
		s.ws()
		vs := s.i
		if !s.value(1) {
			return nil, false
		}
		if name, want := fieldOf(doc[ks:ke], escaped, fields); want {
			v, ok := decodeMember(doc[vs:s.i])
			if !ok {
				return nil, false
			}
			if m == nil {
				m = make(map[string]any, len(fields))
			}
			m[name] = v
		}
		s.ws()
		closed = s.eat('}')
		if !closed && !s.eat(',') {
			return nil, false
		}
	}
	s.ws()
	return m, s.i == len(doc)
}

// fieldOf matches the quoted member name q against fields, comparing its
// unescaped text, and returns the field it names.
func fieldOf(q []byte, escaped bool, fields []string) (string, bool) {
	raw := q[1 : len(q)-1]
	if escaped || !utf8.Valid(raw) {
		var name string
		if json.Unmarshal(q, &name) != nil {
			return "", false
		}
		raw = []byte(name)
	}
	for _, f := range fields {
		if string(raw) == f {
			return f, true
		}
	}
	return "", false
}

// decodeMember decodes one scanned (hence valid) JSON value as decodeJSON would.
func decodeMember(v []byte) (any, bool) {
	switch v[0] {
	case '"':
		if in := v[1 : len(v)-1]; bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
			return string(in), true
		}
		var s string
		return s, json.Unmarshal(v, &s) == nil
	case 't':
		return true, true
	case 'f':
		return false, true
	case 'n':
		return nil, true
	case '{', '[':
		x, err := decodeJSON(v)
		return x, err == nil
	}
	return json.Number(string(v)), true
}
