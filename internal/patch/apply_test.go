package patch_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ttlstore/ttlstore/internal/patch"
)

// applyCase is one rule: a document, a patch in the wire form (or, for
// what Parse would refuse first, as Go values), and either the exact
// output or the sentinel and the index of the failing operation.
type applyCase struct {
	name      string
	doc       string
	patch     string     // the wire form, when ops is nil
	ops       []patch.Op // Go values, for operations Parse would refuse
	protected []string
	want      string // the exact output, when err is nil
	err       error  // the sentinel Apply's error must match
	index     int    // the failing operation's index, when err is not nil
	path      string // the path the error names, when not ""
}

// op builds an operation for the cases that bypass Parse.
func op(k patch.Kind, path, value string) patch.Op {
	o := patch.Op{Kind: k, Path: path}
	if value != "" {
		o.Value = json.RawMessage(value)
	}
	return o
}

func runApplyCases(t *testing.T, cases []applyCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ops := tc.ops
			if ops == nil {
				var err error
				if ops, err = patch.Parse([]byte(tc.patch)); err != nil {
					t.Fatalf("Parse(%s): %v", tc.patch, err)
				}
			}
			doc := []byte(tc.doc)
			before := bytes.Clone(doc)
			got, err := patch.Apply(doc, ops, tc.protected...)
			if !bytes.Equal(doc, before) {
				t.Fatalf("Apply changed its input document to %s", doc)
			}
			if tc.err == nil {
				if err != nil {
					t.Fatalf("Apply: %v, want %s", err, tc.want)
				}
				if string(got) != tc.want {
					t.Fatalf("Apply =\n  %s\nwant\n  %s", got, tc.want)
				}
				return
			}
			if got != nil || !errors.Is(err, tc.err) {
				t.Fatalf("Apply = %s, %v; want nil and an error matching %v", got, err, tc.err)
			}
			var e *patch.Error
			if !errors.As(err, &e) {
				t.Fatalf("Apply's error %v is not a *patch.Error", err)
			}
			if e.Index != tc.index {
				t.Fatalf("Apply's error %v has Index %d, want %d", err, e.Index, tc.index)
			}
			if tc.path != "" && e.Path != tc.path {
				t.Fatalf("Apply's error %v has Path %q, want %q", err, e.Path, tc.path)
			}
		})
	}
}

// The example of Cosmos DB's documentation (partial-document-update.md),
// result as documented.
func TestApplyCosmosExample(t *testing.T) {
	runApplyCases(t, []applyCase{{
		name: "documentation example",
		doc:  `{"id":"e379aea5","name":"R-410 Road Bicycle","price":455.95,"inventory":{"quantity":15},"used":false,"categoryId":"road-bikes","tags":["r-series"]}`,
		patch: `[
			{ "op": "add", "path": "/color", "value": "silver" },
			{ "op": "remove", "path": "/used" },
			{ "op": "set", "path": "/price", "value": 355.45 },
			{ "op": "incr", "path": "/inventory/quantity", "value": 10 },
			{ "op": "add", "path": "/tags/-", "value": "featured-bikes" },
			{ "op": "move", "from": "/color", "path": "/inventory/color" }
		]`,
		want: `{"id":"e379aea5","name":"R-410 Road Bicycle","price":355.45,"inventory":{"quantity":25,"color":"silver"},"categoryId":"road-bikes","tags":["r-series","featured-bikes"]}`,
	}})
}

