package ttlstore

// The cloner: copies of a Typed view's cached values that share nothing
// writable with them, so that every T a view returns is the caller's own.
// What it promises: a fixed-up copy of a value equals it (reflect.DeepEqual)
// and shares no slice array, map, pointer target or interface value with it;
// a type whose copies need no fixing gets none, and so costs a view nothing
// but the assignment.

import (
	"reflect"
	"slices"
	"sync"
	"time"
	"unsafe"
)

// A fixup replaces, in the value of its type at p, every reference through
// which memory could be written (a slice's array, a map, a pointer's
// target, an interface's dynamic value) with a reference to a new copy of
// what it refers to, recursively. Applied to a shallow copy of a value, it
// makes a copy that shares nothing writable with the original. Strings are
// immutable and stay shared; so do time.Time's locations, which the time
// package never changes. Values are copied as trees: a value that refers
// to the same memory twice gets two copies of it (encoding/json never
// decodes such a value), and one that refers to itself would not end.
type fixup func(p unsafe.Pointer)

// clone returns a copy of v that shares nothing writable with it. fix
// works on a T of scratch, from a pool: on v's own address it would move v
// to the heap, an allocation per call.
func (t *Typed[T]) clone(v T) T {
	p := t.scratch.Get().(*T)
	*p = v
	t.fix(unsafe.Pointer(p))
	v = *p
	var zero T
	*p = zero // keeps nothing alive
	t.scratch.Put(p)
	return v
}

var (
	// fixups holds the fixup of every type built so far: reflect.Type to
	// *fixupCell.
	fixups sync.Map
	// buildMu serializes the building of fixups.
	buildMu sync.Mutex
)

// sliceHeader is the layout of a slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// fixupCell holds a type's fixup: nil when the type needs none.
type fixupCell struct {
	fn   fixup
	done bool // fn is built (only building's cells can lack it)
}

var timeType = reflect.TypeFor[time.Time]()

