package clone

// Tests of the package on its own: which types need a Func, that a fixed-up
// copy equals its original and shares no writable memory with it, and what
// a Copier allocates.

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type tag string

type point struct {
	X int16   `json:"x"`
	Y float64 `json:"y"`
}

type flatDoc struct {
	ID      string    `json:"id"`
	TTL     int32     `json:"ttl,omitempty"`
	Name    string    `json:"name"`
	Score   float64   `json:"score"`
	Seen    time.Time `json:"seen"`
	Pair    [2]string `json:"pair"`
	Address struct {
		City string `json:"city"`
	} `json:"address"`
}

type node struct {
	Name string  `json:"name"`
	Kids []node  `json:"kids"`
	Next *node   `json:"next"`
	More []*node `json:"more"`
}

type deepDoc struct {
	ID     string             `json:"id"`
	Tags   []string           `json:"tags"`
	Attrs  map[string][]int   `json:"attrs"`
	Best   *flatDoc           `json:"best"`
	Extra  any                `json:"extra"`
	Grid   [2][]int           `json:"grid"`
	Raw    json.RawMessage    `json:"raw"`
	Tree   node               `json:"tree"`
	ByName map[string]*node   `json:"by_name"`
	Iface  map[string]any     `json:"iface"`
	hidden []int              // not decoded, but copied as any field is
	Nested []map[string][]any `json:"nested"`
}

// TestFor checks which types get a Func, and that a fixed-up copy of a
// value equals it and shares no writable memory with it.
func TestFor(t *testing.T) {
	tree := `{"name":"root","kids":[{"name":"a","kids":[{"name":"aa"}]}],"next":{"name":"n","next":{"name":"nn"}},"more":[{"name":"m"},null]}`
	deep := `{"id":"d","tags":["x","y"],"attrs":{"a":[1,2],"b":[]},"best":{"id":"b","name":"n","pair":["p","q"]},` +
		`"extra":{"k":[1,"two",{"three":[3]}],"s":"str"},"grid":[[1],[2,3]],"raw":{"r":[1]},"tree":` + tree + `,` +
		`"by_name":{"t":` + tree + `,"nil":null},"iface":{"m":{"x":1},"l":[[1]],"n":null,"f":1.5},"nested":[{"q":[{"z":[1]}]}]}`
	cases := []struct {
		name   string
		typ    reflect.Type
		json   string
		needed bool // whether a copy needs a Func
	}{
		{"int", reflect.TypeFor[int](), `1`, false},
		{"string", reflect.TypeFor[string](), `"s"`, false},
		{"time", reflect.TypeFor[time.Time](), `"2026-11-20T09:00:00+02:00"`, false},
		{"flat struct", reflect.TypeFor[flatDoc](), `{"id":"f","name":"n","seen":"2026-11-20T09:00:00Z","pair":["a","b"],"address":{"city":"c"}}`, false},
		{"array of strings", reflect.TypeFor[[3]string](), `["a","b","c"]`, false},
		{"empty array of slices", reflect.TypeFor[[0][]int](), `[]`, false},
		{"pointer to flat", reflect.TypeFor[*flatDoc](), `{"id":"f","name":"n"}`, true},
		{"slice", reflect.TypeFor[[]int](), `[1,2,3]`, true},
		{"empty slice", reflect.TypeFor[[]int](), `[]`, true},
		{"nil slice", reflect.TypeFor[[]int](), `null`, true},
		{"named strings", reflect.TypeFor[[]tag](), `["a","b"]`, true},
		{"small numbers", reflect.TypeFor[[]int16](), `[1,2,3]`, true},
		{"flat structs", reflect.TypeFor[[]point](), `[{"x":1,"y":2.5},{"x":3}]`, true},
		{"slices of slices", reflect.TypeFor[[][]float64](), `[[1],[],null,[2,3]]`, true},
		{"map", reflect.TypeFor[map[string]int](), `{"a":1}`, true},
		{"any", reflect.TypeFor[any](), `{"a":[1,{"b":"c"}]}`, true},
		{"any string", reflect.TypeFor[any](), `"s"`, true},
		{"recursive", reflect.TypeFor[node](), tree, true},
		{"deep", reflect.TypeFor[deepDoc](), deep, true},
		{"pointer to deep", reflect.TypeFor[*deepDoc](), deep, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fn := For(tc.typ)
			require.Equal(t, tc.needed, fn != nil)
			require.Equal(t, reflect.ValueOf(fn).Pointer(), reflect.ValueOf(For(tc.typ)).Pointer(), "built once")
			orig := reflect.New(tc.typ)
			require.NoError(t, json.Unmarshal([]byte(tc.json), orig.Interface()))
			if d, ok := orig.Interface().(*deepDoc); ok {
				d.hidden = []int{1, 2}
			}
			cp := reflect.New(tc.typ)
			cp.Elem().Set(orig.Elem())
			if fn != nil {
				fn(cp.UnsafePointer())
			}
			require.True(t, reflect.DeepEqual(orig.Elem().Interface(), cp.Elem().Interface()))
			if p := sharedMemory(orig.Elem(), cp.Elem(), "v"); p != "" {
				t.Fatalf("the copy shares %s with the original", p)
			}
		})
	}
}