func TestApplyAdd(t *testing.T) {
	doc := `{"a":1,"o":{"x":1},"arr":[10,20,30],"s":"str"}`
	runApplyCases(t, []applyCase{
		{name: "creates an absent member at the end", doc: doc, patch: `[{"op":"add","path":"/b","value":2}]`,
			want: `{"a":1,"o":{"x":1},"arr":[10,20,30],"s":"str","b":2}`},
		{name: "replaces an existing member in place", doc: doc, patch: `[{"op":"add","path":"/a","value":{"k":[1]}}]`,
			want: `{"a":{"k":[1]},"o":{"x":1},"arr":[10,20,30],"s":"str"}`},
		{name: "creates in a nested object", doc: doc, patch: `[{"op":"add","path":"/o/y","value":true}]`,
			want: `{"a":1,"o":{"x":1,"y":true},"arr":[10,20,30],"s":"str"}`},
		{name: "inserts into an array, shifting later elements", doc: doc, patch: `[{"op":"add","path":"/arr/1","value":15}]`,
			want: `{"a":1,"o":{"x":1},"arr":[10,15,20,30],"s":"str"}`},
		{name: "inserts at index 0", doc: doc, patch: `[{"op":"add","path":"/arr/0","value":5}]`,
			want: `{"a":1,"o":{"x":1},"arr":[5,10,20,30],"s":"str"}`},
		{name: "index equal to the length appends", doc: doc, patch: `[{"op":"add","path":"/arr/3","value":40}]`,
			want: `{"a":1,"o":{"x":1},"arr":[10,20,30,40],"s":"str"}`},
		{name: "dash appends", doc: doc, patch: `[{"op":"add","path":"/arr/-","value":40}]`,
			want: `{"a":1,"o":{"x":1},"arr":[10,20,30,40],"s":"str"}`},
		{name: "dash appends to an empty array", doc: `{"e":[]}`, patch: `[{"op":"add","path":"/e/-","value":"x"}]`,
			want: `{"e":["x"]}`},
		{name: "index past the length fails", doc: doc, patch: `[{"op":"add","path":"/arr/4","value":0}]`,
			err: patch.ErrPathNotFound},
		{name: "no intermediate object is created", doc: doc, patch: `[{"op":"add","path":"/nonExistentParent/child","value":"bar"}]`,
			err: patch.ErrPathNotFound},
		{name: "no intermediate object is created two levels down", doc: doc, patch: `[{"op":"add","path":"/o/p/q","value":1}]`,
			err: patch.ErrPathNotFound},
		{name: "a scalar parent fails", doc: doc, patch: `[{"op":"add","path":"/s/x","value":1}]`,
			err: patch.ErrPathNotFound},
		{name: "a non-index segment in an array fails", doc: doc, patch: `[{"op":"add","path":"/arr/x","value":1}]`,
			err: patch.ErrPathNotFound},
		{name: "a leading zero is not an index", doc: doc, patch: `[{"op":"add","path":"/arr/01","value":1}]`,
			err: patch.ErrPathNotFound},
		{name: "a negative number is not an index", doc: doc, patch: `[{"op":"add","path":"/arr/-1","value":1}]`,
			err: patch.ErrPathNotFound},
		{name: "a plus sign is not an index", doc: doc, patch: `[{"op":"add","path":"/arr/+1","value":1}]`,
			err: patch.ErrPathNotFound},
		{name: "a huge index is out of bounds", doc: doc, patch: `[{"op":"add","path":"/arr/123456789012345678901234567890","value":1}]`,
			err: patch.ErrPathNotFound},
		{name: "in an object, digits and dash are member names", doc: `{"o":{}}`,
			patch: `[{"op":"add","path":"/o/0","value":1},{"op":"add","path":"/o/-","value":2},{"op":"add","path":"/o/12345678901234567890","value":3}]`,
			want:  `{"o":{"0":1,"-":2,"12345678901234567890":3}}`},
		{name: "null is a value", doc: doc, patch: `[{"op":"add","path":"/n","value":null}]`,
			want: `{"a":1,"o":{"x":1},"arr":[10,20,30],"s":"str","n":null}`},
		{name: "into an element of an array", doc: `{"c":[{"a":1},{"b":2}]}`, patch: `[{"op":"add","path":"/c/1/CamelCase","value":"x"}]`,
			want: `{"c":[{"a":1},{"b":2,"CamelCase":"x"}]}`},
	})
}

func TestApplySet(t *testing.T) {
	doc := `{"a":1,"arr":[10,20,30]}`
	runApplyCases(t, []applyCase{
		{name: "creates an absent member at the end", doc: doc, patch: `[{"op":"set","path":"/b","value":"x"}]`,
			want: `{"a":1,"arr":[10,20,30],"b":"x"}`},
		{name: "replaces an existing member in place", doc: doc, patch: `[{"op":"set","path":"/a","value":[1,2]}]`,
			want: `{"a":[1,2],"arr":[10,20,30]}`},
		{name: "replaces an array element without shifting", doc: doc, patch: `[{"op":"set","path":"/arr/1","value":25}]`,
			want: `{"a":1,"arr":[10,25,30]}`},
		{name: "does not append at the length", doc: doc, patch: `[{"op":"set","path":"/arr/3","value":40}]`,
			err: patch.ErrPathNotFound},
		{name: "does not append with dash", doc: doc, patch: `[{"op":"set","path":"/arr/-","value":40}]`,
			err: patch.ErrPathNotFound},
		{name: "no intermediate object is created", doc: doc, patch: `[{"op":"set","path":"/existingPath/newproperty","value":1}]`,
			err: patch.ErrPathNotFound},
		{name: "null is a value", doc: doc, patch: `[{"op":"set","path":"/a","value":null}]`,
			want: `{"a":null,"arr":[10,20,30]}`},
	})
}

