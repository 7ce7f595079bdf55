package patch_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ttlstore/ttlstore/internal/patch"
)

// This file is a second, deliberately simple implementation of the
// package's rules, for the property and fuzz tests to compare Apply with.
// It decodes the whole document into maps and slices with encoding/json,
// applies the operations by the rules of the package documentation, and
// shares no code with the package.
//
// Objects keep their member order (a map and a key list), so that order is
// checked too. A name that occurs more than once in the JSON text takes the
// value and the place of its last occurrence, which is what a reader of
// Apply's output sees whether or not Apply touched that name.

// object is a decoded JSON object.
type object struct {
	keys []string
	vals map[string]any
}

func (o *object) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) remove(k string) {
	delete(o.vals, k)
	o.keys = slices.DeleteFunc(o.keys, func(s string) bool { return s == k })
}

// array is a decoded JSON array.
type array struct{ elems []any }

// refDecode decodes one JSON value into *object, *array, json.Number,
// string, bool and nil.
func refDecode(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	v, err := refValue(d)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("data after the value")
	}
	return v, nil
}

func refValue(d *json.Decoder) (any, error) {
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t {
	case json.Delim('{'):
		o := &object{vals: map[string]any{}}
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return nil, err
			}
			v, err := refValue(d)
			if err != nil {
				return nil, err
			}
			o.remove(k.(string)) // a repeated name takes the place of its last occurrence
			o.set(k.(string), v)
		}
		_, err := d.Token()
		return o, err
	case json.Delim('['):
		a := &array{}
		for d.More() {
			v, err := refValue(d)
			if err != nil {
				return nil, err
			}
			a.elems = append(a.elems, v)
		}
		_, err := d.Token()
		return a, err
	}
	return t, nil
}

// refEqual compares decoded values; numbers compare by value, exactly
// when both are written as integers.
func refEqual(a, b any) bool {
	switch a := a.(type) {
	case *object:
		b, ok := b.(*object)
		if !ok || !slices.Equal(a.keys, b.keys) {
			return false
		}
		for _, k := range a.keys {
			if !refEqual(a.vals[k], b.vals[k]) {
				return false
			}
		}
		return true
	case *array:
		b, ok := b.(*array)
		if !ok || len(a.elems) != len(b.elems) {
			return false
		}
		for i := range a.elems {
			if !refEqual(a.elems[i], b.elems[i]) {
				return false
			}
		}
		return true
	case json.Number:
		b, ok := b.(json.Number)
		if !ok {
			return false
		}
		if a == b {
			return true
		}
		ai, aInt := refInteger(a)
		bi, bInt := refInteger(b)
		if aInt && bInt {
			return ai.Cmp(bi) == 0
		}
		af, _ := strconv.ParseFloat(string(a), 64)
		bf, _ := strconv.ParseFloat(string(b), 64)
		return af == bf
	}
	return a == b
}

// refInteger returns n as an integer when it is written as one.
func refInteger(n json.Number) (*big.Int, bool) {
	if strings.ContainsAny(string(n), ".eE") {
		return nil, false
	}
	return new(big.Int).SetString(string(n), 10)
}

// refApply applies ops to doc and returns the decoded result, or the
// sentinel error and the index of the operation that failed (-1 for the
// document or a protected path).
func refApply(doc []byte, ops []patch.Op, protected []string) (any, int, error) {
	for _, p := range protected {
		if !refValidPath(p) {
			return nil, -1, patch.ErrInvalidPatch
		}
	}
	if !json.Valid(doc) || !utf8.Valid(doc) {
		return nil, -1, patch.ErrInvalidDocument
	}
	root, err := refDecode(doc)
	if err != nil {
		return nil, -1, errSkip // valid, but beyond encoding/json (nested too deep)
	}
	if _, ok := root.(*object); !ok {
		return nil, -1, patch.ErrInvalidDocument
	}
	for i, op := range ops {
		if err := refOp(root, op, protected); err != nil {
			return nil, i, err
		}
	}
	return root, 0, nil
}

// errSkip is refApply's answer for input it cannot judge.
var errSkip = errors.New("beyond the reference implementation")

// refValidPath reports whether p is a path: '/' first, '~' only in "~0"
// and "~1", valid UTF-8.
func refValidPath(p string) bool {
	if !strings.HasPrefix(p, "/") || !utf8.ValidString(p) {
		return false
	}
	rest := strings.ReplaceAll(strings.ReplaceAll(p, "~0", ""), "~1", "")
	return !strings.Contains(rest, "~")
}

