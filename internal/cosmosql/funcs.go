package cosmosql

import (
	"strings"
	"unicode/utf8"
)

// function is a supported system function: its arity and its body. Bodies
// get every argument evaluated and return undefined for arguments of the
// wrong type, as Cosmos does.
type function struct {
	min, max int
	fn       func(args []any) any
}

// functions maps upper-case names to the supported system functions.
var functions = map[string]function{
	"IS_DEFINED":     {1, 1, func(a []any) any { return !isUndef(a[0]) }},
	"IS_NULL":        {1, 1, isRank(rankNull)},
	"IS_BOOL":        {1, 1, isRank(rankBool)},
	"IS_NUMBER":      {1, 1, isRank(rankNumber)},
	"IS_STRING":      {1, 1, isRank(rankString)},
	"IS_ARRAY":       {1, 1, isRank(rankArray)},
	"IS_OBJECT":      {1, 1, isRank(rankObject)},
	"IS_PRIMITIVE":   {1, 1, isPrimitive},
	"STARTSWITH":     {2, 3, stringTest(strings.HasPrefix)},
	"ENDSWITH":       {2, 3, stringTest(strings.HasSuffix)},
	"CONTAINS":       {2, 3, stringTest(strings.Contains)},
	"LOWER":          {1, 1, stringMap(strings.ToLower)},
	"UPPER":          {1, 1, stringMap(strings.ToUpper)},
	"LENGTH":         {1, 1, length},
	"ARRAY_LENGTH":   {1, 1, arrayLength},
	"ARRAY_CONTAINS": {2, 3, arrayContains},
}

// aggregates are the aggregate functions, allowed only as a whole SELECT item.
var aggregates = map[string]bool{"COUNT": true, "SUM": true, "MIN": true, "MAX": true, "AVG": true}

func isRank(r int) func([]any) any {
	return func(a []any) any { return rank(a[0]) == r }
}

func isPrimitive(a []any) any {
	r := rank(a[0])
	return r >= rankNull && r <= rankString
}

// optBool reads the optional boolean third argument; ok is false when it is present and not a bool.
func optBool(a []any) (b, ok bool) {
	if len(a) < 3 {
		return false, true
	}
	b, ok = a[2].(bool)
	return b, ok
}

// stringTest builds STARTSWITH, ENDSWITH and CONTAINS: (s, t [, ignoreCase]).
func stringTest(test func(s, t string) bool) func([]any) any {
	return func(a []any) any {
		s, ok1 := a[0].(string)
		t, ok2 := a[1].(string)
		fold, ok3 := optBool(a)
		if !ok1 || !ok2 || !ok3 {
			return undefined
		}
		return test(strFold(s, fold), strFold(t, fold))
	}
}

func stringMap(f func(string) string) func([]any) any {
	return func(a []any) any {
		if s, ok := a[0].(string); ok {
			return f(s)
		}
		return undefined
	}
}

// length is LENGTH: the number of characters (code points) of a string.
func length(a []any) any {
	if s, ok := a[0].(string); ok {
		return float64(utf8.RuneCountInString(s))
	}
	return undefined
}

func arrayLength(a []any) any {
	if arr, ok := a[0].([]any); ok {
		return float64(len(arr))
	}
	return undefined
}

// arrayContains is ARRAY_CONTAINS(arr, v [, partial]). With partial true an
// object v matches an object element holding at least v's members, each
// deep-equal.
func arrayContains(a []any) any {
	arr, ok := a[0].([]any)
	partial, ok2 := optBool(a)
	if !ok || !ok2 || isUndef(a[1]) {
		return undefined
	}
	for _, el := range arr {
		if deepEqual(el, a[1]) || (partial && subsetOf(a[1], el)) {
			return true
		}
	}
	return false
}

// subsetOf reports whether want and el are objects and every member of want is in el, deep-equal.
func subsetOf(want, el any) bool {
	w, ok1 := want.(map[string]any)
	e, ok2 := el.(map[string]any)
	if !ok1 || !ok2 {
		return false
	}
	for k, wv := range w {
		ev, ok := e[k]
		if !ok || !deepEqual(wv, ev) {
			return false
		}
	}
	return true
}
