package patch

import (
	"bytes"
	"strconv"
)

// systemNames are the top-level members no patch may touch: the id and the
// system properties Cosmos DB refuses to patch ("Can't patch system
// property"), whether or not the collection stores them.
var systemNames = [...]string{"id", "_ts", "_etag", "_rid", "_self", "_attachments"}

// Apply applies ops, in order, to doc, a JSON object, and returns the
// patched document. Either every operation applies or none does: on error
// Apply returns nil and an *Error naming the first operation that failed
// (its Index, Kind and Path) and wrapping one of the package's sentinel
// errors. doc and ops are only read, never changed, and the result shares
// no memory with them, so Apply is safe to call from several goroutines at
// once, even on the same document and operations.
//
// Each operation sees the document as the operations before it left it.
// The rules of each kind, and the decisions taken where Cosmos DB does not
// say, are in the package documentation.
//
// protected lists further paths, beyond "/id" and the system properties,
// that no operation may touch (ErrProtectedPath): an operation whose path,
// or a move's from, is one of them, lies inside one or contains one is
// refused. The collection passes its partition key path. Each must be a
// valid path (ErrInvalidPatch, Index -1, otherwise).
//
// doc must be valid JSON, as every document a collection stores is: Apply
// does not validate it. It checks the structure of each object and array a
// path walks through, and returns ErrInvalidDocument for what is wrong
// there or when doc is not an object, but it copies every other value
// without reading it, so from a document that is not valid JSON it may
// return bytes that are not either. What it writes itself (the operations'
// values, which it validates, new member names, incr's results) is valid.
// A caller that cannot vouch for doc validates the result (the collection
// does, as it stamps it).
//
// The result keeps the document's bytes wherever no operation writes:
// member order (a member an operation replaces stays where it was, a member
// it creates goes at the end of its object), numbers as written, and any
// whitespace inside the object (none is added, and what the operations
// write is compact, so a compact document stays compact). The whitespace
// around the object is dropped. With no operations, or only moves onto
// themselves, the result is a copy of doc.
//
// Cost: an operation walks the document to the place its path names,
// skipping whole every value the path does not go into, and copies it once
// with the change spliced in: one allocation of about the document's size
// per operation (a second when the value must be compacted, or when the
// name occurs more than once). To find a member it searches the bytes of
// its object for the quoted name, which usually lets the walk stop at the
// member; see the package documentation.
func Apply(doc []byte, ops []Op, protected ...string) ([]byte, error) {
	for _, p := range protected {
		if msg := checkPath(p); msg != "" {
			return nil, &Error{Index: -1, Path: p, Err: ErrInvalidPatch, Detail: "protected path: " + msg}
		}
	}
	root, f := rootOf(doc)
	if f != nil {
		return nil, &Error{Index: -1, Err: f.err, Detail: f.detail}
	}
	doc = doc[root.open : root.close+1] // without the whitespace around it
	cur := doc
	for i := range ops {
		op := &ops[i]
		next, f := apply(cur, op, protected)
		if f != nil {
			e := &Error{Index: i, Kind: op.Kind, Path: op.Path, Err: f.err, Detail: f.detail}
			if f.from {
				e.Path = op.From
			}
			return nil, e
		}
		cur = next
	}
	if len(cur) > 0 && &cur[0] == &doc[0] { // nothing was written
		return bytes.Clone(doc), nil
	}
	return cur, nil
}

// apply applies op to the document b and returns the new document, a new
// slice unless op changes nothing.
func apply(b []byte, op *Op, protected []string) ([]byte, *failure) {
	value, ws, f := op.check()
	if f != nil {
		return nil, f
	}
	if f := checkProtected(op.Path, protected); f != nil {
		return nil, f
	}
	if op.Kind == Move {
		if f := checkProtected(op.From, protected); f != nil {
			f.from = true
			return nil, f
		}
		return move(b, op.From, op.Path)
	}
	if ws {
		value = appendCompact(make([]byte, 0, len(value)), value)
	}
	p, name, f := walk(b, op.Path)
	if f != nil {
		return nil, f
	}
	switch op.Kind {
	case Add:
		return add(b, p, name, value)
	case Set:
		return set(b, p, name, value, false)
	case Replace:
		return set(b, p, name, value, true)
	case Remove:
		b, _, f = take(b, p, name)
		return b, f
	default: // Incr
		return incr(b, p, name, value)
	}
}

// checkProtected refuses the checked path when it touches "/id", a system
// property or one of the protected paths.
func checkProtected(path string, protected []string) *failure {
	first, _ := nextSegment(path)
	first = unescape(first)
	for _, s := range systemNames {
		if first == s {
			if s == "id" {
				return fail(ErrProtectedPath, "the id cannot be patched")
			}
			return fail(ErrProtectedPath, strconv.Quote(s)+" is a system property")
		}
	}
	for _, p := range protected {
		if overlaps(path, p) {
			return fail(ErrProtectedPath, "the path overlaps the protected path "+quoteCut(p))
		}
	}
	return nil
}

