package ttlstore_test

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
)

// badInputMaxSize is the MaxDocumentSize of the collections in this file.
const badInputMaxSize = 2048

// badInputs are malformed documents and ttl values. Each is rejected by
// every write with exactly one error class and a message that names what is
// wrong. Ids "a" (live) and "gone" (expired, not yet swept) exist, so an
// accepted write would show.
var badInputs = []struct {
	name string
	doc  any
	want error
	says []string // the message contains each of these
}{
	// Not a JSON document at all.
	{"nil", nil, ttlstore.ErrInvalidDocument, []string{"nil"}},
	{"zero Document", ttlstore.Document{}, ttlstore.ErrInvalidDocument, []string{"zero Document"}},
	{"nil *Document", (*ttlstore.Document)(nil), ttlstore.ErrInvalidDocument, []string{"nil"}},
	{"channel", make(chan int), ttlstore.ErrInvalidDocument, []string{"chan int"}},
	{"infinity", map[string]any{"id": "a", "v": math.Inf(1)}, ttlstore.ErrInvalidDocument, []string{"+Inf"}},
	{"func", func() {}, ttlstore.ErrInvalidDocument, []string{"func()"}},
	{"failing MarshalJSON", failingMarshaler{}, ttlstore.ErrInvalidDocument, []string{"marshaler says no"}},
	{"Go string holding a JSON string", `"a"`, ttlstore.ErrInvalidDocument, []string{"string", "not object"}},
	{"Go string holding bad JSON", `{"id":"a",}`, ttlstore.ErrInvalidDocument, []string{"offset 10"}},
	{"empty", []byte{}, ttlstore.ErrInvalidDocument, []string{"unexpected end"}},
	{"nil []byte", []byte(nil), ttlstore.ErrInvalidDocument, []string{"unexpected end"}},
	{"whitespace", []byte(" \n\t"), ttlstore.ErrInvalidDocument, []string{"unexpected end"}},

	// Not one JSON object.
	{"array", []byte(`[{"id":"a"}]`), ttlstore.ErrInvalidDocument, []string{"array", "not object"}},
	{"string", []byte(`"a"`), ttlstore.ErrInvalidDocument, []string{"string", "not object"}},
	{"number", []byte(`42`), ttlstore.ErrInvalidDocument, []string{"number", "not object"}},
	{"null", []byte(`null`), ttlstore.ErrInvalidDocument, []string{"null", "not object"}},
	{"trailing comma", []byte(`{"id":"a",}`), ttlstore.ErrInvalidDocument, []string{"offset 10", "'}'"}},
	{"trailing garbage", []byte(`{"id":"a"} x`), ttlstore.ErrInvalidDocument, []string{"offset 11", "'x'", "after top-level value"}},
	{"two objects", []byte(`{"id":"a"}{"id":"b"}`), ttlstore.ErrInvalidDocument, []string{"offset 10", "after top-level value"}},
	{"unterminated", []byte(`{"id":"a"`), ttlstore.ErrInvalidDocument, []string{"unexpected end"}},
	{"single quotes", []byte(`{'id':'a'}`), ttlstore.ErrInvalidDocument, []string{`'\''`}},
	{"bare key", []byte(`{id:"a"}`), ttlstore.ErrInvalidDocument, []string{"'i'"}},
	{"NaN", []byte(`{"id":"a","v":NaN}`), ttlstore.ErrInvalidDocument, []string{"'N'"}},
	{"leading zero", []byte(`{"id":"a","v":01}`), ttlstore.ErrInvalidDocument, []string{"'1'"}},
	{"comment", []byte(`{"id":"a"/*c*/}`), ttlstore.ErrInvalidDocument, []string{"'/'"}},
	{"byte order mark", []byte("\ufeff{\"id\":\"a\"}"), ttlstore.ErrInvalidDocument, []string{"offset 0"}},
	{"control character", []byte("{\"id\":\"a\",\"v\":\"\x01\"}"), ttlstore.ErrInvalidDocument, []string{`'\x01'`}},
	{"bad escape", []byte(`{"id":"a","v":"\x"}`), ttlstore.ErrInvalidDocument, []string{"'x'"}},
	{"invalid UTF-8 in a value", []byte("{\"id\":\"a\",\"v\":\"\xff\"}"), ttlstore.ErrInvalidDocument, []string{"UTF-8", "0xff"}},
	{"invalid UTF-8 in a key", []byte("{\"id\":\"a\",\"\xfe\":1}"), ttlstore.ErrInvalidDocument, []string{"UTF-8", "0xfe"}},
	{"too deep", []byte(nested(ttlstore.MaxDepth + 1)), ttlstore.ErrInvalidDocument, []string{"deep", strconv.Itoa(ttlstore.MaxDepth)}},
	{"too large", []byte(padded(badInputMaxSize + 1)), ttlstore.ErrTooLarge, []string{strconv.Itoa(badInputMaxSize + 1), strconv.Itoa(badInputMaxSize)}},
	{"too large and invalid", []byte(`{"id":"a",` + strings.Repeat(" ", badInputMaxSize)), ttlstore.ErrTooLarge, []string{strconv.Itoa(badInputMaxSize)}},

	// Bad ids.
	{"missing id", []byte(`{"v":1}`), ttlstore.ErrInvalidDocument, []string{"missing id"}},
	{"id under another case", []byte(`{"ID":"a"}`), ttlstore.ErrInvalidDocument, []string{"missing id"}},
	{"numeric id", []byte(`{"id":1}`), ttlstore.ErrInvalidDocument, []string{"id 1", "number"}},
	{"null id", []byte(`{"id":null}`), ttlstore.ErrInvalidDocument, []string{"id null"}},
	{"object id", []byte(`{"id":{"a":1}}`), ttlstore.ErrInvalidDocument, []string{`id {"a":1}`, "object"}},
	{"empty id", []byte(`{"id":""}`), ttlstore.ErrInvalidDocument, []string{"id is empty"}},
	{"id too long", []byte(`{"id":"` + strings.Repeat("é", 512) + `"}`), ttlstore.ErrInvalidDocument, []string{"1024 bytes", "1023"}},
	{"slash in id", []byte(`{"id":"a/b"}`), ttlstore.ErrInvalidDocument, []string{`"a/b"`, `"/"`}},
	{"backslash in id", []byte(`{"id":"a\\b"}`), ttlstore.ErrInvalidDocument, []string{`"a\\b"`}},
	{"escaped slash in id", []byte(`{"id":"a\/b"}`), ttlstore.ErrInvalidDocument, []string{`"a/b"`}},
	{"duplicate id", []byte(`{"id":"a","id":"b"}`), ttlstore.ErrInvalidDocument, []string{`duplicate key "id"`}},
	{"duplicate id, escaped", []byte(`{"id":"a","\u0069d":"a"}`), ttlstore.ErrInvalidDocument, []string{"duplicate key", `\u0069d`}},
	{"bad id and bad ttl: the id is reported", []byte(`{"id":7,"ttl":0}`), ttlstore.ErrInvalidDocument, []string{"id 7"}},

	// Bad ttls (R6), also on the expired document's id.
	{"ttl 0", []byte(`{"id":"a","ttl":0}`), ttlstore.ErrInvalidTTL, []string{`"a"`, "ttl 0"}},
	{"ttl -0", []byte(`{"id":"a","ttl":-0}`), ttlstore.ErrInvalidTTL, []string{"ttl -0"}},
	{"ttl -2", []byte(`{"id":"a","ttl":-2}`), ttlstore.ErrInvalidTTL, []string{"ttl -2"}},
	{"ttl below int32", []byte(`{"id":"a","ttl":-2147483649}`), ttlstore.ErrInvalidTTL, []string{"ttl -2147483649"}},
	{"ttl 2147483648", []byte(`{"id":"a","ttl":2147483648}`), ttlstore.ErrInvalidTTL, []string{"ttl 2147483648"}},
	{"ttl of 20 digits", []byte(`{"id":"a","ttl":99999999999999999999}`), ttlstore.ErrInvalidTTL, []string{"99999999999999999999"}},
	{"ttl 1.5", []byte(`{"id":"a","ttl":1.5}`), ttlstore.ErrInvalidTTL, []string{"ttl 1.5"}},
	{"ttl 10.0", []byte(`{"id":"a","ttl":10.0}`), ttlstore.ErrInvalidTTL, []string{"ttl 10.0"}},
	{"ttl 1e1", []byte(`{"id":"a","ttl":1e1}`), ttlstore.ErrInvalidTTL, []string{"ttl 1e1"}},
	{"ttl string", []byte(`{"id":"a","ttl":"10"}`), ttlstore.ErrInvalidTTL, []string{`ttl "10"`, "string"}},
	{"ttl null", []byte(`{"id":"a","ttl":null}`), ttlstore.ErrInvalidTTL, []string{"ttl null"}},
	{"ttl true", []byte(`{"id":"a","ttl":true}`), ttlstore.ErrInvalidTTL, []string{"ttl true"}},
	{"ttl object", []byte(`{"id":"a","ttl":{"s":1}}`), ttlstore.ErrInvalidTTL, []string{`ttl {"s":1}`, "object"}},
	{"ttl array", []byte(`{"id":"a","ttl":[1]}`), ttlstore.ErrInvalidTTL, []string{"ttl [1]", "array"}},
	{"ttl 0 on the expired id", []byte(`{"id":"gone","ttl":0}`), ttlstore.ErrInvalidTTL, []string{`"gone"`, "ttl 0"}},
	{"ttl 0 from a Go struct", struct {
		ID  string `json:"id"`
		TTL int    `json:"ttl"`
	}{"a", 0}, ttlstore.ErrInvalidTTL, []string{"ttl 0"}},
	{"duplicate ttl", []byte(`{"id":"a","ttl":5,"ttl":5}`), ttlstore.ErrInvalidDocument, []string{`duplicate key "ttl"`}},
	{"duplicate ttl, escaped", []byte(`{"id":"a","ttl":5,"t\u0074l":-1}`), ttlstore.ErrInvalidDocument, []string{"duplicate key"}},
}

