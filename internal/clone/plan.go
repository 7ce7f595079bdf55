package clone

// Plans: a Copier's way of fixing up a copy without a scratch value. A
// type's plan lists, at their offsets in the type, the references a copy
// must replace (inline structs and arrays are flattened into it), each with
// how: the common ones (slices of strings or of pointer-free elements, maps
// of strings to strings or to numbers, interfaces holding numbers or
// strings) without reflection, the others by their Func applied to a word
// or three on the heap. Applied to a T on the caller's stack, a plan moves
// nothing to the heap: it reads the references out of the T, and writes
// the new ones in, but never lets the T's address out of apply.

import (
	"maps"
	"reflect"
	"unsafe"
)

// stepKind says how a step replaces its reference.
type stepKind uint8

const (
	// stepStrings copies a slice of strings (of any string type).
	stepStrings stepKind = iota
	// stepBytes copies a slice of elements of step.size bytes without
	// pointers, in memory the garbage collector does not scan.
	stepBytes
	// stepStringMap clones a map of strings (any string type) to
	// strings.
	stepStringMap
	// stepMap1, 2, 4, 8 clone a map of strings to pointer-free values
	// of 1, 2, 4 or 8 bytes (bools and numbers).
	stepMap1
	stepMap2
	stepMap4
	stepMap8
	// stepAny copies an empty interface's value when it is not a bool,
	// a number or a string.
	stepAny
	// stepWord applies step.fn to a heap copy of a pointer or a map.
	// (The fix* functions hand a Func a copy on the heap, not the
	// reference in the value: a Func's argument escapes.)
	stepWord
	// stepSlice applies step.fn to a heap copy of any other slice.
	stepSlice
	// stepIface applies step.fn to a heap copy of a non-empty interface.
	stepIface
)

// A step replaces one reference, at off in the value.
type step struct {
	off  uintptr
	kind stepKind
	size uintptr // stepBytes: the size of an element
	fn   Func    // stepWord, stepSlice, stepIface: the Func of the field's type
}

// maxSteps bounds a plan: a type that would need more (arrays of many
// references) is fixed up by its Func on a scratch value instead.
const maxSteps = 64

// planFor returns t's plan: the steps that fix up a copy of a t, or
// ok false when t needs too many.
func planFor(t reflect.Type) (steps []step, ok bool) {
	steps, ok = addSteps(nil, t, 0)
	return steps, ok && len(steps) <= maxSteps
}

// addSteps appends to steps those of a t at off.
func addSteps(steps []step, t reflect.Type, off uintptr) ([]step, bool) {
	if len(steps) > maxSteps {
		return steps, false
	}
	fn := For(t)
	if fn == nil {
		return steps, true // nothing to replace
	}
	ok := true
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if steps, ok = addSteps(steps, f.Type, off+f.Offset); !ok {
				break
			}
		}
	case reflect.Array:
		for i := range t.Len() {
			if steps, ok = addSteps(steps, t.Elem(), off+uintptr(i)*t.Elem().Size()); !ok {
				break
			}
		}
	case reflect.Slice:
		s := step{off: off, kind: stepSlice, fn: fn}
		switch elem := t.Elem(); {
		case elem.Kind() == reflect.String:
			s.kind = stepStrings
		case !HoldsHeap(elem):
			s.kind, s.size = stepBytes, elem.Size()
		}
		steps = append(steps, s)
	case reflect.Map:
		steps = append(steps, step{off: off, kind: mapKind(t), fn: fn})
	case reflect.Interface:
		s := step{off: off, kind: stepIface, fn: fn}
		if t.NumMethod() == 0 {
			s.kind = stepAny
		}
		steps = append(steps, s)
	default: // pointers
		steps = append(steps, step{off: off, kind: stepWord, fn: fn})
	}
	return steps, ok
}

// mapKind returns the step that copies a map of type t.
func mapKind(t reflect.Type) stepKind {
	if t.Key().Kind() != reflect.String {
		return stepWord
	}
	// The slots of a map of strings to values of 1 to 8 bytes are laid
	// out alike whatever the values' alignment: the key's 8 dominates.
	switch e := t.Elem(); {
	case e.Kind() == reflect.String:
		return stepStringMap
	case HoldsHeap(e):
		return stepWord
	case e.Size() == 1:
		return stepMap1
	case e.Size() == 2:
		return stepMap2
	case e.Size() == 4:
		return stepMap4
	case e.Size() == 8:
		return stepMap8
	}
	return stepWord // empty or larger values
}

