package patch

import (
	"bytes"
	"slices"
	"strconv"
)

// systemNames are the top-level members no patch may touch: the id and the
// system properties Cosmos DB refuses to patch ("Can't patch system
// property"), whether or not the collection stores them.
var systemNames = [...]string{"id", "_ts", "_etag", "_rid", "_self", "_attachments"}

// Apply applies ops, in order, to doc, a JSON object, and returns the
// patched document as compact JSON. Either every operation applies or none
// does: on error Apply returns nil and an *Error naming the first
// operation that failed (its Index, Kind and Path) and wrapping one of the
// package's sentinel errors. doc and ops are only read, never changed, and
// the result shares no memory with them, so Apply is safe to call from
// several goroutines at once, even on the same document and operations.
//
// Each operation sees the document as the operations before it left it.
// The rules of each kind, and the decisions taken where Cosmos DB does not
// say, are in the package documentation.
//
// protected lists further paths, beyond "/id" and the system properties,
// that no operation may touch (ErrProtectedPath): an operation whose path,
// or a move whose from, is one of them, lies inside one or contains one is
// refused. The collection passes its partition key path. Each must be a
// valid path (ErrInvalidPatch, Index -1, otherwise).
//
// The result keeps the document's member order: a member an operation
// replaces stays where it was, a member it creates goes at the end of its
// object. Every value no operation changes, numbers included, is copied as
// written, minus any whitespace. With no operations, the result is doc,
// validated and compacted.
//
// Cost: Apply validates the whole document once (ErrInvalidDocument if it
// is not a JSON object) and splits its top level into members; below that
// it only expands the objects and arrays the paths walk through, so its
// time is about a scan and a copy of the document plus the size of the
// values written and of the containers reached. It allocates the output
// and the top-level member list, and a little per container reached.
func Apply(doc []byte, ops []Op, protected ...string) ([]byte, error) {
	for _, p := range protected {
		if msg := checkPath(p); msg != "" {
			return nil, &Error{Index: -1, Path: p, Err: ErrInvalidPatch, Detail: "protected path: " + msg}
		}
	}
	root, err := parseDocument(doc)
	if err != nil {
		return nil, err
	}
	size := len(doc)
	for i := range ops {
		op := &ops[i]
		if f := apply(root, op, protected); f != nil {
			e := &Error{Index: i, Kind: op.Kind, Path: op.Path, Err: f.err, Detail: f.detail}
			if f.from {
				e.Path = op.From
			}
			return nil, e
		}
		size += len(op.Path) + len(op.Value) + 24 // a key, a value, an incr result
	}
	return root.appendTo(make([]byte, 0, size)), nil
}

// parseDocument validates doc as one JSON object and returns it as a node
// whose top level is expanded.
func parseDocument(doc []byte) (*node, error) {
	docError := func(detail string) error {
		return &Error{Index: -1, Err: ErrInvalidDocument, Detail: detail}
	}
	i := skipWS(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		if _, _, err := scanWhole(doc); err != nil {
			return nil, docError(err.Error())
		}
		return nil, docError("not a JSON object")
	}
	c := &container{object: true}
	end, err := c.scanObject(doc, i)
	if err != nil {
		return nil, docError(err.Error())
	}
	if j := skipWS(doc, end); j != len(doc) {
		return nil, docError(errAt(j, "data after the object").Error())
	}
	return &node{c: c}, nil
}