// failingMarshaler is a Go value that encoding/json cannot marshal.
type failingMarshaler struct{}

func (failingMarshaler) MarshalJSON() ([]byte, error) { return nil, errors.New("marshaler says no") }

// nested returns a document of id "a" whose objects and arrays nest depth
// levels deep, the document itself being level 1.
func nested(depth int) string {
	return `{"id":"a","v":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`
}

// padded returns a valid document of id "a" of exactly n bytes.
func padded(n int) string {
	const frame = `{"id":"a","p":""}`
	return `{"id":"a","p":"` + strings.Repeat("x", n-len(frame)) + `"}`
}

// badInputCollection returns a collection holding a live document "a", a
// live "b" and an expired "gone", not yet swept, and the live "a".
func badInputCollection(t *testing.T) (*ttlstore.Collection, ttlstore.Document) {
	t.Helper()
	c, clk := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(60), MaxDocumentSize: badInputMaxSize})
	upsert(t, c, `{"id":"gone","ttl":1}`)
	a := upsert(t, c, `{"id":"a","v":1,"ttl":30}`)
	upsert(t, c, `{"id":"b","v":2}`)
	clk.Add(time.Second)
	require.Equal(t, ttlstore.Stats{Live: 2, Expired: 1}, ttlstore.CoreStats(c.Stats()))
	return c, a
}

