package patch

import (
	"math"
	"strconv"
)

// increment returns the JSON number cur + by, both valid JSON numbers.
//
// A number written as an integer (no fraction, no exponent) that fits in
// an int64 is an integer; any other number is a float64. The sum of two
// integers is computed exactly and is an error when it leaves the int64
// range; any other sum is a float64 sum, an error when it is not finite.
// Integers are written in decimal, floats as encoding/json and JavaScript
// write them: the shortest text that reads back as the same float64, in
// exponent form below 1e-6 and from 1e21 up (so 1.5 + 1.5 is written 3).
func increment(dst, cur, by []byte) ([]byte, *failure) {
	a, aInt, aFloat := parseNumber(cur)
	b, bInt, bFloat := parseNumber(by)
	if aInt && bInt {
		s := a + b
		if (a > 0 && b > 0 && s < 0) || (a < 0 && b < 0 && s >= 0) {
			return nil, fail(ErrOverflow, string(cur)+" + "+string(by)+" overflows int64")
		}
		return strconv.AppendInt(dst, s, 10), nil
	}
	if aInt {
		aFloat = float64(a)
	}
	if bInt {
		bFloat = float64(b)
	}
	f := aFloat + bFloat
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, fail(ErrOverflow, string(cur)+" + "+string(by)+" is not a finite float64")
	}
	return appendFloat(dst, f), nil
}

// parseNumber reads the valid JSON number v as an int64 when it is written
// as an integer and fits, and as a float64 otherwise (possibly infinite,
// for a literal such as 1e999).
func parseNumber(v []byte) (i int64, isInt bool, f float64) {
	if n, ok := parseInt64(v); ok {
		return n, true, 0
	}
	f, _ = strconv.ParseFloat(string(v), 64) // the grammar is valid; out of range gives ±Inf
	return 0, false, f
}

// parseInt64 reads v as an optional '-' and decimal digits that fit in an
// int64, and reports false for anything else.
func parseInt64(v []byte) (int64, bool) {
	neg := len(v) > 0 && v[0] == '-'
	if neg {
		v = v[1:]
	}
	if len(v) == 0 || len(v) > 19 {
		return 0, false
	}
	var u uint64
	for _, c := range v {
		if !isDigit(c) {
			return 0, false
		}
		u = u*10 + uint64(c-'0') // 19 digits cannot overflow a uint64
	}
	switch {
	case neg && u <= 1<<63:
		return int64(-u), true
	case !neg && u < 1<<63:
		return int64(u), true
	}
	return 0, false
}

// appendFloat appends the finite f as encoding/json writes a float64.
func appendFloat(dst []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// Clean up e-09 to e-9, as encoding/json does.
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}