// sharedMemory returns the path of the first slice array, map or pointer
// target that a and b (of one type) share, or "". A time.Time's location
// is meant to be shared.
func sharedMemory(a, b reflect.Value, path string) string {
	if a.Type() == timeType {
		return ""
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() {
			return ""
		}
		if a.Pointer() == b.Pointer() && a.Type().Elem().Size() > 0 {
			return path
		}
		return sharedMemory(a.Elem(), b.Elem(), "(*"+path+")")
	case reflect.Slice:
		if b.Cap() > 0 && a.Pointer() == b.Pointer() {
			return path
		}
		for i := range a.Len() {
			if p := sharedMemory(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	case reflect.Array:
		for i := range a.Len() {
			if p := sharedMemory(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	case reflect.Map:
		if a.IsNil() {
			return ""
		}
		if a.Pointer() == b.Pointer() {
			return path
		}
		for it := a.MapRange(); it.Next(); {
			if p := sharedMemory(it.Value(), b.MapIndex(it.Key()), fmt.Sprintf("%s[%v]", path, it.Key())); p != "" {
				return p
			}
		}
	case reflect.Interface:
		if a.IsNil() {
			return ""
		}
		return sharedMemory(a.Elem(), b.Elem(), path+".(type)")
	case reflect.Struct:
		for i := range a.NumField() {
			if p := sharedMemory(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); p != "" {
				return p
			}
		}
	}
	return ""
}

// TestHoldsHeap checks which types can refer to memory of their own.
func TestHoldsHeap(t *testing.T) {
	cases := []struct {
		typ  reflect.Type
		want bool
	}{
		{reflect.TypeFor[int](), false},
		{reflect.TypeFor[struct {
			A int
			B [4]float64
		}](), false},
		{reflect.TypeFor[[0]string](), false},
		{reflect.TypeFor[string](), true},
		{reflect.TypeFor[flatDoc](), true},
		{reflect.TypeFor[[]byte](), true},
		{reflect.TypeFor[any](), true},
	}
	for _, tc := range cases {
		t.Run(tc.typ.String(), func(t *testing.T) {
			require.Equal(t, tc.want, HoldsHeap(tc.typ))
		})
	}
}

// TestCopier checks a Copier, which fixes up a copy in a scratch value
// from a pool: the copy equals the value and shares nothing writable with
// it, the value is left as it was, the scratch value keeps nothing of it,
// and the only allocations are the copies of what it refers to.
func TestCopier(t *testing.T) {
	t.Run("deep or not", func(t *testing.T) {
		var flat Copier[flatDoc]
		flat.Init()
		require.False(t, flat.Deep(), "a flatDoc is copied by assignment")
		var deep Copier[deepDoc]
		deep.Init()
		require.True(t, deep.Deep())
	})

	t.Run("deep", func(t *testing.T) {
		const doc = `{"id":"d","tags":["x"],"attrs":{"a":[1]},"best":{"id":"b"},"extra":{"k":[1]},"tree":{"name":"r","kids":[{"name":"k"}]}}`
		var c Copier[deepDoc]
		c.Init()
		var v, before deepDoc
		require.NoError(t, json.Unmarshal([]byte(doc), &v))
		require.NoError(t, json.Unmarshal([]byte(doc), &before))
		cp := c.Copy(v)
		require.True(t, reflect.DeepEqual(v, cp))
		if p := sharedMemory(reflect.ValueOf(v), reflect.ValueOf(cp), "v"); p != "" {
			t.Fatalf("the copy shares %s with the value", p)
		}
		require.True(t, reflect.DeepEqual(before, v), "the value is unchanged")
		// Most likely the scratch value Copy used (the pool may also
		// give a new one): zero either way.
		p := c.scratch.Get().(*deepDoc)
		require.True(t, reflect.DeepEqual(deepDoc{}, *p), "the scratch value keeps nothing")
	})

	cases := []struct {
		name string
		copy func() // copies a value into a sink
		want float64
	}{
		{"flat", func() func() {
			var c Copier[flatDoc]
			c.Init()
			v := flatDoc{ID: "a", Pair: [2]string{"x", "y"}}
			var sink flatDoc
			return func() { sink = c.Copy(v); _ = sink }
		}(), 0},
		// One: the tags' array. v, fixed up in place by the plan, stays
		// on the stack.
		{"with a []string", func() func() {
			type withTags struct {
				ID   string   `json:"id"`
				Tags []string `json:"tags"`
			}
			var c Copier[withTags]
			c.Init()
			v := withTags{ID: "a", Tags: []string{"x", "y"}}
			var sink withTags
			return func() { sink = c.Copy(v); _ = sink }
		}(), 1},
	}
	for _, tc := range cases {
		t.Run("allocations/"+tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, testing.AllocsPerRun(1000, tc.copy))
		})
	}
}

// TestCopierStrings checks Fix's path for a T whose one reference is a
// []string, at an offset other than 0: the copy has the strings in an
// array of its own, and an empty or nil slice stays as it was.
func TestCopierStrings(t *testing.T) {
	type withTags struct {
		ID   string   `json:"id"`
		N    int      `json:"n"`
		Tags []string `json:"tags"`
	}
	var c Copier[withTags]
	c.Init()
	require.NotZero(t, c.strings, "the []string path is not taken")
	for _, tags := range [][]string{{"x", "y"}, {"a", "b", "c", "d", "e"}, {}, nil} {
		orig := withTags{ID: "a", N: 7, Tags: tags}
		cp := c.Copy(orig)
		require.Equal(t, orig, cp)
		if len(tags) > 0 {
			cp.Tags[0] = "changed"
			require.NotEqual(t, "changed", orig.Tags[0], "the copy shares the original's array")
		}
	}
}