func TestApplyReplace(t *testing.T) {
	doc := `{"a":1,"o":{"x":1},"arr":[10,20,30]}`
	runApplyCases(t, []applyCase{
		{name: "replaces an existing member in place", doc: doc, patch: `[{"op":"replace","path":"/a","value":"one"}]`,
			want: `{"a":"one","o":{"x":1},"arr":[10,20,30]}`},
		{name: "replaces a nested member", doc: doc, patch: `[{"op":"replace","path":"/o/x","value":2}]`,
			want: `{"a":1,"o":{"x":2},"arr":[10,20,30]}`},
		{name: "an absent member fails", doc: doc, patch: `[{"op":"replace","path":"/b","value":1}]`,
			err: patch.ErrPathNotFound},
		{name: "replaces an array element", doc: doc, patch: `[{"op":"replace","path":"/arr/2","value":33}]`,
			want: `{"a":1,"o":{"x":1},"arr":[10,20,33]}`},
		{name: "an index at the length fails", doc: doc, patch: `[{"op":"replace","path":"/arr/3","value":1}]`,
			err: patch.ErrPathNotFound},
		{name: "dash fails", doc: doc, patch: `[{"op":"replace","path":"/arr/-","value":1}]`,
			err: patch.ErrPathNotFound},
		{name: "a member removed earlier in the patch is absent", doc: doc,
			patch: `[{"op":"remove","path":"/a"},{"op":"replace","path":"/a","value":2}]`,
			err:   patch.ErrPathNotFound, index: 1},
		{name: "null is a value", doc: doc, patch: `[{"op":"replace","path":"/a","value":null}]`,
			want: `{"a":null,"o":{"x":1},"arr":[10,20,30]}`},
	})
}

func TestApplyRemove(t *testing.T) {
	doc := `{"a":1,"o":{"x":1,"y":2},"arr":[10,20,30]}`
	runApplyCases(t, []applyCase{
		{name: "removes a member", doc: doc, patch: `[{"op":"remove","path":"/a"}]`,
			want: `{"o":{"x":1,"y":2},"arr":[10,20,30]}`},
		{name: "removes the last member", doc: doc, patch: `[{"op":"remove","path":"/arr"}]`,
			want: `{"a":1,"o":{"x":1,"y":2}}`},
		{name: "removes a nested member", doc: doc, patch: `[{"op":"remove","path":"/o/x"}]`,
			want: `{"a":1,"o":{"y":2},"arr":[10,20,30]}`},
		{name: "empties an object", doc: `{"o":{"x":1}}`, patch: `[{"op":"remove","path":"/o/x"}]`,
			want: `{"o":{}}`},
		{name: "an absent member fails", doc: doc, patch: `[{"op":"remove","path":"/b"}]`,
			err: patch.ErrPathNotFound},
		{name: "removes an element, shifting later ones", doc: doc, patch: `[{"op":"remove","path":"/arr/0"}]`,
			want: `{"a":1,"o":{"x":1,"y":2},"arr":[20,30]}`},
		{name: "an index at the length fails", doc: doc, patch: `[{"op":"remove","path":"/arr/3"}]`,
			err: patch.ErrPathNotFound},
		{name: "dash fails", doc: doc, patch: `[{"op":"remove","path":"/arr/-"}]`,
			err: patch.ErrPathNotFound},
		{name: "removing twice fails the second time", doc: doc,
			patch: `[{"op":"remove","path":"/a"},{"op":"remove","path":"/a"}]`,
			err:   patch.ErrPathNotFound, index: 1},
		{name: "an absent parent fails", doc: doc, patch: `[{"op":"remove","path":"/p/x"}]`,
			err: patch.ErrPathNotFound},
	})
}

