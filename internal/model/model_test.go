package model

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Unix(1_000, 0)

func ttl(n int32) *int32 { return &n }

func newModel(t *testing.T, def *int32) *Model {
	t.Helper()
	m, err := New(t0, def, 0)
	require.NoError(t, err)
	return m
}

// The matrix of R1, cell by cell, with the boundary second of R2.
func TestMatrix(t *testing.T) {
	tests := []struct {
		name string
		def  *int32
		doc  string
		secs int64 // 0: never expires
	}{
		{"absent, off", nil, `{"id":"d"}`, 0},
		{"absent, -1", ttl(-1), `{"id":"d"}`, 0},
		{"absent, n", ttl(60), `{"id":"d"}`, 60},
		{"-1, off", nil, `{"id":"d","ttl":-1}`, 0},
		{"-1, -1", ttl(-1), `{"id":"d","ttl":-1}`, 0},
		{"-1, n", ttl(60), `{"id":"d","ttl":-1}`, 0},
		{"m, off", nil, `{"id":"d","ttl":5}`, 0},
		{"m, -1", ttl(-1), `{"id":"d","ttl":5}`, 5},
		{"m, n", ttl(60), `{"id":"d","ttl":5}`, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newModel(t, tt.def)
			m.Advance(400 * time.Millisecond) // _ts is the whole second
			d, err := m.Upsert([]byte(tt.doc))
			require.NoError(t, err)
			assert.Equal(t, t0.Unix(), d.TS)
			exp, ok := m.Expiry(d)
			if tt.secs == 0 {
				assert.False(t, ok)
				m.Advance(100 * 365 * 24 * time.Hour)
				assert.Equal(t, []string{"d"}, m.IDs())
				return
			}
			require.True(t, ok)
			assert.Equal(t, t0.Unix()+tt.secs, exp)
			m.Set(time.Unix(exp, 0).Add(-time.Nanosecond))
			assert.Equal(t, []string{"d"}, m.IDs(), "visible just before the boundary")
			m.Advance(time.Nanosecond)
			assert.Empty(t, m.IDs(), "gone at the boundary")
			assert.Equal(t, Stats{Expired: 1}, m.Stats())
		})
	}
}

func TestValidation(t *testing.T) {
	tests := []struct {
		doc  string
		want error
	}{
		{`{"id":"a"}`, nil},
		{` {"id":"a","ttl":2147483647} `, nil},
		{`{"id":"a","ttl":-1,"_ts":1,"_ts":2}`, nil},
		{`{"id":"caf\u00e9"}`, nil},
		{`{"id":"a","ttl":0}`, ErrInvalidTTL},
		{`{"id":"a","ttl":-0}`, ErrInvalidTTL},
		{`{"id":"a","ttl":1.0}`, ErrInvalidTTL},
		{`{"id":"a","ttl":1e1}`, ErrInvalidTTL},
		{`{"id":"a","ttl":"1"}`, ErrInvalidTTL},
		{`{"id":"a","ttl":null}`, ErrInvalidTTL},
		{`{"id":"a","ttl":2147483648}`, ErrInvalidTTL},
		{`{"id":"a","ttl":1,"t\u0074l":2}`, ErrInvalidDocument},
		{`{"id":"a","id":"a"}`, ErrInvalidDocument},
		{`{"id":1}`, ErrInvalidDocument},
		{`{"id":null}`, ErrInvalidDocument},
		{`{"id":""}`, ErrInvalidDocument},
		{`{"id":"a\/b"}`, ErrInvalidDocument},
		{`{"id":"a\\b"}`, ErrInvalidDocument},
		{`{"id":"` + strings.Repeat("x", 1024) + `"}`, ErrInvalidDocument},
		{`{"ttl":5}`, ErrInvalidDocument},
		{`{"id":1,"ttl":0}`, ErrInvalidDocument}, // the id is checked first
		{`[]`, ErrInvalidDocument},
		{`{"id":"a"} {}`, ErrInvalidDocument},
		{"{\"id\":\"a\xff\"}", ErrInvalidDocument},
		{`{"id":"a","x":` + strings.Repeat("[", 127) + strings.Repeat("]", 127) + `}`, nil},
		{`{"id":"a","x":` + strings.Repeat("[", 128) + strings.Repeat("]", 128) + `}`, ErrInvalidDocument},
		{``, ErrInvalidDocument},
	}
	for _, tt := range tests {
		t.Run(tt.doc, func(t *testing.T) {
			m := newModel(t, nil)
			_, err := m.Create([]byte(tt.doc))
			if tt.want == nil {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, tt.want)
			assert.Empty(t, m.IDs())
		})
	}
	t.Run("size is checked first", func(t *testing.T) {
		m, err := New(t0, nil, 10)
		require.NoError(t, err)
		_, err = m.Create([]byte(`{"id":"a",}`))
		assert.ErrorIs(t, err, ErrTooLarge)
	})
	t.Run("members exclude the stamps", func(t *testing.T) {
		m := newModel(t, nil)
		d, err := m.Create([]byte(`{"id":"a","_ts":1,"\u005fetag":"x","v": [1, 2]}`))
		require.NoError(t, err)
		assert.Len(t, d.Members, 2)
		assert.Equal(t, "[1, 2]", string(d.Members["v"]))
	})
}

