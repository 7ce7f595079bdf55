// Package clone copies Go values so that the copy shares nothing that can
// be written through with the original: the values encoding/json decodes,
// which a ttlstore Typed view caches and hands out. It knows nothing of
// ttlstore.
//
// What it promises: a copy made by a [Copier] (or by a [Func] applied to a
// shallow copy) equals the original, as reflect.DeepEqual sees it, and
// shares no slice array, map, pointer target or interface value with it,
// however deep. Strings are immutable and stay shared; so do time.Time's
// locations, which the time package never changes. A type whose copies
// share nothing writable already (numbers, strings, time.Time, arrays and
// structs of those) needs no fixing: [For] returns nil for it, and
// [Copier.Deep] reports false.
//
// Values are copied as trees: a value that refers to the same memory twice
// gets two copies of it (encoding/json never decodes such a value), and one
// that refers to itself would not end. Channels, functions and unsafe
// pointers, which encoding/json does not decode, are shared, and so are map
// keys.
//
// # Cost
//
// Building a type's Func walks the type once, with reflection; it is kept
// for the life of the process. Applying it allocates about one object per
// non-empty slice, map, non-nil pointer and non-nil interface in the value
// (a []string: one allocation; a small map: two), far less than decoding
// the value again.
//
// A Copier also plans, once, the copies a T needs (plan.go): the
// references in T (through its inline structs and arrays) with how to copy
// each. Slices of strings and of pointer-free elements, maps of strings to
// strings, bools or numbers (maps.Clone), and interfaces holding strings
// or numbers (nothing to copy) need no reflection; the rest use their
// type's Func. A copy fixed up by a plan stays where the caller has it, on
// its stack: no scratch value, no pool.
//
// For, HoldsHeap and a Copier's Copy and Fix are safe for concurrent use.
package clone

import (
	"reflect"
	"slices"
	"sync"
	"time"
	"unsafe"
)

// A Func replaces, in the value of its type at p, every reference through
// which memory could be written (a slice's array, a map, a pointer's
// target, an interface's dynamic value) with a reference to a new copy of
// what it refers to, recursively. Applied to a shallow copy of a value, it
// makes a copy that shares nothing writable with the original.
type Func func(p unsafe.Pointer)

// A Copier copies values of type T (see the package doc for what a copy
// shares). Call Init before its first use (until then Copy copies as an
// assignment does, deep or not); it must not be copied after.
type Copier[T any] struct {
	// fix is T's Func: nil when an assignment of a T is a copy that
	// shares nothing writable.
	fix Func
	// steps is T's plan (plan.go), when planned: T needs at most
	// maxSteps. Without one, Fix works on a T of scratch.
	steps   []step
	planned bool
	// strings is 1 + the offset of T's one reference, when T's plan is
	// a single []string (the commonest shape of a struct with a slice):
	// Fix then clones it without applyStep's call and switch. 0 if not.
	strings uintptr
	// scratch holds *T for Copy.
	scratch sync.Pool
}

// Init prepares c to copy values of T, building T's Func if no Copier or
// For built it before.
func (c *Copier[T]) Init() {
	c.fix = For(reflect.TypeFor[T]())
	if c.fix != nil {
		c.steps, c.planned = planFor(reflect.TypeFor[T]())
		if c.planned && len(c.steps) == 1 && c.steps[0].kind == stepStrings {
			c.strings = 1 + c.steps[0].off
		}
	}
	c.scratch.New = func() any { return new(T) }
}

// Deep reports whether a T needs more than an assignment to be copied.
// When it is false, a copy of a T by assignment shares nothing writable
// with the original, and Copy returns v as it got it.
func (c *Copier[T]) Deep() bool { return c.fix != nil }

// Copy returns a copy of v that shares nothing writable with it: v after
// Fix. A caller on a hot path checks Deep first and, for a T that needs no
// fixing, skips the call.
func (c *Copier[T]) Copy(v T) T {
	c.Fix(&v)
	return v
}

// Fix replaces every reference in *p through which memory could be written
// with one to a new copy, recursively: applied to a shallow copy of a T (an
// assignment), it makes a copy that shares nothing writable with the
// original, which it does not read or change. p does not escape: a T on
// the caller's stack stays there.
//
// A T with a plan (all but those with more than maxSteps references
// outside slices, maps and pointers, such as large arrays of slices) is
// fixed up in place; any other, in a T of scratch from a pool, as the Func
// on p's own address would move *p to the heap, an allocation per call.
func (c *Copier[T]) Fix(p *T) {
	switch {
	case c.strings != 0:
		v := (*[]string)(unsafe.Add(unsafe.Pointer(p), c.strings-1))
		if cap(*v) > 0 {
			*v = cloneStrings(*v)
		}
	case c.planned && len(c.steps) == 1:
		applyStep(&c.steps[0], unsafe.Pointer(p))
	case c.planned:
		apply(c.steps, unsafe.Pointer(p))
	case c.fix != nil:
		s := c.scratch.Get().(*T)
		*s = *p
		c.fix(unsafe.Pointer(s))
		*p = *s
		var zero T
		*s = zero // keeps nothing alive
		c.scratch.Put(s)
	}
}