func TestApplyIncr(t *testing.T) {
	runApplyCases(t, []applyCase{
		{name: "integer plus integer", doc: `{"n":5}`, patch: `[{"op":"incr","path":"/n","value":10}]`,
			want: `{"n":15}`},
		{name: "negative increment", doc: `{"n":5}`, patch: `[{"op":"incr","path":"/n","value":-7}]`,
			want: `{"n":-2}`},
		{name: "exact beyond 2^53", doc: `{"n":9007199254740993}`, patch: `[{"op":"incr","path":"/n","value":1}]`,
			want: `{"n":9007199254740994}`},
		{name: "exact up to the int64 maximum", doc: `{"n":9223372036854775806}`, patch: `[{"op":"incr","path":"/n","value":1}]`,
			want: `{"n":9223372036854775807}`},
		{name: "exact down to the int64 minimum", doc: `{"n":-9223372036854775807}`, patch: `[{"op":"incr","path":"/n","value":-1}]`,
			want: `{"n":-9223372036854775808}`},
		{name: "int64 overflow fails", doc: `{"n":9223372036854775807}`, patch: `[{"op":"incr","path":"/n","value":1}]`,
			err: patch.ErrOverflow},
		{name: "int64 underflow fails", doc: `{"n":-9223372036854775808}`, patch: `[{"op":"incr","path":"/n","value":-1}]`,
			err: patch.ErrOverflow},
		{name: "integer plus float is a float", doc: `{"n":1}`, patch: `[{"op":"incr","path":"/n","value":0.5}]`,
			want: `{"n":1.5}`},
		{name: "float plus integer is a float", doc: `{"n":2.25}`, patch: `[{"op":"incr","path":"/n","value":-1}]`,
			want: `{"n":1.25}`},
		{name: "float plus float rounds as float64", doc: `{"n":0.1}`, patch: `[{"op":"incr","path":"/n","value":0.2}]`,
			want: `{"n":0.30000000000000004}`},
		{name: "an integral float is written without a fraction", doc: `{"n":1}`, patch: `[{"op":"incr","path":"/n","value":1.0}]`,
			want: `{"n":2}`},
		{name: "an exponent makes a float", doc: `{"n":1e2}`, patch: `[{"op":"incr","path":"/n","value":1}]`,
			want: `{"n":101}`},
		{name: "an integer beyond int64 is a float, and rounds", doc: `{"n":9223372036854775808}`, patch: `[{"op":"incr","path":"/n","value":1}]`,
			want: `{"n":9223372036854776000}`},
		{name: "large floats use an exponent", doc: `{"n":1e21}`, patch: `[{"op":"incr","path":"/n","value":1e21}]`,
			want: `{"n":2e+21}`},
		{name: "small floats use an exponent", doc: `{"n":1e-7}`, patch: `[{"op":"incr","path":"/n","value":1e-7}]`,
			want: `{"n":2e-7}`},
		{name: "an infinite float sum fails", doc: `{"n":1.7e308}`, patch: `[{"op":"incr","path":"/n","value":1.7e308}]`,
			err: patch.ErrOverflow},
		{name: "an absent member is created with the value as written", doc: `{"a":1}`, patch: `[{"op":"incr","path":"/n","value":2.50}]`,
			want: `{"a":1,"n":2.50}`},
		{name: "a string is not a number", doc: `{"n":"5"}`, patch: `[{"op":"incr","path":"/n","value":1}]`,
			err: patch.ErrNotNumber},
		{name: "null is not a number", doc: `{"n":null}`, patch: `[{"op":"incr","path":"/n","value":1}]`,
			err: patch.ErrNotNumber},
		{name: "an object is not a number", doc: `{"n":{"a":1}}`, patch: `[{"op":"incr","path":"/n","value":1}]`,
			err: patch.ErrNotNumber},
		{name: "a boolean is not a number", doc: `{"n":true}`, patch: `[{"op":"incr","path":"/n","value":1}]`,
			err: patch.ErrNotNumber},
		{name: "the increment must be a number", doc: `{"n":1}`, ops: []patch.Op{op(patch.Incr, "/n", `"1"`)},
			err: patch.ErrInvalidPatch},
		{name: "an array element is changed in place, not inserted before", doc: `{"numbers":[5]}`,
			patch: `[{"op":"incr","path":"/numbers/0","value":13}]`, want: `{"numbers":[18]}`},
		{name: "an array index past the end fails", doc: `{"numbers":[5]}`,
			patch: `[{"op":"incr","path":"/numbers/1","value":1}]`, err: patch.ErrPathNotFound},
		{name: "dash fails", doc: `{"numbers":[5]}`,
			patch: `[{"op":"incr","path":"/numbers/-","value":1}]`, err: patch.ErrPathNotFound},
		{name: "no intermediate object is created", doc: `{"a":1}`,
			patch: `[{"op":"incr","path":"/p/n","value":1}]`, err: patch.ErrPathNotFound},
		{name: "increments add up within a patch", doc: `{"n":1}`,
			patch: `[{"op":"incr","path":"/n","value":1},{"op":"incr","path":"/n","value":1},{"op":"incr","path":"/m","value":3},{"op":"incr","path":"/m","value":4}]`,
			want:  `{"n":3,"m":7}`},
	})
}

