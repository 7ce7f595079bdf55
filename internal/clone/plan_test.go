package clone

// Tests of plans: which steps a type's plan takes, that a plan applied to a
// shallow copy makes a copy that equals the original and shares nothing
// writable with it (and that the check would catch a shallow copy), and
// what a Copier with a plan allocates.

import (
	"encoding/json"
	"reflect"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// namer is a non-empty interface, which encoding/json does not decode into
// but a value can hold.
type namer interface{ Name() string }

type named struct{ N []string }

func (n *named) Name() string { return n.N[0] }

type nestedDoc struct {
	ID    string `json:"id"`
	Inner struct {
		Lines []string       `json:"lines"`
		Count map[string]int `json:"count"`
	} `json:"inner"`
	Grid  [2][]int `json:"grid"`
	Cells [2]struct {
		V []float64 `json:"v"`
	} `json:"cells"`
	Who namer `json:"-"`
}

// TestPlan checks the steps of each type's plan, and that they copy.
func TestPlan(t *testing.T) {
	nested := `{"id":"n","inner":{"lines":["a","b"],"count":{"x":1}},"grid":[[1],[2,3]],"cells":[{"v":[1.5]},{"v":[]}]}`
	cases := []struct {
		name  string
		typ   reflect.Type
		json  string
		steps []stepKind // nil: no plan (too many steps)
		// shares: a shallow copy shares writable memory with the
		// original, as sharedMemory must see.
		shares bool
	}{
		{"strings", reflect.TypeFor[[]string](), `["a","b"]`, []stepKind{stepStrings}, true},
		{"named strings", reflect.TypeFor[[]tag](), `["a"]`, []stepKind{stepStrings}, true},
		{"3 strings", reflect.TypeFor[[]string](), `["a","b","c"]`, []stepKind{stepStrings}, true},
		{"4 strings", reflect.TypeFor[[]string](), `["a","b","c","d"]`, []stepKind{stepStrings}, true},
		{"5 strings", reflect.TypeFor[[]string](), `["a","b","c","d","e"]`, []stepKind{stepStrings}, true},
		{"empty strings", reflect.TypeFor[[]string](), `[]`, []stepKind{stepStrings}, false},
		{"nil strings", reflect.TypeFor[[]string](), `null`, []stepKind{stepStrings}, false},
		{"small numbers", reflect.TypeFor[[]int16](), `[1,2,3]`, []stepKind{stepBytes}, true},
		{"flat structs", reflect.TypeFor[[]point](), `[{"x":1,"y":2.5}]`, []stepKind{stepBytes}, true},
		{"slices of slices", reflect.TypeFor[[][]float64](), `[[1],[],null]`, []stepKind{stepSlice}, true},
		{"string map", reflect.TypeFor[map[string]string](), `{"a":"x","b":"y"}`, []stepKind{stepStringMap}, true},
		{"named string map", reflect.TypeFor[map[tag]tag](), `{"a":"x"}`, []stepKind{stepStringMap}, true},
		{"nil map", reflect.TypeFor[map[string]string](), `null`, []stepKind{stepStringMap}, false},
		{"bools", reflect.TypeFor[map[string]bool](), `{"a":true,"b":false}`, []stepKind{stepMap1}, true},
		{"int16s", reflect.TypeFor[map[string]int16](), `{"a":-3}`, []stepKind{stepMap2}, true},
		{"float32s", reflect.TypeFor[map[string]float32](), `{"a":1.5}`, []stepKind{stepMap4}, true},
		{"float64s", reflect.TypeFor[map[string]float64](), `{"a":1.5,"b":-2}`, []stepKind{stepMap8}, true},
		{"int32 pairs", reflect.TypeFor[map[string][2]int32](), `{"a":[1,2]}`, []stepKind{stepMap8}, true},
		{"points", reflect.TypeFor[map[string]point](), `{"a":{"x":1,"y":2}}`, []stepKind{stepWord}, true},
		{"empty values", reflect.TypeFor[map[string]struct{}](), `{"a":{}}`, []stepKind{stepWord}, true},
		{"int keys", reflect.TypeFor[map[int]string](), `{"1":"a"}`, []stepKind{stepWord}, true},
		{"slices in a map", reflect.TypeFor[map[string][]int](), `{"a":[1]}`, []stepKind{stepWord}, true},
		{"any object", reflect.TypeFor[any](), `{"a":[1,{"b":"c"}]}`, []stepKind{stepAny}, true},
		{"any string", reflect.TypeFor[any](), `"s"`, []stepKind{stepAny}, false},
		{"any number", reflect.TypeFor[any](), `1.5`, []stepKind{stepAny}, false},
		{"pointer", reflect.TypeFor[*flatDoc](), `{"id":"f"}`, []stepKind{stepWord}, true},
		{"nested", reflect.TypeFor[nestedDoc](), nested, []stepKind{stepStrings, stepMap8, stepBytes, stepBytes, stepBytes, stepBytes, stepIface}, true},
		{"recursive", reflect.TypeFor[node](), `{"name":"r","kids":[{"name":"k"}],"next":{"name":"n"}}`, []stepKind{stepSlice, stepWord, stepSlice}, true},
		{"too many steps", reflect.TypeFor[[maxSteps + 1][]int](), `[[1],[2]]`, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			steps, ok := planFor(tc.typ)
			require.Equal(t, tc.steps != nil, ok, "planned")
			if ok {
				kinds := make([]stepKind, len(steps))
				for i, s := range steps {
					kinds[i] = s.kind
				}
				require.Equal(t, tc.steps, kinds)
			}
			orig := reflect.New(tc.typ)
			require.NoError(t, json.Unmarshal([]byte(tc.json), orig.Interface()))
			if d, ok := orig.Interface().(*nestedDoc); ok {
				d.Who = &named{N: []string{"w"}}
			}
			before := reflect.New(tc.typ)
			before.Elem().Set(orig.Elem())
			shallow := sharedMemory(orig.Elem(), before.Elem(), "v")
			require.Equal(t, tc.shares, shallow != "", "a shallow copy shares %q", shallow)
			if !ok {
				return
			}
			cp := reflect.New(tc.typ)
			cp.Elem().Set(orig.Elem())
			apply(steps, cp.UnsafePointer())
			require.True(t, reflect.DeepEqual(orig.Elem().Interface(), cp.Elem().Interface()))
			if p := sharedMemory(orig.Elem(), cp.Elem(), "v"); p != "" {
				t.Fatalf("the copy shares %s with the original", p)
			}
			require.True(t, reflect.DeepEqual(before.Elem().Interface(), orig.Elem().Interface()), "the original is unchanged")
		})
	}
}

