package patch_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/ttlstore/ttlstore/internal/patch"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  []patch.Op
		index int // the failing operation's, when want is nil
	}{
		{name: "every kind, as the SDKs send them",
			in: `[{"op":"add","path":"/a","value":1},{"op":"set","path":"/b","value":"x"},{"op":"replace","path":"/c","value":null},` +
				`{"op":"remove","path":"/d"},{"op":"incr","path":"/e","value":-2.5},{"op":"move","from":"/f","path":"/g"}]`,
			want: []patch.Op{
				{Kind: patch.Add, Path: "/a", Value: []byte("1")},
				{Kind: patch.Set, Path: "/b", Value: []byte(`"x"`)},
				{Kind: patch.Replace, Path: "/c", Value: []byte("null")},
				{Kind: patch.Remove, Path: "/d"},
				{Kind: patch.Incr, Path: "/e", Value: []byte("-2.5")},
				{Kind: patch.Move, From: "/f", Path: "/g"},
			}},
		{name: "members in any order, whitespace anywhere", in: " [ { \"value\" : { \"k\" : 1 } , \"path\" : \"/a\" , \"op\" : \"set\" } ] ",
			want: []patch.Op{{Kind: patch.Set, Path: "/a", Value: []byte(`{ "k" : 1 }`)}}},
		{name: "escaped strings are decoded", in: `[{"op":"s\u0065t","path":"/a\/b\u00e9","value":1}]`,
			want: []patch.Op{{Kind: patch.Set, Path: "/a/bé", Value: []byte("1")}}},
		{name: "an empty array", in: `[]`, want: []patch.Op{}},
		{name: "not JSON", in: `[{"op":"set"`, index: -1},
		{name: "not an array", in: `{"operations":[]}`, index: -1},
		{name: "an element that is not an object", in: `[{"op":"remove","path":"/a"},"remove"]`, index: 1},
		{name: "an unknown op", in: `[{"op":"copy","from":"/a","path":"/b"}]`},
		{name: "op names are case-sensitive", in: `[{"op":"Set","path":"/a","value":1}]`},
		{name: "member names are case-sensitive", in: `[{"OP":"set","path":"/a","value":1}]`},
		{name: "an unknown member", in: `[{"op":"set","path":"/a","value":1,"vaule":2}]`},
		{name: "a repeated member", in: `[{"op":"set","path":"/a","path":"/b","value":1}]`},
		{name: "op is not a string", in: `[{"op":1,"path":"/a","value":1}]`},
		{name: "path is not a string", in: `[{"op":"set","path":["a"],"value":1}]`},
		{name: "no op", in: `[{"path":"/a","value":1}]`},
		{name: "no path", in: `[{"op":"set","value":1}]`},
		{name: "no value for set", in: `[{"op":"set","path":"/a"}]`},
		{name: "a value for remove", in: `[{"op":"remove","path":"/a","value":null}]`},
		{name: "a from for replace", in: `[{"op":"replace","from":"/b","path":"/a","value":1}]`},
		{name: "no from for move", in: `[{"op":"move","path":"/a"}]`},
		{name: "a path without a slash", in: `[{"op":"remove","path":"a"}]`},
		{name: "an incr value that is not a number", in: `[{"op":"incr","path":"/a","value":"1"}]`},
		{name: "a move into its own child", in: `[{"op":"move","from":"/a","path":"/a/b"}]`},
		{name: "the index of the failing operation", in: `[{"op":"remove","path":"/a"},{"op":"remove","path":"/b"},{"op":"remove","path":"b"}]`, index: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := patch.Parse([]byte(tc.in))
			if tc.want != nil {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if len(got) == 0 && len(tc.want) == 0 {
					return
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("Parse =\n  %+v\nwant\n  %+v", got, tc.want)
				}
				return
			}
			var e *patch.Error
			if got != nil || !errors.Is(err, patch.ErrInvalidPatch) || !errors.As(err, &e) {
				t.Fatalf("Parse = %+v, %v; want nil and an *Error matching ErrInvalidPatch", got, err)
			}
			if e.Index != tc.index {
				t.Fatalf("Parse's error %v has Index %d, want %d", err, e.Index, tc.index)
			}
		})
	}
}

// Parse copies the values, so the caller may reuse its buffer.
func TestParseCopiesValues(t *testing.T) {
	in := []byte(`[{"op":"set","path":"/a","value":[1,2,3]}]`)
	ops, err := patch.Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		in[i] = ' '
	}
	if string(ops[0].Value) != "[1,2,3]" {
		t.Fatalf("Value changed with Parse's input: %q", ops[0].Value)
	}
}

func TestKindString(t *testing.T) {
	want := map[patch.Kind]string{patch.Add: "add", patch.Set: "set", patch.Replace: "replace", patch.Remove: "remove",
		patch.Incr: "incr", patch.Move: "move", 0: "Kind(0)", 7: "Kind(7)"}
	for k, s := range want {
		if k.String() != s {
			t.Errorf("Kind(%d).String() = %q, want %q", k, k.String(), s)
		}
	}
}