func TestApplyMove(t *testing.T) {
	doc := `{"a":1,"o":{"x":1},"arr":["p","q","r"]}`
	runApplyCases(t, []applyCase{
		{name: "to an absent member, created at the end", doc: doc, patch: `[{"op":"move","from":"/a","path":"/b"}]`,
			want: `{"o":{"x":1},"arr":["p","q","r"],"b":1}`},
		{name: "onto an existing member, replacing it in place", doc: doc, patch: `[{"op":"move","from":"/a","path":"/o"}]`,
			want: `{"o":1,"arr":["p","q","r"]}`},
		{name: "into a nested object", doc: doc, patch: `[{"op":"move","from":"/a","path":"/o/a"}]`,
			want: `{"o":{"x":1,"a":1},"arr":["p","q","r"]}`},
		{name: "an object, whole", doc: doc, patch: `[{"op":"move","from":"/o","path":"/arr/-"}]`,
			want: `{"a":1,"arr":["p","q","r",{"x":1}]}`},
		{name: "within an array, indexing after the removal", doc: doc, patch: `[{"op":"move","from":"/arr/0","path":"/arr/2"}]`,
			want: `{"a":1,"o":{"x":1},"arr":["q","r","p"]}`},
		{name: "into an array inserts", doc: doc, patch: `[{"op":"move","from":"/a","path":"/arr/1"}]`,
			want: `{"o":{"x":1},"arr":["p",1,"q","r"]}`},
		{name: "out of an array", doc: doc, patch: `[{"op":"move","from":"/arr/1","path":"/q"}]`,
			want: `{"a":1,"o":{"x":1},"arr":["p","r"],"q":"q"}`},
		{name: "to the parent of from", doc: `{"a":{"x":1}}`, patch: `[{"op":"move","from":"/a/x","path":"/a"}]`,
			want: `{"a":1}`},
		{name: "onto itself changes nothing", doc: doc, patch: `[{"op":"move","from":"/o","path":"/o"}]`,
			want: doc},
		{name: "onto itself needs from to exist", doc: doc, patch: `[{"op":"move","from":"/z","path":"/z"}]`,
			err: patch.ErrPathNotFound, path: "/z"},
		{name: "an absent from fails", doc: doc, patch: `[{"op":"move","from":"/z","path":"/y"}]`,
			err: patch.ErrPathNotFound, path: "/z"},
		{name: "an absent from index fails", doc: doc, patch: `[{"op":"move","from":"/arr/3","path":"/y"}]`,
			err: patch.ErrPathNotFound, path: "/arr/3"},
		{name: "into a child of from fails", doc: doc, ops: []patch.Op{{Kind: patch.Move, From: "/o", Path: "/o/x"}},
			err: patch.ErrInvalidPatch},
		{name: "into a grandchild of from fails, escapes decoded", doc: doc, ops: []patch.Op{{Kind: patch.Move, From: "/o~1", Path: "/o~1/x/y"}},
			err: patch.ErrInvalidPatch},
		{name: "a sibling with from as a prefix of its name is not a child", doc: doc, patch: `[{"op":"move","from":"/o","path":"/ox"}]`,
			want: `{"a":1,"arr":["p","q","r"],"ox":{"x":1}}`},
		{name: "needs a from", doc: doc, ops: []patch.Op{{Kind: patch.Move, Path: "/b"}},
			err: patch.ErrInvalidPatch},
		{name: "an absent target parent fails", doc: doc, patch: `[{"op":"move","from":"/a","path":"/p/q"}]`,
			err: patch.ErrPathNotFound, path: "/p/q"},
		{name: "Cosmos SDK test: add, move between array elements, add again", doc: `{"children":[{"id":"c0"},{"id":"c1"}]}`,
			patch: `[{"op":"add","path":"/children/1/CamelCase","value":"1st patch"},{"op":"move","from":"/children/1/CamelCase","path":"/children/0/CamelCase"},{"op":"add","path":"/children/1/CamelCase","value":"2nd patch"}]`,
			want:  `{"children":[{"id":"c0","CamelCase":"1st patch"},{"id":"c1","CamelCase":"2nd patch"}]}`},
	})
}

func TestApplyPaths(t *testing.T) {
	runApplyCases(t, []applyCase{
		{name: "~1 is a slash in a name", doc: `{"a/b":1,"a":{"b":2}}`, patch: `[{"op":"set","path":"/a~1b","value":9}]`,
			want: `{"a/b":9,"a":{"b":2}}`},
		{name: "~0 is a tilde in a name", doc: `{"m~n":1}`, patch: `[{"op":"set","path":"/m~0n","value":9}]`,
			want: `{"m~n":9}`},
		{name: "~01 is a tilde and a one", doc: `{"~1":1,"/":2}`, patch: `[{"op":"set","path":"/~01","value":9}]`,
			want: `{"~1":9,"/":2}`},
		{name: "a new name is written with escapes", doc: `{}`, ops: []patch.Op{op(patch.Set, "/q\"b\\s~1\n", "1")},
			want: `{"q\"b\\s/\u000a":1}`},
		{name: "a new escaped name is found again", doc: `{}`,
			ops:  []patch.Op{op(patch.Set, "/q\"b", "1"), op(patch.Incr, "/q\"b", "1")},
			want: `{"q\"b":2}`},
		{name: "a name escaped in the document is matched decoded and kept as written", doc: `{"\u0061":1,"b":2}`,
			patch: `[{"op":"set","path":"/a","value":3}]`, want: `{"\u0061":3,"b":2}`},
		{name: "a slash alone names the empty member", doc: `{"":1}`, patch: `[{"op":"set","path":"/","value":2}]`,
			want: `{"":2}`},
		{name: "an empty segment inside a path", doc: `{"a":{"":{"b":1}}}`, patch: `[{"op":"set","path":"/a//b","value":2}]`,
			want: `{"a":{"":{"b":2}}}`},
		{name: "the root cannot be patched", doc: `{}`, ops: []patch.Op{op(patch.Set, "", "{}")},
			err: patch.ErrInvalidPatch},
		{name: "a path must begin with a slash", doc: `{"a":1}`, ops: []patch.Op{op(patch.Set, "a", "1")},
			err: patch.ErrInvalidPatch},
		{name: "~ must be followed by 0 or 1", doc: `{"a":1}`, ops: []patch.Op{op(patch.Set, "/a~2", "1")},
			err: patch.ErrInvalidPatch},
		{name: "a trailing ~ is invalid", doc: `{"a":1}`, ops: []patch.Op{op(patch.Set, "/a~", "1")},
			err: patch.ErrInvalidPatch},
		{name: "a path must be valid UTF-8", doc: `{"a":1}`, ops: []patch.Op{op(patch.Set, "/a\xff", "1")},
			err: patch.ErrInvalidPatch},
		{name: "a deep path", doc: `{"a":[{"b":[0,{"c":{"d":[1,2]}}]}]}`, patch: `[{"op":"incr","path":"/a/0/b/1/c/d/1","value":40}]`,
			want: `{"a":[{"b":[0,{"c":{"d":[1,42]}}]}]}`},
	})
}

