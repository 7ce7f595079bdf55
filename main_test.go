package ttlstore_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/ttlstore/ttlstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// start is the mock clock's time at the start of every test: a whole second,
// so that "advance 10 s" lands exactly on an expiry boundary.
var start = time.Unix(1_700_000_000, 0).UTC()

// newMock returns a mock clock set to start.
func newMock() *clock.Mock {
	m := clock.NewMock()
	m.Set(start)
	return m
}

// newCollection returns a collection on a new mock clock (or on opts.Clock,
// when set; the returned mock is then nil unless it is a *clock.Mock). Unless opts says
// otherwise, it has no background sweeper, so tests decide when to Sweep.
// Cleanup checks the invariants and closes it.
func newCollection(t testing.TB, opts ttlstore.Options) (*ttlstore.Collection, *clock.Mock) {
	t.Helper()
	m, _ := opts.Clock.(*clock.Mock)
	if opts.Clock == nil {
		m = newMock()
		opts.Clock = m
	}
	if opts.SweepInterval == 0 {
		opts.SweepInterval = ttlstore.ManualSweep
	}
	if collectionMode != "" {
		return newInMode(t, opts, m)
	}
	c, err := ttlstore.New(opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, c.CheckInvariants())
		require.NoError(t, c.Close())
	})
	return c, m
}

// upsert stores a JSON document and fails the test on error.
func upsert(t testing.TB, c *ttlstore.Collection, doc string) ttlstore.Document {
	t.Helper()
	d, err := c.Upsert([]byte(doc))
	require.NoError(t, err, doc)
	require.NoError(t, c.CheckInvariants())
	noteTyped(t, c, d) // the mode matrix's typed mode
	return d
}

// ids returns the ids All yields, sorted.
func ids(c *ttlstore.Collection) []string {
	var out []string
	for d := range c.All() {
		out = append(out, d.ID())
	}
	slices.Sort(out)
	return out
}

// members decodes a stored document's JSON into its top-level members.
func members(t testing.TB, d ttlstore.Document) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(d.JSON(), &m))
	return m
}

// live reports whether Read finds id, failing on errors other than not found.
func live(t testing.TB, c *ttlstore.Collection, id string) bool {
	t.Helper()
	_, err := c.Read(id)
	if err == nil {
		return true
	}
	require.ErrorIs(t, err, ttlstore.ErrNotFound)
	return false
}

func slicesSort(s []string) { slices.Sort(s) }