func TestBadInputIsRejectedAndChangesNothing(t *testing.T) {
	require.GreaterOrEqual(t, len(badInputs), 30)
	for _, tt := range badInputs {
		t.Run(tt.name, func(t *testing.T) {
			c, a := badInputCollection(t)
			before := stateOf(c)
			writes := map[string]func() (ttlstore.Document, error){
				"Create":         func() (ttlstore.Document, error) { return c.Create(tt.doc) },
				"Upsert":         func() (ttlstore.Document, error) { return c.Upsert(tt.doc) },
				"Replace":        func() (ttlstore.Document, error) { return c.Replace(tt.doc) },
				"ReplaceIfMatch": func() (ttlstore.Document, error) { return c.ReplaceIfMatch(tt.doc, a.ETag()) },
			}
			for _, op := range sortedKeys(writes) {
				got, err := writes[op]()
				requireErrClass(t, err, tt.want, op)
				for _, s := range tt.says {
					assert.Contains(t, err.Error(), s, "%s: the message names what is wrong", op)
				}
				assert.Equal(t, ttlstore.Document{}, got, "%s returned a document with its error", op)
				assert.Equal(t, before, stateOf(c), "%s: a rejected write changed the collection", op)
				require.NoError(t, c.CheckInvariants())
			}
		})
	}
}