func TestWritesAndConditions(t *testing.T) {
	m := newModel(t, ttl(10))
	a, err := m.Create([]byte(`{"id":"a"}`))
	require.NoError(t, err)
	_, err = m.Create([]byte(`{"id":"a"}`))
	assert.ErrorIs(t, err, ErrConflict)
	_, err = m.Replace([]byte(`{"id":"b"}`))
	assert.ErrorIs(t, err, ErrNotFound)
	_, err = m.ReplaceIfMatch([]byte(`{"id":"a"}`), "bogus")
	assert.ErrorIs(t, err, ErrPreconditionFailed)
	a2, err := m.ReplaceIfMatch([]byte(`{"id":"a"}`), a.ETag)
	require.NoError(t, err)
	assert.NotEqual(t, a.ETag, a2.ETag)
	assert.ErrorIs(t, m.DeleteIfMatch("a", a.ETag), ErrPreconditionFailed)

	m.Advance(10 * time.Second) // a expires
	_, err = m.ReplaceIfMatch([]byte(`{"id":"a"}`), a2.ETag)
	assert.ErrorIs(t, err, ErrNotFound, "expired, even with the right etag")
	assert.ErrorIs(t, m.DeleteIfMatch("a", a2.ETag), ErrNotFound)
	_, err = m.Touch("a")
	assert.ErrorIs(t, err, ErrNotFound)
	assert.Equal(t, Stats{Expired: 1}, m.Stats())
	_, err = m.Create([]byte(`{"id":"a"}`))
	require.NoError(t, err, "create over an expired document")
	assert.Equal(t, Stats{Live: 1, Swept: 1}, m.Stats())
	gone := m.TakeExpired()
	require.Len(t, gone, 1)
	assert.Equal(t, a2.ETag, gone[0].ETag)

	require.NoError(t, m.Delete("a"))
	assert.Empty(t, m.TakeExpired(), "deletes are not reported")
}

func TestSetDefaultTTL(t *testing.T) {
	m := newModel(t, ttl(10))
	_, err := m.Upsert([]byte(`{"id":"old"}`))
	require.NoError(t, err)
	m.Advance(5 * time.Second)
	_, err = m.Upsert([]byte(`{"id":"young","ttl":100}`))
	require.NoError(t, err)
	_, err = m.Upsert([]byte(`{"id":"own3","ttl":3}`))
	require.NoError(t, err)
	m.Advance(5 * time.Second) // old expires; own3 has 3 s: expired too

	require.NoError(t, m.SetDefaultTTL(ttl(10)), "the same value")
	assert.Equal(t, Stats{Live: 1, Expired: 2}, m.Stats(), "the same value purges nothing")

	require.NoError(t, m.SetDefaultTTL(nil))
	assert.Equal(t, Stats{Live: 1, Swept: 2}, m.Stats(), "expiry is final (R13)")
	assert.Len(t, m.TakeExpired(), 2)
	m.Advance(1000 * time.Second)
	assert.Equal(t, []string{"young"}, m.IDs(), "TTL off: nothing expires (R14)")

	require.NoError(t, m.SetDefaultTTL(ttl(-1)))
	assert.Empty(t, m.IDs(), "turned on again: older than its ttl, gone at once")
	assert.Equal(t, Stats{Expired: 1, Swept: 2}, m.Stats(), "not purged: it expired under the new setting")

	for _, bad := range []int32{0, -2, math32Min} {
		assert.ErrorIs(t, m.SetDefaultTTL(ttl(bad)), ErrInvalidTTL)
	}
	_, err = New(t0, ttl(0), 0)
	assert.ErrorIs(t, err, ErrInvalidTTL)
}

const math32Min = -1 << 31

func TestSweepAndClose(t *testing.T) {
	m := newModel(t, ttl(1))
	for _, doc := range []string{`{"id":"a"}`, `{"id":"b","ttl":2}`, `{"id":"c","ttl":-1}`} {
		_, err := m.Upsert([]byte(doc))
		require.NoError(t, err)
	}
	next, ok := m.NextExpiry()
	require.True(t, ok)
	assert.Equal(t, t0.Unix()+1, next)
	m.Advance(time.Second)
	assert.Equal(t, 1, m.Sweep())
	assert.Equal(t, 0, m.Sweep())
	m.Close()
	_, err := m.Read("c")
	assert.True(t, errors.Is(err, ErrClosed))
	assert.ErrorIs(t, m.SetDefaultTTL(ttl(0)), ErrInvalidTTL, "checked before closed")
	assert.ErrorIs(t, m.SetDefaultTTL(nil), ErrClosed)
	m.Advance(time.Second)
	assert.Equal(t, 1, m.Sweep(), "Sweep works after Close")
	assert.Equal(t, Stats{Live: 1, Swept: 2}, m.Stats())
	assert.Panics(t, func() { m.Set(t0) }, "the clock never goes back")
}
