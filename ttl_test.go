package ttlstore

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore/internal/jsonscan"
)

// TestEffectiveTTLMatrix checks all nine cells of the TTL matrix (R1), with
// DefaultTTL n = 600 and a document ttl m = 30, and where each cell puts the
// expiry of a document written at _ts = 1000.
func TestEffectiveTTLMatrix(t *testing.T) {
	const (
		off int32 = 0 // DefaultTTL nil
		n   int32 = 600
		m   int32 = 30
		ts        = int64(1000)
	)
	tests := []struct {
		name    string
		def     int32
		own     int32 // 0: the document has no ttl
		wantTTL int32
		wantExp int64
	}{
		{"absent ttl, default off: never", off, 0, Never, neverExpires},
		{"absent ttl, default -1: never", Never, 0, Never, neverExpires},
		{"absent ttl, default n: n after _ts", n, 0, n, ts + int64(n)},
		{"ttl -1, default off: never (ttl ignored)", off, Never, Never, neverExpires},
		{"ttl -1, default -1: never", Never, Never, Never, neverExpires},
		{"ttl -1, default n: never", n, Never, Never, neverExpires},
		{"ttl m, default off: never (ttl ignored)", off, m, Never, neverExpires},
		{"ttl m, default -1: m after _ts", Never, m, m, ts + int64(m)},
		{"ttl m, default n: m after _ts", n, m, m, ts + int64(m)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := effectiveTTL(tt.def, tt.own)
			assert.Equal(t, tt.wantTTL, got)
			assert.Equal(t, tt.wantExp, expiryAt(ts, got))
		})
	}
}

// TestExpiryBoundarySecond checks R2: _ts = 100, ttl = 10 is visible at
// 109.999 s and expired at exactly 110 s, also for times before 1970.
func TestExpiryBoundarySecond(t *testing.T) {
	tests := []struct {
		name    string
		ts      int64
		ttl     int32
		at      time.Time
		expired bool
	}{
		{"one nanosecond after the write", 100, 10, time.Unix(100, 1), false},
		{"109.999 s is still visible", 100, 10, time.Unix(109, 999_999_999), false},
		{"110 s exactly is expired", 100, 10, time.Unix(110, 0), true},
		{"110.5 s is expired", 100, 10, time.Unix(110, 500_000_000), true},
		{"ttl 1: visible for the rest of the write's second", 100, 1, time.Unix(100, 999_999_999), false},
		{"ttl 1: gone at the next second", 100, 1, time.Unix(101, 0), true},
		{"before 1970: visible just before the boundary", -20, 10, time.Unix(-11, 1), false},
		{"before 1970: expired at the boundary", -20, 10, time.Unix(-10, 0), true},
		{"before 1970: fractional second rounds down", -20, 10, time.Unix(-10, -1), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.expired, isExpired(expiryAt(tt.ts, tt.ttl), unixSeconds(tt.at)))
		})
	}
}

// TestExpiryArithmeticCannotOverflow checks R16: the largest ttl on the
// largest _ts any clock can produce saturates to "never" instead of wrapping
// into the past.
func TestExpiryArithmeticCannotOverflow(t *testing.T) {
	maxTime := time.Unix(1<<63-1-62135596800, 999999999)
	largest := unixSeconds(maxTime)
	tests := []struct {
		name string
		ts   int64
		ttl  int32
		want int64
	}{
		{"MaxTTL from 1970", 0, MaxTTL, int64(MaxTTL)},
		{"MaxTTL from year 2026", 1_790_000_000, MaxTTL, 1_790_000_000 + int64(MaxTTL)},
		{"MaxTTL from the largest time", largest, MaxTTL, largest + int64(MaxTTL)},
		{"MaxTTL from MaxInt64 saturates", math.MaxInt64, MaxTTL, neverExpires},
		{"1 s from MaxInt64-1 saturates", math.MaxInt64 - 1, 1, neverExpires},
		{"MaxTTL from the earliest time", math.MinInt64, MaxTTL, math.MinInt64 + int64(MaxTTL)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := expiryAt(tt.ts, tt.ttl)
			assert.Equal(t, tt.want, got)
			assert.GreaterOrEqual(t, got, tt.ts, "expiry before the write")
		})
	}
	assert.Equal(t, int32(2147483647), MaxTTL)
	assert.False(t, isExpired(neverExpires, largest), "a document that never expires is expired at the largest time")
}

// TestParseTTL checks R6 on every kind of ttl value the scanner can report.
func TestParseTTL(t *testing.T) {
	tests := []struct {
		raw  string
		kind jsonscan.Kind
		want int32 // 0 with ok: absent
		ok   bool
	}{
		{"", jsonscan.KindNone, 0, true},
		{"-1", jsonscan.KindNumber, -1, true},
		{"1", jsonscan.KindNumber, 1, true},
		{"3600", jsonscan.KindNumber, 3600, true},
		{"2147483647", jsonscan.KindNumber, MaxTTL, true},
		{"0", jsonscan.KindNumber, 0, false},
		{"-0", jsonscan.KindNumber, 0, false},
		{"-2", jsonscan.KindNumber, 0, false},
		{"-2147483648", jsonscan.KindNumber, 0, false},
		{"2147483648", jsonscan.KindNumber, 0, false},
		{"99999999999", jsonscan.KindNumber, 0, false},
		{"999999999999999999999", jsonscan.KindNumber, 0, false},
		{"1.5", jsonscan.KindNumber, 0, false},
		{"10.0", jsonscan.KindNumber, 0, false},
		{"1e1", jsonscan.KindNumber, 0, false},
		{"-1.0", jsonscan.KindNumber, 0, false},
		{`"10"`, jsonscan.KindString, 0, false},
		{"null", jsonscan.KindNull, 0, false},
		{"true", jsonscan.KindTrue, 0, false},
		{"false", jsonscan.KindFalse, 0, false},
		{"{}", jsonscan.KindObject, 0, false},
		{"[10]", jsonscan.KindArray, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.kind.String()+" "+tt.raw, func(t *testing.T) {
			var raw []byte
			if tt.kind != jsonscan.KindNone {
				raw = []byte(tt.raw)
			}
			got, detail := parseTTL(tt.kind, raw)
			if !tt.ok {
				assert.NotEmpty(t, detail)
				assert.Contains(t, detail, tt.raw, "the message names the value")
				return
			}
			assert.Empty(t, detail)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestCheckDefaultTTL checks R7's range on DefaultTTL values.
func TestCheckDefaultTTL(t *testing.T) {
	valid := []*int32{nil, TTL(Never), TTL(1), TTL(3600), TTL(MaxTTL)}
	for _, p := range valid {
		_, err := checkDefaultTTL("test", p)
		assert.NoError(t, err)
	}
	invalid := []int32{0, -2, math.MinInt32}
	for _, n := range invalid {
		_, err := checkDefaultTTL("test", TTL(n))
		require.Error(t, err, "DefaultTTL %d", n)
		assert.True(t, errors.Is(err, ErrInvalidTTL))
	}
	def, err := checkDefaultTTL("test", nil)
	require.NoError(t, err)
	assert.Equal(t, int32(0), def, "nil is off, 0 internally")
}