// walk follows the checked path from the top-level object of b to the
// object or array that holds its last segment, and returns that container
// and the segment, decoded. Every segment before the last must name a
// member or element that exists and is an object or array.
func walk(b []byte, path string) (place, string, *failure) {
	p, f := rootOf(b)
	if f != nil {
		return p, "", f
	}
	seg, rest := nextSegment(path)
	for rest != "" {
		at := path[:len(path)-len(rest)]
		e, f := child(b, p, unescape(seg), at)
		if f != nil {
			return p, "", f
		}
		q, ok := placeOf(b, e)
		if !ok {
			return p, "", fail(ErrPathNotFound, quoteCut(at)+" is "+describe(b[e.val:e.end])+", not an object or array")
		}
		p = q
		seg, rest = nextSegment(rest)
	}
	return p, unescape(seg), nil
}

// child returns the member or element name of p, found at path at, which
// must exist.
func child(b []byte, p place, name, at string) (entry, *failure) {
	if p.object {
		s, f := lookupMember(b, p, name)
		if f != nil {
			return entry{}, f
		}
		if s.dups == 0 {
			return entry{}, fail(ErrPathNotFound, quoteCut(at)+" is absent: no operation creates intermediate objects")
		}
		return s.found, nil
	}
	e, _, f := element(b, p, name, false)
	return e, f
}

// element finds the element name names in the array p: an existing
// element, or, when end is set, also the place after the last one, for "-"
// or the index equal to the length (then the entry's val is -1 and the
// scan says where the place is).
func element(b []byte, p place, name string, end bool) (entry, scan, *failure) {
	idx := -1
	if name != "-" {
		var ok bool
		if idx, ok = arrayIndex(name); !ok {
			return entry{}, scan{}, fail(ErrPathNotFound, quoteCut(name)+" is not an array index")
		}
	} else if !end {
		return entry{}, scan{}, fail(ErrPathNotFound, `"-" names no element of the array; only add and move append with it`)
	}
	s, f := lookupElement(b, p, idx)
	switch {
	case f != nil:
		return entry{}, s, f
	case s.found.val >= 0:
		return s.found, s, nil
	case end && (idx < 0 || idx == s.n):
		return s.found, s, nil
	}
	return entry{}, s, fail(ErrPathNotFound, "index "+name+" is out of bounds (length "+strconv.Itoa(s.n)+")")
}

// member finds the members named name in the object p. When the name
// occurs more than once, the last member is the one readers see
// (encoding/json and JavaScript keep the last), so it is the one a path
// names, and member returns a copy of b without the earlier ones (and p
// adjusted to it), so that no operation leaves a stale duplicate behind.
func member(b []byte, p place, name string) ([]byte, place, scan, *failure) {
	s, f := lookupMember(b, p, name)
	if f != nil || s.dups <= 1 {
		return b, p, s, f
	}
	out := make([]byte, 0, len(b))
	out = append(out, b[:p.open+1]...)
	i, first := skipWS(b, p.open+1), true
	for i < p.close { // the object's structure was checked by lookupMember
		keyEnd := skipString(b, i)
		j := skipWS(b, skipWS(b, keyEnd)+1)
		end := skipValue(b, j)
		if !keyIs(b[i:keyEnd], name) || j == s.found.val {
			if !first {
				out = append(out, ',')
			}
			out, first = append(out, b[i:end]...), false
		}
		if i = skipWS(b, end); b[i] == ',' {
			i = skipWS(b, i+1)
		}
	}
	out = append(out, b[p.close:]...)
	p.close -= len(b) - len(out)
	s, f = lookupMember(out, p, name)
	return out, p, s, f
}

// splice returns a new slice holding b with b[start:end] replaced by x
// then y.
func splice(b []byte, start, end int, x, y []byte) []byte {
	out := make([]byte, 0, len(b)-(end-start)+len(x)+len(y))
	out = append(out, b[:start]...)
	out = append(out, x...)
	out = append(out, y...)
	return append(out, b[end:]...)
}

// insertMember returns a new slice holding b with the member name: v
// inserted at offset at, after a comma when comma is set.
func insertMember(b []byte, at int, comma bool, name string, v []byte) []byte {
	out := make([]byte, 0, len(b)+len(name)+len(v)+8)
	out = append(out, b[:at]...)
	if comma {
		out = append(out, ',')
	}
	out = appendKey(out, name)
	out = append(out, ':')
	out = append(out, v...)
	return append(out, b[at:]...)
}