func TestApplyProtected(t *testing.T) {
	doc := `{"id":"x","tenant":"t","a":{"b":1,"c":2},"a/b":0,"ttl":10,"_ts":5,"_etag":"e","_rid":"r","_self":"s","_attachments":"at"}`
	var cases []applyCase
	for _, p := range []string{"/id", "/_ts", "/_etag", "/_rid", "/_self", "/_attachments"} {
		cases = append(cases,
			applyCase{name: "set " + p, doc: doc, ops: []patch.Op{op(patch.Set, p, `"v"`)}, err: patch.ErrProtectedPath},
			applyCase{name: "remove " + p, doc: doc, ops: []patch.Op{op(patch.Remove, p, "")}, err: patch.ErrProtectedPath},
			applyCase{name: "move from " + p, doc: doc, ops: []patch.Op{{Kind: patch.Move, From: p, Path: "/z"}}, err: patch.ErrProtectedPath, path: p},
			applyCase{name: "move to " + p, doc: doc, ops: []patch.Op{{Kind: patch.Move, From: "/tenant", Path: p}}, err: patch.ErrProtectedPath, path: p},
			applyCase{name: "inside " + p, doc: doc, ops: []patch.Op{op(patch.Add, p+"/x", `1`)}, err: patch.ErrProtectedPath},
		)
	}
	cases = append(cases,
		applyCase{name: "an escaped system name is the same name", doc: doc, ops: []patch.Op{op(patch.Set, "/i\u0064", `"y"`)},
			err: patch.ErrProtectedPath},
		applyCase{name: "a protected path given by the caller", doc: doc, protected: []string{"/tenant"},
			patch: `[{"op":"set","path":"/tenant","value":"u"}]`, err: patch.ErrProtectedPath},
		applyCase{name: "the failing operation's index", doc: doc, protected: []string{"/tenant"},
			patch: `[{"op":"set","path":"/q","value":1},{"op":"remove","path":"/tenant"}]`, err: patch.ErrProtectedPath, index: 1},
		applyCase{name: "a path containing a protected path", doc: doc, protected: []string{"/a/b"},
			patch: `[{"op":"set","path":"/a","value":{}}]`, err: patch.ErrProtectedPath},
		applyCase{name: "a path inside a protected path", doc: doc, protected: []string{"/a/b"},
			patch: `[{"op":"set","path":"/a/b/c","value":1}]`, err: patch.ErrProtectedPath},
		applyCase{name: "a move whose from contains a protected path", doc: doc, protected: []string{"/a/b"},
			patch: `[{"op":"move","from":"/a","path":"/z"}]`, err: patch.ErrProtectedPath, path: "/a"},
		applyCase{name: "a sibling of a protected path is free", doc: doc, protected: []string{"/a/b"},
			patch: `[{"op":"set","path":"/a/c","value":3}]`,
			want:  `{"id":"x","tenant":"t","a":{"b":1,"c":3},"a/b":0,"ttl":10,"_ts":5,"_etag":"e","_rid":"r","_self":"s","_attachments":"at"}`},
		applyCase{name: "protected paths compare decoded", doc: doc, protected: []string{"/a~1b"},
			patch: `[{"op":"set","path":"/a/b","value":3},{"op":"set","path":"/a~1b","value":3}]`, err: patch.ErrProtectedPath, index: 1},
		applyCase{name: "an invalid protected path", doc: doc, protected: []string{"tenant"},
			patch: `[{"op":"set","path":"/q","value":1}]`, err: patch.ErrInvalidPatch, index: -1},
		applyCase{name: "ttl may be set", doc: `{"id":"x","ttl":10}`, patch: `[{"op":"set","path":"/ttl","value":-1}]`,
			want: `{"id":"x","ttl":-1}`},
		applyCase{name: "ttl may be removed", doc: `{"id":"x","ttl":10}`, patch: `[{"op":"remove","path":"/ttl"}]`,
			want: `{"id":"x"}`},
		applyCase{name: "ttl may be incremented", doc: `{"id":"x","ttl":10}`, patch: `[{"op":"incr","path":"/ttl","value":5}]`,
			want: `{"id":"x","ttl":15}`},
		applyCase{name: "other members with an underscore are free", doc: `{"id":"x"}`, patch: `[{"op":"set","path":"/_mine","value":1}]`,
			want: `{"id":"x","_mine":1}`},
	)
	runApplyCases(t, cases)
}