func refSegments(p string) []string {
	segs := strings.Split(p[1:], "/")
	for i, s := range segs {
		segs[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return segs
}

// refStartsWith reports whether the segments of a begin with those of prefix.
func refStartsWith(a, prefix []string) bool {
	return len(prefix) <= len(a) && slices.Equal(a[:len(prefix)], prefix)
}

func refOp(root any, op patch.Op, protected []string) error {
	var err error
	// What is wrong with the operation itself comes first.
	if op.Kind < patch.Add || op.Kind > patch.Move || !refValidPath(op.Path) {
		return patch.ErrInvalidPatch
	}
	needsValue := op.Kind != patch.Remove && op.Kind != patch.Move
	if needsValue != (len(op.Value) > 0) {
		return patch.ErrInvalidPatch
	}
	var value any
	if needsValue {
		if !json.Valid(op.Value) || !utf8.Valid(op.Value) {
			return patch.ErrInvalidPatch
		}
		if value, err = refDecode(op.Value); err != nil {
			return errSkip
		}
		if _, isNum := value.(json.Number); op.Kind == patch.Incr && !isNum {
			return patch.ErrInvalidPatch
		}
	}
	if (op.Kind == patch.Move) != (op.From != "") {
		return patch.ErrInvalidPatch
	}
	path := refSegments(op.Path)
	var from []string
	if op.Kind == patch.Move {
		if !refValidPath(op.From) {
			return patch.ErrInvalidPatch
		}
		from = refSegments(op.From)
		if len(path) > len(from) && refStartsWith(path, from) {
			return patch.ErrInvalidPatch
		}
	}
	// Then the protected paths, path before from.
	for _, segs := range [][]string{path, from} {
		if segs == nil {
			continue
		}
		switch segs[0] {
		case "id", "_ts", "_etag", "_rid", "_self", "_attachments":
			return patch.ErrProtectedPath
		}
		for _, p := range protected {
			ps := refSegments(p)
			if refStartsWith(segs, ps) || refStartsWith(ps, segs) {
				return patch.ErrProtectedPath
			}
		}
	}
	// Then the document.
	if op.Kind == patch.Move {
		src, name, err := refParent(root, from)
		if err != nil {
			return err
		}
		if slices.Equal(path, from) { // nothing moves, but from must exist
			_, err := refGet(src, name)
			return err
		}
		v, err := refTake(src, name)
		if err != nil {
			return err
		}
		dst, name, err := refParent(root, path)
		if err != nil {
			return err
		}
		return refPut(dst, name, v, patch.Add)
	}
	parent, name, err := refParent(root, path)
	if err != nil {
		return err
	}
	switch op.Kind {
	case patch.Remove:
		_, err := refTake(parent, name)
		return err
	case patch.Incr:
		return refIncr(parent, name, value.(json.Number))
	}
	return refPut(parent, name, value, op.Kind)
}

// refIndex parses an array index: digits, no leading zero.
func refIndex(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || strconv.Itoa(n) != s {
		return 0, false
	}
	return n, true
}

// refParent returns the container holding the last segment and that segment.
func refParent(root any, segs []string) (any, string, error) {
	cur := root
	for _, s := range segs[:len(segs)-1] {
		switch c := cur.(type) {
		case *object:
			v, ok := c.vals[s]
			if !ok {
				return nil, "", patch.ErrPathNotFound
			}
			cur = v
		case *array:
			i, ok := refIndex(s)
			if !ok || i >= len(c.elems) {
				return nil, "", patch.ErrPathNotFound
			}
			cur = c.elems[i]
		default:
			return nil, "", patch.ErrPathNotFound
		}
	}
	switch cur.(type) {
	case *object, *array:
		return cur, segs[len(segs)-1], nil
	}
	return nil, "", patch.ErrPathNotFound
}

// refGet returns the member or element name of c.
func refGet(c any, name string) (any, error) {
	switch c := c.(type) {
	case *object:
		if v, ok := c.vals[name]; ok {
			return v, nil
		}
	case *array:
		if i, ok := refIndex(name); ok && i < len(c.elems) {
			return c.elems[i], nil
		}
	}
	return nil, patch.ErrPathNotFound
}

// refTake removes and returns the member or element name of c.
func refTake(c any, name string) (any, error) {
	switch c := c.(type) {
	case *object:
		v, ok := c.vals[name]
		if !ok {
			return nil, patch.ErrPathNotFound
		}
		c.remove(name)
		return v, nil
	case *array:
		i, ok := refIndex(name)
		if !ok || i >= len(c.elems) {
			return nil, patch.ErrPathNotFound
		}
		v := c.elems[i]
		c.elems = append(c.elems[:i], c.elems[i+1:]...)
		return v, nil
	}
	panic("not a container")
}

// refPut does add, set and replace.
func refPut(c any, name string, v any, kind patch.Kind) error {
	switch c := c.(type) {
	case *object:
		if _, ok := c.vals[name]; !ok && kind == patch.Replace {
			return patch.ErrPathNotFound
		}
		c.set(name, v)
		return nil
	case *array:
		n := len(c.elems)
		i, ok := refIndex(name)
		if kind == patch.Add {
			if name == "-" {
				i, ok = n, true
			}
			if !ok || i > n {
				return patch.ErrPathNotFound
			}
			c.elems = slices.Insert(c.elems, i, v)
			return nil
		}
		if !ok || i >= n {
			return patch.ErrPathNotFound
		}
		c.elems[i] = v
		return nil
	}
	panic("not a container")
}

func refIncr(c any, name string, by json.Number) error {
	var cur any
	switch c := c.(type) {
	case *object:
		v, ok := c.vals[name]
		if !ok {
			c.set(name, by)
			return nil
		}
		cur = v
	case *array:
		i, ok := refIndex(name)
		if !ok || i >= len(c.elems) {
			return patch.ErrPathNotFound
		}
		cur = c.elems[i]
	}
	n, ok := cur.(json.Number)
	if !ok {
		return patch.ErrNotNumber
	}
	sum, err := refSum(n, by)
	if err != nil {
		return err
	}
	return refPut(c, name, sum, patch.Set)
}

// refSum adds two numbers: exactly, in big integers, when both are
// integers within int64; in float64 otherwise.
func refSum(a, b json.Number) (json.Number, error) {
	ai, aInt := refInteger(a)
	bi, bInt := refInteger(b)
	if aInt && bInt && ai.IsInt64() && bi.IsInt64() {
		s := new(big.Int).Add(ai, bi)
		if !s.IsInt64() {
			return "", patch.ErrOverflow
		}
		return json.Number(s.String()), nil
	}
	af, _ := strconv.ParseFloat(string(a), 64)
	bf, _ := strconv.ParseFloat(string(b), 64)
	f := af + bf
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return "", patch.ErrOverflow
	}
	text, _ := json.Marshal(f) // the documented form: as encoding/json writes a float64
	return json.Number(text), nil
}