// TestCopierPlanned checks what a Copy with a plan allocates: the copies
// of what the value refers to, and not the value itself.
func TestCopierPlanned(t *testing.T) {
	type withTags struct {
		ID   string   `json:"id"`
		Tags []string `json:"tags"`
	}
	type withMap struct {
		ID   string            `json:"id"`
		Addr map[string]string `json:"addr"`
	}
	var tags Copier[withTags]
	tags.Init()
	require.True(t, tags.planned)
	var addr Copier[withMap]
	addr.Init()
	require.True(t, addr.planned)
	var big Copier[[maxSteps + 1][]int]
	big.Init()
	require.False(t, big.planned)
	v := withTags{ID: "a", Tags: []string{"x", "y"}}
	m := withMap{ID: "a", Addr: map[string]string{"street": "s", "city": "c", "zip": "z"}}
	var b [maxSteps + 1][]int
	b[3] = []int{1}
	cases := []struct {
		name string
		copy func()
		want float64
	}{
		{"[]string", func() { v := tags.Copy(v); _ = v }, 1},
		// The map and its one group of slots.
		{"map[string]string", func() { m := addr.Copy(m); _ = m }, 2},
		// One, the []int: no plan, the Func on a scratch value.
		{"no plan", func() { b := big.Copy(b); _ = b }, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, testing.AllocsPerRun(1000, tc.copy))
		})
	}
	cp := big.Copy(b)
	cp[3][0] = 2
	require.Equal(t, 1, b[3][0], "a copy without a plan is deep too")
}

// TestCopierUnderGC checks copies made while the garbage collector runs
// (and moves nothing it should keep): a plan writes the references it
// makes into a T on the caller's stack, which a collection may scan, and a
// stack may grow and move in the middle of it.
func TestCopierUnderGC(t *testing.T) {
	type doc struct {
		ID   string            `json:"id"`
		Tags []string          `json:"tags"`
		Addr map[string]string `json:"addr"`
		Nums []float64         `json:"nums"`
		Any  any               `json:"any"`
		Best *flatDoc          `json:"best"`
	}
	var c Copier[doc]
	c.Init()
	require.True(t, c.planned)
	var orig doc
	require.NoError(t, json.Unmarshal([]byte(`{"id":"d","tags":["a","b","c"],"addr":{"k":"v"},"nums":[1,2],"any":{"x":["y"]},"best":{"id":"b"}}`), &orig))
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-done:
				return
			default:
				runtime.GC()
			}
		}
	}()
	var deep func(n int) doc // copies n frames down, so that stacks grow
	deep = func(n int) doc {
		if n == 0 {
			return c.Copy(orig)
		}
		return deep(n - 1)
	}
	for i := range 2000 {
		cp := deep(i % 64)
		cp.Tags[0] = "changed"
		cp.Addr["k"] = "changed"
		require.True(t, reflect.DeepEqual([]string{"a", "b", "c"}, orig.Tags), "iteration %d", i)
		require.Equal(t, "v", orig.Addr["k"])
		require.Equal(t, []float64{1, 2}, cp.Nums)
		require.Equal(t, map[string]any{"x": []any{"y"}}, cp.Any)
		require.Equal(t, "b", cp.Best.ID)
	}
	close(done)
	<-stopped
}