// apply replaces in the value at p every reference its plan lists. p does
// not escape: only what p's references refer to goes to the heap.
func apply(steps []step, p unsafe.Pointer) {
	for i := range steps {
		applyStep(&steps[i], p)
	}
}

// applyStep is apply of one step. A Copier whose plan has one step calls
// it without apply's loop, which costs about as much as the step's own
// work for a small []string.
func applyStep(s *step, p unsafe.Pointer) {
	at := unsafe.Add(p, s.off)
	switch s.kind {
	case stepStrings:
		v := (*[]string)(at)
		if cap(*v) > 0 {
			*v = cloneStrings(*v)
		}
	case stepBytes:
		h := (*sliceHeader)(at)
		if h.cap > 0 {
			b := make([]byte, uintptr(h.len)*s.size)
			copy(b, unsafe.Slice((*byte)(h.data), len(b)))
			h.data, h.cap = unsafe.Pointer(unsafe.SliceData(b)), h.len
		}
	case stepStringMap:
		cloneMap[string](at)
	case stepMap1:
		cloneMap[uint8](at)
	case stepMap2:
		cloneMap[uint16](at)
	case stepMap4:
		cloneMap[uint32](at)
	case stepMap8:
		cloneMap[uint64](at)
	case stepAny:
		v := (*any)(at)
		if *v != nil && needsCopy(*v) {
			*v = fixAny(s.fn, *v)
		}
	case stepWord:
		w := (*unsafe.Pointer)(at)
		if *w != nil {
			*w = fixWord(s.fn, *w)
		}
	case stepSlice:
		h := (*sliceHeader)(at)
		if h.cap > 0 {
			*h = fixSlice(s.fn, *h)
		}
	case stepIface:
		w := (*[2]unsafe.Pointer)(at)
		if w[0] != nil {
			*w = fixIface(s.fn, *w)
		}
	}
}

// cloneStrings returns a copy of s without room beyond its length. Up to
// 4 strings, an array of their number spares the calls of make and copy
// (makeslice, typedslicecopy, memmove): for 2, 40 instructions of the 360
// of their copy.
func cloneStrings(s []string) []string {
	switch len(s) {
	case 1:
		a := new([1]string)
		a[0] = s[0]
		return a[:]
	case 2:
		a := new([2]string)
		a[0], a[1] = s[0], s[1]
		return a[:]
	case 3:
		a := new([3]string)
		a[0], a[1], a[2] = s[0], s[1], s[2]
		return a[:]
	case 4:
		a := new([4]string)
		a[0], a[1], a[2], a[3] = s[0], s[1], s[2], s[3]
		return a[:]
	}
	n := make([]string, len(s))
	copy(n, s)
	return n
}

// cloneMap replaces the map at p, whose keys are strings and whose values
// have V's size and no pointers, with a clone. The map's own type may be
// another: the runtime's map of one type is laid out as, and hashes its
// keys as, a map of any other type of the same key and value kinds.
func cloneMap[V any](p unsafe.Pointer) {
	m := (*map[string]V)(p)
	if *m != nil {
		*m = maps.Clone(*m)
	}
}

// needsCopy reports whether the value v holds can be written through: it
// is not a bool, a number or a string (what encoding/json puts in an
// interface most).
func needsCopy(v any) bool {
	switch v.(type) {
	case string, float64, bool, int, int64:
		return false
	}
	k := reflect.TypeOf(v).Kind()
	return k > reflect.Complex128 && k != reflect.String
}

// fixAny returns the copy that fn, an empty interface's Func, makes of v.
func fixAny(fn Func, v any) any {
	c := new(any)
	*c = v
	fn(unsafe.Pointer(c))
	return *c
}

// fixWord returns the copy that fn, a pointer's or a map's Func, makes of
// w.
func fixWord(fn Func, w unsafe.Pointer) unsafe.Pointer {
	c := new(unsafe.Pointer)
	*c = w
	fn(unsafe.Pointer(c))
	return *c
}

// fixSlice returns the copy that fn, a slice's Func, makes of h.
func fixSlice(fn Func, h sliceHeader) sliceHeader {
	c := new(sliceHeader)
	*c = h
	fn(unsafe.Pointer(c))
	return *c
}

// fixIface returns the copy that fn, a non-empty interface's Func, makes
// of the interface w.
func fixIface(fn Func, w [2]unsafe.Pointer) [2]unsafe.Pointer {
	c := new([2]unsafe.Pointer)
	*c = w
	fn(unsafe.Pointer(c))
	return *c
}