// The limits themselves are accepted: each bad input above is off by one.
func TestBadInputLimitsAccepted(t *testing.T) {
	tests := []struct {
		name string
		doc  string
	}{
		{"nesting of MaxDepth", nested(ttlstore.MaxDepth)},
		{"exactly MaxDocumentSize", padded(badInputMaxSize)},
		{"id of 1023 bytes", `{"id":"` + strings.Repeat("é", 511) + `a"}`},
		{"ttl 2147483647", `{"id":"a","ttl":2147483647}`},
		{"ttl -1", `{"id":"a","ttl":-1}`},
		{"ttl 1", `{"id":"a","ttl":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := badInputCollection(t)
			_, err := c.Upsert([]byte(tt.doc))
			require.NoError(t, err)
		})
	}
}

// Invalid DefaultTTL values, for New and SetDefaultTTL (R7), and Options
// out of range.
func TestBadOptionsAndDefaultTTL(t *testing.T) {
	for _, v := range []int32{0, -2, -100, math.MinInt32} {
		name := strconv.Itoa(int(v))
		t.Run("New DefaultTTL "+name, func(t *testing.T) {
			c, err := ttlstore.New(ttlstore.Options{DefaultTTL: ttlstore.TTL(v), SweepInterval: ttlstore.ManualSweep})
			requireErrClass(t, err, ttlstore.ErrInvalidTTL)
			assert.Nil(t, c)
			assert.Contains(t, err.Error(), "DefaultTTL "+name)
		})
		t.Run("SetDefaultTTL "+name, func(t *testing.T) {
			c, _ := badInputCollection(t)
			before := stateOf(c)
			err := c.SetDefaultTTL(ttlstore.TTL(v))
			requireErrClass(t, err, ttlstore.ErrInvalidTTL)
			assert.Contains(t, err.Error(), "DefaultTTL "+name)
			assert.Equal(t, before, stateOf(c), "a rejected SetDefaultTTL changed the collection (or purged)")
		})
	}
	options := []struct {
		name string
		opts ttlstore.Options
		says string
	}{
		{"negative SweepBatch", ttlstore.Options{SweepBatch: -1}, "SweepBatch -1"},
		{"very negative SweepBatch", ttlstore.Options{SweepBatch: math.MinInt}, "SweepBatch " + strconv.Itoa(math.MinInt)},
		{"negative MaxDocumentSize", ttlstore.Options{MaxDocumentSize: -1}, "MaxDocumentSize -1"},
		{"negative MaxDocumentSize, valid rest", ttlstore.Options{DefaultTTL: ttlstore.TTL(5), SweepBatch: 10, MaxDocumentSize: -5}, "MaxDocumentSize -5"},
	}
	if strconv.IntSize == 64 {
		big := int64(math.MaxInt32) + 1
		options = append(options, struct {
			name string
			opts ttlstore.Options
			says string
		}{"MaxDocumentSize beyond 32 bits", ttlstore.Options{MaxDocumentSize: int(big)}, "MaxDocumentSize 2147483648 is more than 2147483647"})
	}
	for _, tt := range options {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ttlstore.New(tt.opts)
			requireErrClass(t, err, ttlstore.ErrInvalidOptions)
			assert.Nil(t, c, "New returned a collection (and maybe started a sweeper) with its error")
			assert.Contains(t, err.Error(), tt.says)
		})
	}
}

// The size limit applies to the bytes as passed. A Document passed back to a
// write counts as its stored form, without _ts and _etag, so a document
// stored at exactly MaxDocumentSize can be written back unchanged; its JSON()
// bytes, which carry the stamp (about 50 bytes), are over the limit.
func TestWriteBackAtSizeLimit(t *testing.T) {
	c, _ := badInputCollection(t)
	d, err := c.Upsert([]byte(padded(badInputMaxSize)))
	require.NoError(t, err)
	before := stateOf(c)
	_, err = c.Upsert(d.JSON())
	requireErrClass(t, err, ttlstore.ErrTooLarge)
	assert.Contains(t, err.Error(), strconv.Itoa(len(d.JSON())))
	assert.Equal(t, before, stateOf(c))

	d2, err := c.Upsert(d)
	require.NoError(t, err)
	assert.NotEqual(t, d.ETag(), d2.ETag())
	assert.Equal(t, string(d.JSON()[:len(d.JSON())-len(stampOf(d))]), string(d2.JSON()[:len(d2.JSON())-len(stampOf(d2))]),
		"written back unchanged but for the stamp")
	_, err = c.Touch("a")
	require.NoError(t, err)
}

// stampOf is the stamp that ends d's JSON.
func stampOf(d ttlstore.Document) string {
	return fmt.Sprintf(`"_ts":%d,"_etag":%q}`, d.TS().Unix(), d.ETag())
}

// A Go string is JSON text, as []byte is: the document it holds is stored,
// and changing nothing of the caller's.
func TestWriteGoString(t *testing.T) {
	c, _ := newCollection(t, ttlstore.Options{})
	d, err := c.Upsert(`{"id":"s","v":[1,2]}`)
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"s","v":[1,2],"_ts":1700000000,"_etag":`+strconv.Quote(d.ETag())+`}`, d.String())
}

// An error quotes at most 64 bytes of an id, cut at a character's start,
// and says how long the id was.
func TestErrorQuotesLongIDsCut(t *testing.T) {
	c, _ := newCollection(t, ttlstore.Options{})
	id := strings.Repeat("é", 500) // 1,000 bytes
	err := c.Delete(id)
	require.ErrorIs(t, err, ttlstore.ErrNotFound)
	msg := err.Error()
	assert.Less(t, len(msg), 150, msg)
	assert.Contains(t, msg, `"`+strings.Repeat("é", 32)+`"... (1000 bytes)`)
	err = c.Delete("short")
	assert.Equal(t, `ttlstore: delete "short": not found`, err.Error())
}
