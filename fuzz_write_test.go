package ttlstore_test

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/model"
)

// fuzzMaxSize is the MaxDocumentSize of FuzzWrite's collection: small, so
// that the fuzzer reaches ErrTooLarge.
const fuzzMaxSize = 512

// fuzzSeeds are the documents of the spec and the package documentation,
// and their near misses.
var fuzzSeeds = []string{
	`{"id":"d"}`, `{"id":"d","ttl":-1}`, `{"id":"d","ttl":30}`, `{"id":"x","ttl":10}`,
	`{"id":"a","_ts":1,"_etag":"forged","v":1}`, `{"id":"a","_ts":1,"_ts":2,"\u005fetag":"x"}`,
	`{"id":"s1","user":"ada"}`, `{"id":"s2","user":"bob","ttl":60}`, `{"id":"s3","user":"eve","ttl":-1}`,
	`{"id":"x","TTL":5}`, `{"id":"x","TimeToLive":5}`, `{"id":"x","meta":{"ttl":5}}`,
	`{"id":"x","a":[{"ttl":5}]}`, `{"id":"x","t\u0074l":30}`, `{"id":"b","ttl":2147483647}`,
	`{"id":"x","ttl":0}`, `{"id":"x","ttl":null}`, `{"id":"x","ttl":-2}`, `{"id":"x","ttl":2147483648}`,
	`{"id":"x","ttl":1.5}`, `{"id":"x","ttl":"10"}`, `{"id":"x","ttl":true}`, `{"id":"x","ttl":{}}`,
	`{"id":"x","ttl":[]}`, `{"id":"x","ttl":10.0}`, `{"id":"x","ttl":1e1}`, `{"id":"x","ttl":-0}`,
	`{"id":"a/b"}`, `{"id":"a\\b"}`, `{"id":"a\/b"}`, `{"id":"caf\u00e9"}`, `{"id":"\ud800"}`,
	`{"id":""}`, `{"id":1}`, `{"id":null}`, `{"v":1}`, `{"id":"a","id":"b"}`, `{"id":"a","ttl":1,"ttl":1}`,
	`[{"id":"a"}]`, `{"id":"a",}`, "{\"id\":\"a\xff\"}", `{"id":"a"} x`, ` {"id":"a"} `, `{}`,
	`{"id":"gone"}`, `{"id":"b","v":[1, {"x": null}]}`, `{"id":"c","ttl":-1,"s":"\u0000"}`,
	nested(ttlstore.MaxDepth), nested(ttlstore.MaxDepth + 1), padded(fuzzMaxSize), padded(fuzzMaxSize + 1),
}

// fuzzWrites are the writes FuzzWrite chooses from.
var fuzzWrites = []struct {
	name  string
	real  func(*ttlstore.Collection, []byte) (ttlstore.Document, error)
	model func(*model.Model, []byte) (model.Doc, error)
}{
	{"Create", func(c *ttlstore.Collection, b []byte) (ttlstore.Document, error) { return c.Create(b) }, (*model.Model).Create},
	{"Upsert", func(c *ttlstore.Collection, b []byte) (ttlstore.Document, error) { return c.Upsert(b) }, (*model.Model).Upsert},
	{"Replace", func(c *ttlstore.Collection, b []byte) (ttlstore.Document, error) { return c.Replace(b) }, (*model.Model).Replace},
}

// FuzzWrite writes arbitrary bytes to a collection holding a few documents
// (one of them expired) and to the model. The collection must reject
// exactly what the model rejects, with the same error class, and then be
// exactly as it was. An accepted document must read back as encoding/json
// sees the input: the same members but for _ts and _etag, the same id and
// ttl, and the new stamps.
func FuzzWrite(f *testing.F) {
	for i, doc := range fuzzSeeds {
		f.Add(uint8(i), []byte(doc))
	}
	f.Fuzz(func(t *testing.T, op uint8, doc []byte) {
		write := fuzzWrites[int(op)%len(fuzzWrites)]
		clk := &settableClock{Mock: clock.NewMock()}
		clk.Set(start)
		c, err := ttlstore.New(ttlstore.Options{Clock: clk, SweepInterval: ttlstore.ManualSweep, DefaultTTL: ttlstore.TTL(60), MaxDocumentSize: fuzzMaxSize})
		require.NoError(t, err)
		defer c.Close()
		m, err := model.New(clk.Now(), ttlstore.TTL(60), fuzzMaxSize)
		require.NoError(t, err)
		for _, d := range []string{`{"id":"gone","ttl":1}`, `{"id":"a","v":1}`, `{"id":"b","ttl":2}`, `{"id":"c","ttl":-1}`} {
			upsert(t, c, d)
			_, err := m.Upsert([]byte(d))
			require.NoError(t, err)
		}
		clk.Set(start.Add(1500 * time.Millisecond)) // "gone" has expired, "b" has not
		m.Advance(1500 * time.Millisecond)
		before := stateOf(c)

		got, err := write.real(c, doc)
		_, wantErr := write.model(m, doc)
		what := msgf("%s(%q)", write.name, doc)
		requireSameErr(t, err, wantErr, what)
		if err != nil {
			require.Equal(t, before, stateOf(c), "%v: a rejected write changed the collection", what)
			require.NoError(t, c.CheckInvariants())
			return
		}

		// What encoding/json makes of the input.
		var in map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(doc, &in), what)
		var id string
		require.NoError(t, json.Unmarshal(in["id"], &id), what)
		require.Equal(t, id, got.ID(), what)
		ttl, hasTTL := got.TTL()
		if raw, ok := in["ttl"]; ok {
			require.True(t, hasTTL, what)
			require.Equal(t, string(raw), strconv.Itoa(int(ttl)), what)
		} else {
			require.False(t, hasTTL, what)
		}
		delete(in, "_ts")
		delete(in, "_etag")
		requireStoredJSON(t, got, in, clk.Now().Unix(), what)
		for _, other := range before.Docs {
			require.NotContains(t, other, `"_etag":"`+got.ETag()+`"`, "%v: an _etag was reused", what)
		}

		read, err := c.Read(id)
		require.NoError(t, err, what)
		require.Equal(t, got.String(), read.String(), what)

		// Nothing else changed; a Create or Upsert of "gone" swept it.
		after := stateOf(c)
		delete(before.Docs, id)
		delete(after.Docs, id)
		require.Equal(t, before.Docs, after.Docs, "%v: other documents changed", what)
		st := m.Stats()
		require.Equal(t, ttlstore.Stats{Live: st.Live, Expired: st.Expired, Swept: st.Swept}, ttlstore.CoreStats(after.Stats), what)
		require.NoError(t, c.CheckInvariants())
	})
}

// Make sure the seeds exercise both outcomes of every write.
func TestFuzzWriteSeedsCoverBothOutcomes(t *testing.T) {
	accepted, rejected := 0, 0
	for _, doc := range fuzzSeeds {
		m, err := model.New(time.Unix(0, 0), nil, fuzzMaxSize)
		require.NoError(t, err)
		if _, err := m.Upsert([]byte(doc)); err == nil {
			accepted++
		} else {
			rejected++
		}
	}
	require.Greater(t, accepted, 10, "accepted seeds")
	require.Greater(t, rejected, 10, "rejected seeds")
}
