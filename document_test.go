package ttlstore_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
)

// An expired document that is still in memory and one that never existed
// read the same: ErrNotFound with the same message, naming the id.
func TestExpiredReadErrorReadsLikeNotFound(t *testing.T) {
	c, clk := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(10)})
	upsert(t, c, `{"id":"gone"}`)
	clk.Add(10 * time.Second)
	require.Equal(t, 1, c.Stats().Expired, "still in memory")

	_, expired := c.Read("gone")
	require.ErrorIs(t, expired, ttlstore.ErrNotFound)
	assert.False(t, errors.Is(expired, ttlstore.ErrConflict))
	assert.Equal(t, `ttlstore: read "gone": not found`, expired.Error())

	c.Sweep()
	_, missing := c.Read("gone")
	require.ErrorIs(t, missing, ttlstore.ErrNotFound)
	assert.Equal(t, missing.Error(), expired.Error())
}

// JSON, AppendJSON, String and MarshalJSON all give the stored JSON with its
// stamp, and the stamp agrees with TS and ETag.
func TestDocumentJSONForms(t *testing.T) {
	c, _ := newCollection(t, ttlstore.Options{})
	for _, src := range []string{
		`{"id":"a","v":[1,2,{"x":null}]}`,
		`{}`[:0] + `{"id":"b"}`,
		`{"_ts":5,"id":"c","_etag":"old"}`,
		`{"id":"\u0064","ttl":-1}`, // an escaped id
	} {
		d := upsert(t, c, src)
		want := d.JSON()
		stamp := `"_ts":` + itoa(d.TS().Unix()) + `,"_etag":"` + d.ETag() + `"}`
		assert.Equal(t, stamp, string(want[len(want)-len(stamp):]), src)
		assert.Equal(t, string(want), d.String())
		m, err := d.MarshalJSON()
		require.NoError(t, err)
		assert.Equal(t, want, m)
		assert.Equal(t, "prefix"+string(want), string(d.AppendJSON([]byte("prefix"))))
		got, err := c.Read(d.ID())
		require.NoError(t, err)
		assert.Equal(t, want, got.JSON())
	}
	members := members(t, upsert(t, c, `{"_ts":5,"id":"c","_etag":"old"}`))
	assert.Len(t, members, 3, "the old _ts and _etag were dropped, fresh ones added")

	var zero ttlstore.Document
	assert.Equal(t, "x", string(zero.AppendJSON([]byte("x"))))
}

func itoa(v int64) string { return string(appendInt(nil, v)) }

func appendInt(b []byte, v int64) []byte {
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	if v >= 10 {
		b = appendInt(b, v/10)
	}
	return append(b, byte('0'+v%10))
}