var (
	// funcs holds the Func of every type built so far: reflect.Type to
	// *cell.
	funcs sync.Map
	// buildMu serializes the building of funcs.
	buildMu sync.Mutex
)

// sliceHeader is the layout of a slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// cell holds a type's Func: nil when the type needs none.
type cell struct {
	fn   Func
	done bool // fn is built (only building's cells can lack it)
}

var timeType = reflect.TypeFor[time.Time]()

// For returns the Func of t, building it the first time: nil when a
// copy of a t shares nothing writable with the original.
func For(t reflect.Type) Func {
	if c, ok := funcs.Load(t); ok {
		return c.(*cell).fn
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	building := make(map[reflect.Type]*cell)
	fn := build(t, building)
	// Published only now that every cell is complete.
	for typ, c := range building {
		funcs.LoadOrStore(typ, c)
	}
	return fn
}

// build returns the Func of t, building the funcs of the types it
// contains first; building holds the cells of the types being built, so
// that a type that contains itself (through a pointer, slice or map, whose
// funcs are never nil) calls its own Func once it is complete.
func build(t reflect.Type, building map[reflect.Type]*cell) Func {
	if c, ok := funcs.Load(t); ok {
		return c.(*cell).fn
	}
	if c, ok := building[t]; ok {
		if c.done {
			return c.fn
		}
		// t contains itself: through a pointer, slice or map, so its
		// Func, complete by the time it runs, is not nil.
		return func(p unsafe.Pointer) { c.fn(p) }
	}
	c := &cell{}
	building[t] = c
	c.fn = newFunc(t, building)
	c.done = true
	return c.fn
}

// newFunc builds the Func of t; see build.
func newFunc(t reflect.Type, building map[reflect.Type]*cell) Func {
	switch t.Kind() {
	case reflect.Struct:
		return structFunc(t, building)
	case reflect.Array:
		return arrayFunc(t, building)
	case reflect.Pointer:
		return pointerFunc(t, building)
	case reflect.Slice:
		return sliceFunc(t, building)
	case reflect.Map:
		return mapFunc(t, building)
	case reflect.Interface:
		return interfaceFunc(t, building)
	default:
		// Bools, numbers and strings; and channels, functions and unsafe
		// pointers, which encoding/json does not decode: shared.
		return nil
	}
}

// structFunc is newFunc for t of kind Struct: a struct copies the fields
// that hold heap memory, each in place.
func structFunc(t reflect.Type, building map[reflect.Type]*cell) Func {
	if t == timeType {
		return nil
	}
	var offs []uintptr
	var fns []Func
	for i := range t.NumField() {
		f := t.Field(i)
		if fn := build(f.Type, building); fn != nil {
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
}

// arrayFunc is newFunc for t of kind Array: an array copies each element in
// place.
func arrayFunc(t reflect.Type, building map[reflect.Type]*cell) Func {
	fn := build(t.Elem(), building)
	if fn == nil || t.Len() == 0 {
		return nil
	}
	n, size := t.Len(), t.Elem().Size()
	return func(p unsafe.Pointer) {
		for i := range n {
			fn(unsafe.Add(p, uintptr(i)*size))
		}
	}
}

// pointerFunc is newFunc for t of kind Pointer: a pointer gets a new
// pointee, a copy of the old one.
func pointerFunc(t reflect.Type, building map[reflect.Type]*cell) Func {
	elem := t.Elem()
	fn := build(elem, building)
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
}

// sliceFunc is newFunc for t of kind Slice: a slice gets a new array holding
// copies of its elements.
func sliceFunc(t reflect.Type, building map[reflect.Type]*cell) Func {
	elem := t.Elem()
	fn := build(elem, building)
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
	case !HoldsHeap(elem):
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
}

// mapFunc is newFunc for t of kind Map: a map gets a new map holding copies
// of its values.
func mapFunc(t reflect.Type, building map[reflect.Type]*cell) Func {
	elem := t.Elem()
	fn := build(elem, building)
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
}

// interfaceFunc is newFunc for t of kind Interface: an interface gets a copy
// of its dynamic value.
func interfaceFunc(t reflect.Type, building map[reflect.Type]*cell) Func {
	return func(p unsafe.Pointer) {
		i := reflect.NewAt(t, p).Elem()
		if i.IsNil() {
			return
		}
		d := i.Elem()
		if d.Kind() <= reflect.Complex128 || d.Kind() == reflect.String {
			return // what encoding/json puts in an interface most: nothing to copy
		}
		fn := For(d.Type())
		if fn == nil {
			return
		}
		n := reflect.New(d.Type()).Elem()
		n.Set(d)
		fn(n.Addr().UnsafePointer())
		i.Set(n)
	}
}

// HoldsHeap reports whether a value of type t can refer to memory of its
// own: whether it has strings, slices, maps, pointers, interfaces,
// channels or functions.
func HoldsHeap(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			if HoldsHeap(t.Field(i).Type) {
				return true
			}
		}
		return false
	case reflect.Array:
		return t.Len() > 0 && HoldsHeap(t.Elem())
	case reflect.String, reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface,
		reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return true
	default:
		return false
	}
}
