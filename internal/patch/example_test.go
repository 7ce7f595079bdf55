package patch_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ttlstore/ttlstore/internal/patch"
)

// The example of Cosmos DB's partial document update page, through the
// wire form.
func ExampleApply() {
	doc := []byte(`{"id":"e379","name":"R-410 Road Bicycle","price":455.95,"inventory":{"quantity":15},"used":false,"tags":["r-series"]}`)
	ops, err := patch.Parse([]byte(`[
		{"op":"add","path":"/color","value":"silver"},
		{"op":"remove","path":"/used"},
		{"op":"set","path":"/price","value":355.45},
		{"op":"incr","path":"/inventory/quantity","value":10},
		{"op":"add","path":"/tags/-","value":"featured-bikes"},
		{"op":"move","from":"/color","path":"/inventory/color"}
	]`))
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := patch.Apply(doc, ops)
	fmt.Println(string(out), err)
	// Output:
	// {"id":"e379","name":"R-410 Road Bicycle","price":355.45,"inventory":{"quantity":25,"color":"silver"},"tags":["r-series","featured-bikes"]} <nil>
}

// A patch applies whole or not at all; the error names the operation that
// failed, and the partition key path the caller protects cannot change.
func ExampleApply_errors() {
	doc := []byte(`{"id":"s1","tenant":"acme","visits":9223372036854775806}`)
	ops := []patch.Op{
		{Kind: patch.Incr, Path: "/visits", Value: json.RawMessage(`1`)},
		{Kind: patch.Incr, Path: "/visits", Value: json.RawMessage(`1`)},
	}
	_, err := patch.Apply(doc, ops)
	var e *patch.Error
	fmt.Println(errors.Is(err, patch.ErrOverflow), errors.As(err, &e) && e.Index == 1)
	fmt.Println(err)

	_, err = patch.Apply(doc, []patch.Op{{Kind: patch.Set, Path: "/tenant", Value: json.RawMessage(`"other"`)}}, "/tenant")
	fmt.Println(err)
	// Output:
	// true true
	// patch operation 1 (incr "/visits"): number out of range: 9223372036854775807 + 1 overflows int64
	// patch operation 0 (set "/tenant"): path cannot be patched: the path overlaps the protected path "/tenant"
}