func TestApplyAllOrNothing(t *testing.T) {
	runApplyCases(t, []applyCase{
		{name: "a later failure undoes earlier operations", doc: `{"a":1,"n":1}`,
			patch: `[{"op":"set","path":"/a","value":2},{"op":"incr","path":"/n","value":1},{"op":"remove","path":"/zz"}]`,
			err:   patch.ErrPathNotFound, index: 2, path: "/zz"},
		{name: "each operation sees the ones before it", doc: `{}`,
			patch: `[{"op":"add","path":"/a","value":{}},{"op":"add","path":"/a/b","value":[]},{"op":"add","path":"/a/b/-","value":1},{"op":"set","path":"/a/b/0","value":2}]`,
			want:  `{"a":{"b":[2]}}`},
		{name: "a value added is expanded when a later path walks into it", doc: `{"a":0}`,
			patch: `[{"op":"set","path":"/a","value":{ "x" : [ 1 , { "y" : 2 } ] }},{"op":"incr","path":"/a/x/1/y","value":1}]`,
			want:  `{"a":{"x":[1,{"y":3}]}}`},
		{name: "the first failing operation is reported", doc: `{"a":1}`,
			patch: `[{"op":"remove","path":"/b"},{"op":"remove","path":"/c"}]`,
			err:   patch.ErrPathNotFound, index: 0, path: "/b"},
		{name: "no operations", doc: ` { "a" : [ 1 , 2 ] , "b" : 1.50 } `, patch: `[]`,
			want: `{ "a" : [ 1 , 2 ] , "b" : 1.50 }`},
	})
}

func TestApplyOperationChecks(t *testing.T) {
	doc := `{"a":1}`
	runApplyCases(t, []applyCase{
		{name: "the zero Kind", doc: doc, ops: []patch.Op{{Path: "/a"}}, err: patch.ErrInvalidPatch},
		{name: "an unknown Kind", doc: doc, ops: []patch.Op{{Kind: 99, Path: "/a"}}, err: patch.ErrInvalidPatch},
		{name: "add needs a value", doc: doc, ops: []patch.Op{op(patch.Add, "/a", "")}, err: patch.ErrInvalidPatch},
		{name: "set needs a value", doc: doc, ops: []patch.Op{op(patch.Set, "/a", "")}, err: patch.ErrInvalidPatch},
		{name: "replace needs a value", doc: doc, ops: []patch.Op{op(patch.Replace, "/a", "")}, err: patch.ErrInvalidPatch},
		{name: "incr needs a value", doc: doc, ops: []patch.Op{op(patch.Incr, "/a", "")}, err: patch.ErrInvalidPatch},
		{name: "remove takes no value", doc: doc, ops: []patch.Op{op(patch.Remove, "/a", "null")}, err: patch.ErrInvalidPatch},
		{name: "move takes no value", doc: doc, ops: []patch.Op{{Kind: patch.Move, From: "/a", Path: "/b", Value: json.RawMessage("1")}}, err: patch.ErrInvalidPatch},
		{name: "only move takes a from", doc: doc, ops: []patch.Op{{Kind: patch.Set, From: "/a", Path: "/b", Value: json.RawMessage("1")}}, err: patch.ErrInvalidPatch},
		{name: "a value must be JSON", doc: doc, ops: []patch.Op{op(patch.Set, "/a", "{")}, err: patch.ErrInvalidPatch},
		{name: "a value must be one JSON value", doc: doc, ops: []patch.Op{op(patch.Set, "/a", "1 2")}, err: patch.ErrInvalidPatch},
		{name: "a value must be valid UTF-8", doc: doc, ops: []patch.Op{op(patch.Set, "/a", "\"\xff\"")}, err: patch.ErrInvalidPatch},
		{name: "a malformed operation after good ones", doc: doc,
			ops: []patch.Op{op(patch.Set, "/b", "1"), op(patch.Set, "/c", "nul")}, err: patch.ErrInvalidPatch, index: 1},
		{name: "a value is written compactly", doc: doc, ops: []patch.Op{op(patch.Set, "/a", " {\n\t\"k\" : [ 1 , \"a b\" ] } ")},
			want: `{"a":{"k":[1,"a b"]}}`},
	})
}