// add puts v at name in p: in an object it creates or replaces the
// member; in an array it inserts before the element at the index, or
// appends for "-" or the index equal to the length.
func add(b []byte, p place, name string, v []byte) ([]byte, *failure) {
	if p.object {
		return set(b, p, name, v, false)
	}
	e, s, f := element(b, p, name, true)
	switch {
	case f != nil:
		return nil, f
	case e.val >= 0:
		return splice(b, e.val, e.val, v, []byte{','}), nil
	case s.n > 0:
		return splice(b, s.after, s.after, []byte{','}, v), nil
	}
	return splice(b, s.after, s.after, v, nil), nil
}

// set puts v at name in p, replacing what is there. In an object it
// creates the member when it is absent, unless mustExist; in an array the
// element must exist.
func set(b []byte, p place, name string, v []byte, mustExist bool) ([]byte, *failure) {
	if !p.object {
		e, _, f := element(b, p, name, false)
		if f != nil {
			return nil, f
		}
		return splice(b, e.val, e.end, v, nil), nil
	}
	b, _, s, f := member(b, p, name)
	switch {
	case f != nil:
		return nil, f
	case s.dups > 0:
		return splice(b, s.found.val, s.found.end, v, nil), nil
	case mustExist:
		return nil, fail(ErrPathNotFound, "member "+quoteCut(name)+" is absent")
	}
	return insertMember(b, s.after, s.n > 0, name, v), nil
}

// take removes the member or element name of p, which must exist, and
// returns the new document and the value removed (a slice of the old one).
// Every member of that name goes.
func take(b []byte, p place, name string) ([]byte, []byte, *failure) {
	var e entry
	if p.object {
		var s scan
		var f *failure
		if b, _, s, f = member(b, p, name); f != nil {
			return nil, nil, f
		}
		if s.dups == 0 {
			return nil, nil, fail(ErrPathNotFound, "member "+quoteCut(name)+" is absent")
		}
		e = s.found
	} else {
		var f *failure
		if e, _, f = element(b, p, name, false); f != nil {
			return nil, nil, f
		}
	}
	v := b[e.val:e.end]
	switch {
	case e.prev >= 0: // from the end of the one before: its comma goes too
		return splice(b, e.prev, e.end, nil, nil), v, nil
	case e.next >= 0: // the first of several: up to the next one
		return splice(b, e.key, e.next, nil, nil), v, nil
	}
	return splice(b, e.key, e.end, nil, nil), v, nil
}

// incr adds the number by to the number at name in p, or, in an object,
// creates the member with the value by when it is absent.
func incr(b []byte, p place, name string, by []byte) ([]byte, *failure) {
	var e entry
	if p.object {
		var s scan
		var f *failure
		if b, _, s, f = member(b, p, name); f != nil {
			return nil, f
		}
		if s.dups == 0 {
			return insertMember(b, s.after, s.n > 0, name, by), nil
		}
		e = s.found
	} else {
		var f *failure
		if e, _, f = element(b, p, name, false); f != nil {
			return nil, f
		}
	}
	cur := b[e.val:e.end]
	if !isNumber(cur) {
		return nil, fail(ErrNotNumber, "the value is "+describe(cur))
	}
	var buf [32]byte
	sum, f := increment(buf[:0], cur, by)
	if f != nil {
		return nil, f
	}
	return splice(b, e.val, e.end, sum, nil), nil
}

// move removes the value at from and adds it at path, as add would. A move
// onto itself changes nothing, but from must exist.
func move(b []byte, from, path string) ([]byte, *failure) {
	src, name, f := walk(b, from)
	if f == nil && isPrefix(path, from) && isPrefix(from, path) {
		if src.object {
			var s scan
			if s, f = lookupMember(b, src, name); f == nil && s.dups == 0 {
				f = fail(ErrPathNotFound, "member "+quoteCut(name)+" is absent")
			}
		} else {
			_, _, f = element(b, src, name, false)
		}
		if f == nil {
			return b, nil
		}
	}
	if f != nil {
		f.from = true
		return nil, f
	}
	b, v, f := take(b, src, name)
	if f != nil {
		f.from = true
		return nil, f
	}
	dst, name, f := walk(b, path)
	if f != nil {
		return nil, f
	}
	return add(b, dst, name, v)
}

// isNumber reports whether the valid JSON value v is a number.
func isNumber(v []byte) bool { return len(v) > 0 && (v[0] == '-' || isDigit(v[0])) }

// describe names the JSON type of the value v, for messages.
func describe(v []byte) string {
	switch {
	case len(v) == 0:
		return "nothing"
	case v[0] == '"':
		return "a string"
	case isNumber(v):
		return "a number"
	case v[0] == '{':
		return "an object"
	case v[0] == '[':
		return "an array"
	case v[0] == 'n':
		return "null"
	}
	return "a boolean"
}
