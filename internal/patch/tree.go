package patch

import (
	"bytes"
	"encoding/json"
)

// The document is held as a tree that is expanded only where operations
// reach. A node starts as the raw bytes of a value, exactly as the document
// or the operation wrote them; walking a path into an object or an array
// expands that node, once, into a container whose members or elements are
// again raw nodes. Everything an operation does not reach stays a byte
// slice of the input and is copied out as it came, which is what keeps a
// patch of one field of a large document cheap and its numbers exact.
//
// All nodes are owned by one Apply call. The bytes they point to (the
// document and the operations' values) are only ever read.

// node is one JSON value.
type node struct {
	// raw holds the value's bytes, without whitespace around it, while c
	// is nil.
	raw []byte
	// c is the expanded object or array, or nil.
	c *container
	// ws reports that raw has whitespace between its tokens, which the
	// output drops.
	ws bool
}

// container is an expanded object (members) or array (elems).
type container struct {
	object  bool
	members []member
	elems   []node
}

// member is one object member.
type member struct {
	// key is the member name as a JSON string, quotes included: as the
	// document wrote it, or as appendKey wrote a new one.
	key []byte
	// escaped reports that key holds a backslash escape, so that it must
	// be decoded before it is compared.
	escaped bool
	val     node
}

// expand returns the container n holds, expanding n if need be, or nil
// when n is not an object or an array.
func (n *node) expand() (*container, error) {
	if n.c != nil {
		return n.c, nil
	}
	if len(n.raw) == 0 || n.raw[0] != '{' && n.raw[0] != '[' {
		return nil, nil
	}
	c := &container{object: n.raw[0] == '{'}
	var err error
	if c.object {
		_, err = c.scanObject(n.raw, 0)
	} else {
		_, err = c.scanArray(n.raw, 0)
	}
	if err != nil {
		return nil, err
	}
	n.c, n.raw = c, nil
	return c, nil
}

// scanObject validates the object that starts at b[i] and fills c.members
// with its members, each value a raw node. It returns the offset just past
// the object.
func (c *container) scanObject(b []byte, i int) (int, error) {
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, unexpected(b, i)
		}
		keyEnd, esc, err := scanString(b, i)
		if err != nil {
			return 0, err
		}
		j := skipWS(b, keyEnd)
		if j >= len(b) || b[j] != ':' {
			return 0, unexpected(b, j)
		}
		j = skipWS(b, j+1)
		valEnd, ws, err := scanValue(b, j)
		if err != nil {
			return 0, err
		}
		c.members = append(c.members, member{key: b[i:keyEnd:keyEnd], escaped: esc, val: node{raw: b[j:valEnd:valEnd], ws: ws}})
		i = skipWS(b, valEnd)
		if i < len(b) && b[i] == '}' {
			return i + 1, nil
		}
		if i >= len(b) || b[i] != ',' {
			return 0, unexpected(b, i)
		}
		i = skipWS(b, i+1)
	}
}

// scanArray is scanObject for an array that starts at b[i], filling c.elems.
func (c *container) scanArray(b []byte, i int) (int, error) {
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		end, ws, err := scanValue(b, i)
		if err != nil {
			return 0, err
		}
		c.elems = append(c.elems, node{raw: b[i:end:end], ws: ws})
		i = skipWS(b, end)
		if i < len(b) && b[i] == ']' {
			return i + 1, nil
		}
		if i >= len(b) || b[i] != ',' {
			return 0, unexpected(b, i)
		}
		i = skipWS(b, i+1)
	}
}

// named reports whether m's name, decoded, is name.
func (m *member) named(name string) bool {
	if !m.escaped {
		return len(m.key) == len(name)+2 && string(m.key[1:len(m.key)-1]) == name
	}
	var s string
	return json.Unmarshal(m.key, &s) == nil && s == name
}

// find returns the index of the last member of the object c named name
// (decoded), and how many members have that name; -1 and 0 when none has.
// When a name occurs more than once, the last member is the one a reader
// sees (encoding/json and JavaScript keep the last), so it is the one a
// path names.
func (c *container) find(name string) (last, count int) {
	last = -1
	for i := range c.members {
		if c.members[i].named(name) {
			last = i
			count++
		}
	}
	return last, count
}

// dropEarlier removes from the object c the members named name before
// the one at index last, which find found with count > 1, and returns
// that member's new index. A patch that writes or removes a member that
// occurs more than once thus leaves exactly one (or none), the one readers
// saw.
func (c *container) dropEarlier(name string, last int) int {
	kept := c.members[:0]
	for i := range c.members {
		if i < last && c.members[i].named(name) {
			continue
		}
		kept = append(kept, c.members[i])
	}
	removed := len(c.members) - len(kept)
	clear(c.members[len(kept):])
	c.members = kept
	return last - removed
}

// appendTo appends n to dst as compact JSON.
func (n *node) appendTo(dst []byte) []byte {
	if n.c == nil {
		if n.ws {
			return appendCompact(dst, n.raw)
		}
		return append(dst, n.raw...)
	}
	if n.c.object {
		dst = append(dst, '{')
		for i := range n.c.members {
			if i > 0 {
				dst = append(dst, ',')
			}
			m := &n.c.members[i]
			dst = append(dst, m.key...)
			dst = append(dst, ':')
			dst = m.val.appendTo(dst)
		}
		return append(dst, '}')
	}
	dst = append(dst, '[')
	for i := range n.c.elems {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = n.c.elems[i].appendTo(dst)
	}
	return append(dst, ']')
}

// isNumber reports whether the raw value v is a number.
func isNumber(v []byte) bool { return len(v) > 0 && (v[0] == '-' || isDigit(v[0])) }

// describe names the JSON type of the unexpanded or expanded node n, for
// messages.
func (n *node) describe() string {
	if n.c != nil {
		if n.c.object {
			return "an object"
		}
		return "an array"
	}
	switch {
	case len(n.raw) == 0:
		return "nothing"
	case n.raw[0] == '"':
		return "a string"
	case isNumber(n.raw):
		return "a number"
	case n.raw[0] == '{':
		return "an object"
	case n.raw[0] == '[':
		return "an array"
	case bytes.Equal(n.raw, []byte("null")):
		return "null"
	}
	return "a boolean"
}