// apply applies op to the document root.
func apply(root *node, op *Op, protected []string) *failure {
	value, ws, f := op.check()
	if f != nil {
		return f
	}
	if f := checkProtected(op.Path, protected); f != nil {
		return f
	}
	if op.Kind == Move {
		if f := checkProtected(op.From, protected); f != nil {
			f.from = true
			return f
		}
		return move(root, op.From, op.Path)
	}
	c, name, f := parent(root, op.Path)
	if f != nil {
		return f
	}
	v := node{raw: value, ws: ws}
	switch op.Kind {
	case Add:
		return add(c, name, v)
	case Set:
		return set(c, name, v, false)
	case Replace:
		return set(c, name, v, true)
	case Remove:
		_, f := take(c, name)
		return f
	default: // Incr
		return incr(c, name, value)
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

// parent walks the checked path from root to the container that holds its
// last segment and returns that container and the segment, decoded.
func parent(root *node, path string) (*container, string, *failure) {
	n := root
	seg, rest := nextSegment(path)
	for rest != "" {
		c, f := containerOf(n, path[:len(path)-len(rest)-len(seg)-1])
		if f != nil {
			return nil, "", f
		}
		if n, f = child(c, unescape(seg), path[:len(path)-len(rest)]); f != nil {
			return nil, "", f
		}
		seg, rest = nextSegment(rest)
	}
	c, f := containerOf(n, path[:len(path)-len(seg)-1])
	if f != nil {
		return nil, "", f
	}
	return c, unescape(seg), nil
}

// containerOf expands n, found at path at, and fails when it is not an
// object or an array: no operation creates intermediate objects.
func containerOf(n *node, at string) (*container, *failure) {
	c, err := n.expand()
	if err != nil { // n was validated before it got here
		return nil, fail(ErrInvalidDocument, at+": "+err.Error())
	}
	if c == nil {
		return nil, fail(ErrPathNotFound, quoteCut(at)+" is "+n.describe()+", not an object or array")
	}
	return c, nil
}

// child returns the member or element of c named name, found at path at,
// which must exist.
func child(c *container, name, at string) (*node, *failure) {
	if c.object {
		i, _ := c.find(name)
		if i < 0 {
			return nil, fail(ErrPathNotFound, quoteCut(at)+" is absent: no operation creates intermediate objects")
		}
		return &c.members[i].val, nil
	}
	i, f := index(c, name, false)
	if f != nil {
		return nil, f
	}
	return &c.elems[i], nil
}

// index returns the array index that name names in the array c: an
// existing element, or, when end is set, also len(c.elems) for "-" or the
// index equal to the length (a place to insert at).
func index(c *container, name string, end bool) (int, *failure) {
	n := len(c.elems)
	if name == "-" {
		if end {
			return n, nil
		}
		return 0, fail(ErrPathNotFound, `"-" names no element of the array; only add and move append with it`)
	}
	i, ok := arrayIndex(name)
	if !ok {
		return 0, fail(ErrPathNotFound, quoteCut(name)+" is not an array index")
	}
	if i > n || i == n && !end {
		return 0, fail(ErrPathNotFound, "index "+strconv.Itoa(i)+" is out of bounds (length "+strconv.Itoa(n)+")")
	}
	return i, nil
}

// add puts v at name in c: in an object it creates or replaces the
// member; in an array it inserts before the element at the index, or
// appends for "-" or the index equal to the length.
func add(c *container, name string, v node) *failure {
	if c.object {
		return set(c, name, v, false)
	}
	i, f := index(c, name, true)
	if f != nil {
		return f
	}
	c.elems = slices.Insert(c.elems, i, v)
	return nil
}

// set puts v at name in c, replacing what is there. In an object it
// creates the member when it is absent, unless mustExist; in an array the
// element must exist.
func set(c *container, name string, v node, mustExist bool) *failure {
	if !c.object {
		i, f := index(c, name, false)
		if f != nil {
			return f
		}
		c.elems[i] = v
		return nil
	}
	i, count := c.find(name)
	switch {
	case i < 0 && mustExist:
		return fail(ErrPathNotFound, "member "+quoteCut(name)+" is absent")
	case i < 0:
		key := appendKey(nil, name)
		c.members = append(c.members, member{key: key, escaped: bytes.IndexByte(key, '\\') >= 0, val: v})
		return nil
	case count > 1:
		i = c.dropEarlier(name, i)
	}
	c.members[i].val = v
	return nil
}

// take removes the member or element named name from c, which must exist,
// and returns it. Every member of that name goes.
func take(c *container, name string) (node, *failure) {
	if !c.object {
		i, f := index(c, name, false)
		if f != nil {
			return node{}, f
		}
		v := c.elems[i]
		c.elems = slices.Delete(c.elems, i, i+1)
		return v, nil
	}
	i, count := c.find(name)
	if i < 0 {
		return node{}, fail(ErrPathNotFound, "member "+quoteCut(name)+" is absent")
	}
	if count > 1 {
		i = c.dropEarlier(name, i)
	}
	v := c.members[i].val
	c.members = slices.Delete(c.members, i, i+1)
	return v, nil
}

// incr adds the number by to the number at name in c, or, in an object,
// creates the member with the value by when it is absent.
func incr(c *container, name string, by []byte) *failure {
	var target *node
	if c.object {
		i, count := c.find(name)
		if i < 0 {
			return set(c, name, node{raw: by}, false)
		}
		if count > 1 {
			i = c.dropEarlier(name, i)
		}
		target = &c.members[i].val
	} else {
		i, f := index(c, name, false)
		if f != nil {
			return f
		}
		target = &c.elems[i]
	}
	if target.c != nil || !isNumber(target.raw) {
		return fail(ErrNotNumber, "the value is "+target.describe())
	}
	sum, f := increment(nil, target.raw, by)
	if f != nil {
		return f
	}
	*target = node{raw: sum}
	return nil
}

// move removes the value at from and adds it at path, as add would. A move
// onto itself changes nothing, but from must exist.
func move(root *node, from, path string) *failure {
	src, name, f := parent(root, from)
	if f == nil && isPrefix(path, from) && isPrefix(from, path) {
		if src.object {
			if i, _ := src.find(name); i < 0 {
				f = fail(ErrPathNotFound, "member "+quoteCut(name)+" is absent")
			}
		} else {
			_, f = index(src, name, false)
		}
		if f == nil {
			return nil
		}
	}
	if f != nil {
		f.from = true
		return f
	}
	v, f := take(src, name)
	if f != nil {
		f.from = true
		return f
	}
	dst, name, f := parent(root, path)
	if f != nil {
		return f
	}
	return add(dst, name, v)
}
