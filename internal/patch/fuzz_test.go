package patch_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ttlstore/ttlstore/internal/patch"
)

// sentinels are the errors Parse and Apply may wrap.
var sentinels = []error{patch.ErrInvalidPatch, patch.ErrInvalidDocument, patch.ErrProtectedPath,
	patch.ErrPathNotFound, patch.ErrNotNumber, patch.ErrOverflow}

// FuzzPatch feeds Parse the wire form and Apply a document, the parsed
// operations plus one built directly from the fuzzer's kind, path, from and
// value (which Parse would refuse in more ways than Apply sees), and one
// protected path. Neither may panic, whatever the bytes; every error must
// be an *Error wrapping a sentinel. When the document is valid JSON (which
// Apply requires but does not check), Apply must agree with the reference
// implementation: the same failure, or the same document, valid JSON and
// compact if the document was.
func FuzzPatch(f *testing.F) {
	seeds := []struct {
		doc, wire, path, from, value string
		kind                         uint8
		protected                    string
	}{
		{`{"id":"e","name":"R-410","price":455.95,"inventory":{"quantity":15},"used":false,"tags":["r-series"]}`,
			`[{"op":"add","path":"/color","value":"silver"},{"op":"remove","path":"/used"},{"op":"set","path":"/price","value":355.45},` +
				`{"op":"incr","path":"/inventory/quantity","value":10},{"op":"add","path":"/tags/-","value":"featured-bikes"},{"op":"move","from":"/color","path":"/inventory/color"}]`,
			"/tags/0", "", `"x"`, uint8(patch.Replace), "/tenant"},
		{`{"n":9223372036854775807,"f":1.7e308,"a":[1,2,3]}`, `[{"op":"incr","path":"/n","value":1}]`, "/f", "", "1.7e308", uint8(patch.Incr), ""},
		{`{"a":{"b":{"c":1}},"a/b":2,"m~n":3}`, `[{"op":"move","from":"/a/b","path":"/a~1b"}]`, "/m~0n", "/a/b/c", "", uint8(patch.Move), "/a/b"},
		{`{"a":1,"a":2,"\u0061":3}`, `[{"op":"remove","path":"/a"}]`, "/a", "", "", uint8(patch.Remove), ""},
		{` { "x" : [ ] } `, `[]`, "/x/-", "", " { \"k\" : [ 1 , 2 ] } ", uint8(patch.Add), ""},
		{`{"id":"x","_ts":1}`, `[{"op":"set","path":"/_ts","value":2}]`, "/id", "", `"y"`, uint8(patch.Set), "/id"},
		{`[1]`, `{"op":"set"}`, "", "", "", 0, "x"},
	}
	for _, s := range seeds {
		f.Add([]byte(s.doc), []byte(s.wire), s.path, s.from, []byte(s.value), s.kind, s.protected)
	}
	f.Fuzz(func(t *testing.T, doc, wire []byte, path, from string, value []byte, kind uint8, protected string) {
		ops, err := patch.Parse(wire)
		if err != nil {
			checkSentinel(t, "Parse", err)
			if !errors.Is(err, patch.ErrInvalidPatch) {
				t.Fatalf("Parse: %v does not match ErrInvalidPatch", err)
			}
			ops = nil
		}
		direct := patch.Op{Kind: patch.Kind(kind % 8), Path: path, From: from}
		if len(value) > 0 {
			direct.Value = json.RawMessage(value)
		}
		ops = append(ops, direct)
		var prot []string
		if protected != "" {
			prot = strings.Split(protected, ",")
		}
		out, err := patch.Apply(doc, ops, prot...)
		if err != nil {
			checkSentinel(t, "Apply", err)
			if out != nil {
				t.Fatalf("Apply returned %q with its error %v", out, err)
			}
		} else if len(out) < 2 || out[0] != '{' || out[len(out)-1] != '}' {
			t.Fatalf("Apply returned %q, not an object", out)
		}
		checkAgainstReference(t, doc, ops, prot)
	})
}

// checkSentinel fails unless err is an *Error that wraps one sentinel.
func checkSentinel(t *testing.T, call string, err error) {
	t.Helper()
	var e *patch.Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: %v is not a *patch.Error", call, err)
	}
	n := 0
	for _, s := range sentinels {
		if errors.Is(err, s) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%s: %v matches %d sentinels, want 1", call, err, n)
	}
	_ = err.Error() // the message must not panic either
}
