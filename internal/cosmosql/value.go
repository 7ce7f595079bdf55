package cosmosql

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// Values are what encoding/json decodes into with UseNumber — nil (null),
// bool, json.Number, string, []any, map[string]any — plus float64 (results
// of arithmetic) and undefined, the value of a missing property.

// undefinedType is the type of undefined.
type undefinedType struct{}

// undefined is the value of a missing property, and of any expression whose
// operands do not fit it (comparing a number with a string, say).
var undefined any = undefinedType{}

func isUndef(v any) bool { _, ok := v.(undefinedType); return ok }

// decodeJSON decodes one JSON value (numbers as json.Number) and rejects trailing data.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errTrailing
	}
	return v, nil
}

var errTrailing = jsonError("trailing data after JSON value")

type jsonError string

func (e jsonError) Error() string { return string(e) }

// toNum returns v as a float64 when v is a number.
func toNum(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case json.Number:
		f, err := strconv.ParseFloat(string(n), 64)
		return f, err == nil || isRangeErr(err)
	}
	return 0, false
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// numValue makes a number result; NaN and ±Inf, which JSON cannot carry, are undefined.
func numValue(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return undefined
	}
	return f
}

// Type ranks, in the order ORDER BY sorts them.
const (
	rankUndefined = iota
	rankNull
	rankBool
	rankNumber
	rankString
	rankArray
	rankObject
)

func rank(v any) int {
	switch v.(type) {
	case nil:
		return rankNull
	case bool:
		return rankBool
	case float64, json.Number:
		return rankNumber
	case string:
		return rankString
	case []any:
		return rankArray
	case map[string]any:
		return rankObject
	}
	return rankUndefined
}

// compareScalars orders two values of the same rank that are null, bool,
// number or string: -1, 0 or +1. Strings compare by code point.
func compareScalars(a, b any) int {
	switch x := a.(type) {
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case string:
		return strings.Compare(x, b.(string)) // byte order of UTF-8 is code-point order
	case nil:
		return 0
	}
	fa, _ := toNum(a)
	fb, _ := toNum(b)
	switch {
	case fa < fb:
		return -1
	case fa > fb:
		return 1
	}
	return 0
}

// sortCompare is the ORDER BY order: by type rank, then by value within
// null, bool, number and string; arrays and objects are equal among themselves.
func sortCompare(a, b any) int {
	ra, rb := rank(a), rank(b)
	if ra != rb {
		return ra - rb
	}
	if ra == rankArray || ra == rankObject || ra == rankUndefined {
		return 0
	}
	return compareScalars(a, b)
}

// deepEqual reports whether two defined values of the same type are equal
// (numbers as float64, arrays element-wise, objects member-wise).
func deepEqual(a, b any) bool {
	ra, rb := rank(a), rank(b)
	if ra != rb || ra == rankUndefined {
		return false
	}
	switch x := a.(type) {
	case []any:
		y := b.([]any)
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !deepEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y := b.(map[string]any)
		if len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !deepEqual(xv, yv) {
				return false
			}
		}
		return true
	}
	return compareScalars(a, b) == 0
}

// encodeValue appends v as JSON to buf (no HTML escaping). v must be defined.
func encodeValue(buf *bytes.Buffer, v any) {
	if f, ok := v.(float64); ok && f == math.Trunc(f) && math.Abs(f) < 1e15 {
		buf.WriteString(strconv.FormatFloat(f, 'f', -1, 64))
		return
	}
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // values come from JSON or arithmetic; they always encode
	buf.Truncate(buf.Len() - 1)
}