func TestApplyDocument(t *testing.T) {
	set := `[{"op":"set","path":"/z","value":0}]`
	runApplyCases(t, []applyCase{
		{name: "numbers and strings are copied as written", doc: `{"a":1.50,"b":1e2,"c":-0,"d":"\u00e9\n","e":12345678901234567890123}`,
			patch: set, want: `{"a":1.50,"b":1e2,"c":-0,"d":"\u00e9\n","e":12345678901234567890123,"z":0}`},
		{name: "whitespace is kept inside the object and dropped around it", doc: "\n{ \"a\" : { \"b\" : [ 1 , 2 ] } ,\t\"c\" : \" x \" }\n",
			patch: set, want: "{ \"a\" : { \"b\" : [ 1 , 2 ] } ,\t\"c\" : \" x \",\"z\":0 }"},
		{name: "whitespace around replaced values is kept", doc: `{ "a" : 1 , "b" : [ 1 , 2 ] }`,
			patch: `[{"op":"set","path":"/a","value":2},{"op":"add","path":"/b/1","value":3},{"op":"remove","path":"/b/0"}]`,
			want:  `{ "a" : 2 , "b" : [ 3,2 ] }`},
		{name: "values no path walks into are copied unread, valid or not", doc: `{"a":[01,"\x"],"b":1}`,
			patch: `[{"op":"incr","path":"/b","value":1}]`, want: `{"a":[01,"\x"],"b":2}`},
		{name: "an object a path walks through is checked", doc: `{"a":{"b" 1},"c":1}`,
			patch: `[{"op":"set","path":"/a/b","value":1}]`, err: patch.ErrInvalidDocument, index: 0},
		{name: "the top-level object is checked up to the member", doc: `{"b","z":1}`, patch: set, err: patch.ErrInvalidDocument, index: 0},
		{name: "a patched member stays in place", doc: `{"a":1,"b":2,"c":3}`,
			patch: `[{"op":"set","path":"/b","value":9}]`, want: `{"a":1,"b":9,"c":3}`},
		{name: "not JSON", doc: `{"a":`, patch: set, err: patch.ErrInvalidDocument, index: -1},
		{name: "empty", doc: ``, patch: set, err: patch.ErrInvalidDocument, index: -1},
		{name: "an array", doc: `[1]`, patch: set, err: patch.ErrInvalidDocument, index: -1},
		{name: "a string", doc: `"{}"`, patch: set, err: patch.ErrInvalidDocument, index: -1},
		{name: "data after the object, met by a scan", doc: `{"a":1}{}`, patch: `[{"op":"set","path":"/a","value":0}]`, err: patch.ErrInvalidDocument, index: 0},
		{name: "data before the object", doc: `1{}`, patch: set, err: patch.ErrInvalidDocument, index: -1},
		{name: "a deeply nested document", doc: `{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
			patch: `[{"op":"remove","path":"/a"}]`, want: `{}`},
	})
}

func TestApplyDuplicateNames(t *testing.T) {
	runApplyCases(t, []applyCase{
		{name: "a path names the last duplicate, and writing it drops the earlier", doc: `{"a":1,"b":0,"a":2}`,
			patch: `[{"op":"incr","path":"/a","value":10}]`, want: `{"b":0,"a":12}`},
		{name: "set drops the earlier duplicates", doc: `{"a":1,"b":0,"a":2}`,
			patch: `[{"op":"set","path":"/a","value":5}]`, want: `{"b":0,"a":5}`},
		{name: "replace drops the earlier duplicates", doc: `{"a":1,"b":0,"a":2,"a":3}`,
			patch: `[{"op":"replace","path":"/a","value":5}]`, want: `{"b":0,"a":5}`},
		{name: "remove removes every duplicate", doc: `{"a":1,"b":0,"a":2}`,
			patch: `[{"op":"remove","path":"/a"}]`, want: `{"b":0}`},
		{name: "move takes the last and removes every duplicate", doc: `{"a":1,"b":0,"a":2}`,
			patch: `[{"op":"move","from":"/a","path":"/c"}]`, want: `{"b":0,"c":2}`},
		{name: "duplicates compare decoded", doc: `{"a":1,"\u0061":2}`,
			patch: `[{"op":"incr","path":"/a","value":1}]`, want: `{"\u0061":3}`},
		{name: "untouched duplicates are kept", doc: `{"a":1,"a":2,"b":0}`,
			patch: `[{"op":"set","path":"/b","value":1}]`, want: `{"a":1,"a":2,"b":1}`},
	})
}

func TestErrorMessage(t *testing.T) {
	long := "/" + strings.Repeat("é", 100)
	_, err := patch.Apply([]byte(`{}`), []patch.Op{op(patch.Remove, long, "")})
	if !errors.Is(err, patch.ErrPathNotFound) {
		t.Fatalf("err = %v", err)
	}
	msg := err.Error()
	if len(msg) > 300 || !strings.Contains(msg, "... (201 bytes)") || !strings.HasPrefix(msg, `patch operation 0 (remove "/éé`) {
		t.Fatalf("message %q: want the path cut to 64 bytes with a marker", msg)
	}
	var e *patch.Error
	if !errors.As(err, &e) || e.Path != long {
		t.Fatalf("Error.Path should be whole: %+v", e)
	}
	_, err = patch.Apply([]byte(`{"b","a":1}`), []patch.Op{op(patch.Remove, "/a", "")})
	if want := `patch operation 0 (remove "/a"): invalid document: offset 4: not valid JSON`; err == nil || err.Error() != want {
		t.Fatalf("message %q, want %q", err, want)
	}
}