// fixupFor returns the fixup of t, building it the first time: nil when a
// copy of a t shares nothing writable with the original.
func fixupFor(t reflect.Type) fixup {
	if c, ok := fixups.Load(t); ok {
		return c.(*fixupCell).fn
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	building := make(map[reflect.Type]*fixupCell)
	fn := buildFixup(t, building)
	// Published only now that every cell is complete.
	for typ, c := range building {
		fixups.LoadOrStore(typ, c)
	}
	return fn
}

// buildFixup returns the fixup of t, building the fixups of the types it
// contains first; building holds the cells of the types being built, so
// that a type that contains itself (through a pointer, slice or map, whose
// fixups are never nil) calls its own fixup once it is complete.
func buildFixup(t reflect.Type, building map[reflect.Type]*fixupCell) fixup {
	if c, ok := fixups.Load(t); ok {
		return c.(*fixupCell).fn
	}
	if c, ok := building[t]; ok {
		if c.done {
			return c.fn
		}
		// t contains itself: through a pointer, slice or map, so its
		// fixup, complete by the time it runs, is not nil.
		return func(p unsafe.Pointer) { c.fn(p) }
	}
	c := &fixupCell{}
	building[t] = c
	c.fn = newFixup(t, building)
	c.done = true
	return c.fn
}

// newFixup builds the fixup of t; see buildFixup.
func newFixup(t reflect.Type, building map[reflect.Type]*fixupCell) fixup {
	switch t.Kind() {
	case reflect.Struct:
		if t == timeType {
			return nil
		}
		var offs []uintptr
		var fns []fixup
		for i := range t.NumField() {
			f := t.Field(i)
			if fn := buildFixup(f.Type, building); fn != nil {
				offs = append(offs, f.Offset)
				fns = append(fns, fn)
			}
		}
		if len(fns) == 0 {
			return nil
		}
		return func(p unsafe.Pointer) {
			for i, fn := range fns {
				fn(unsafe.Add(p, offs[i]))
			}
		}
	case reflect.Array:
		fn := buildFixup(t.Elem(), building)
		if fn == nil || t.Len() == 0 {
			return nil
		}
		n, size := t.Len(), t.Elem().Size()
		return func(p unsafe.Pointer) {
			for i := range n {
				fn(unsafe.Add(p, uintptr(i)*size))
			}
		}
	case reflect.Pointer:
		elem := t.Elem()
		fn := buildFixup(elem, building)
		return func(p unsafe.Pointer) {
			pp := (*unsafe.Pointer)(p)
			if *pp == nil {
				return
			}
			n := reflect.New(elem)
			n.Elem().Set(reflect.NewAt(elem, *pp).Elem())
			if fn != nil {
				fn(n.UnsafePointer())
			}
			*pp = n.UnsafePointer()
		}
	case reflect.Slice:
		elem := t.Elem()
		fn := buildFixup(elem, building)
		size := elem.Size()
		switch {
		case fn == nil && elem.Kind() == reflect.String:
			// The most common case, without reflection: the layout of
			// a []string, whatever the names of its types.
			return func(p unsafe.Pointer) {
				s := (*[]string)(p)
				if cap(*s) > 0 {
					*s = slices.Clone((*s)[:len(*s):len(*s)])
				}
			}
		case !holdsHeap(elem):
			// Elements without pointers: their bytes, in memory the
			// garbage collector need not scan.
			return func(p unsafe.Pointer) {
				s := (*sliceHeader)(p)
				if s.cap == 0 {
					return
				}
				b := make([]byte, uintptr(s.len)*size)
				copy(b, unsafe.Slice((*byte)(s.data), len(b)))
				s.data, s.cap = unsafe.Pointer(unsafe.SliceData(b)), s.len
			}
		}
		return func(p unsafe.Pointer) {
			s := reflect.NewAt(t, p).Elem()
			if s.Cap() == 0 {
				return // nil, or empty without room: nothing can be written through it
			}
			n := reflect.MakeSlice(t, s.Len(), s.Len())
			reflect.Copy(n, s)
			if fn != nil {
				base := n.UnsafePointer()
				for i := range n.Len() {
					fn(unsafe.Add(base, uintptr(i)*size))
				}
			}
			s.Set(n)
		}
	case reflect.Map:
		elem := t.Elem()
		fn := buildFixup(elem, building)
		return func(p unsafe.Pointer) {
			m := reflect.NewAt(t, p).Elem()
			if m.IsNil() {
				return
			}
			n := reflect.MakeMapWithSize(t, m.Len())
			k, v := reflect.New(t.Key()).Elem(), reflect.New(elem).Elem()
			for it := m.MapRange(); it.Next(); {
				k.SetIterKey(it)
				v.SetIterValue(it)
				if fn != nil {
					fn(v.Addr().UnsafePointer())
				}
				n.SetMapIndex(k, v)
			}
			m.Set(n)
		}
	case reflect.Interface:
		return func(p unsafe.Pointer) {
			i := reflect.NewAt(t, p).Elem()
			if i.IsNil() {
				return
			}
			d := i.Elem()
			if d.Kind() <= reflect.Complex128 || d.Kind() == reflect.String {
				return // what encoding/json puts in an interface most: nothing to copy
			}
			fn := fixupFor(d.Type())
			if fn == nil {
				return
			}
			n := reflect.New(d.Type()).Elem()
			n.Set(d)
			fn(n.Addr().UnsafePointer())
			i.Set(n)
		}
	default:
		// Bools, numbers and strings; and channels, functions and unsafe
		// pointers, which encoding/json does not decode: shared.
		return nil
	}
}

// holdsHeap reports whether a value of type t can refer to memory of its
// own: whether it has strings, slices, maps, pointers, interfaces,
// channels or functions.
func holdsHeap(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			if holdsHeap(t.Field(i).Type) {
				return true
			}
		}
		return false
	case reflect.Array:
		return t.Len() > 0 && holdsHeap(t.Elem())
	case reflect.String, reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface,
		reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return true
	default:
		return false
	}
}
