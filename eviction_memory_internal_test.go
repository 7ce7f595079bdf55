package ttlstore

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestColdestTablesCounted checks that what EvictColdest's tables hold
// beyond the documents' weights counts against MaxBytes: filled with small
// documents until its tables pass their first sizes, a collection holds
// documents that weigh no more than MaxBytes less that count, which agrees
// with the tables (checkInvariants); and a small collection counts nothing.
func TestColdestTablesCounted(t *testing.T) {
	if raceRepeat(t) {
		t.Skip("deterministic (fixed seeds), and checked by the first run")
	}
	for _, tc := range []struct {
		name     string
		maxBytes int64
		docs     int
		charged  bool
	}{
		{"small", 4 << 10, 200, false},
		{"past the sketch's first size", 2 << 20, 60000, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log []string
			var written string
			c := inPlaceCollection(t, EvictColdest, 0, tc.maxBytes, &log, &written)
			for i := range tc.docs {
				_, err := c.Create([]byte(`{"id":"d` + strconv.Itoa(i) + `"}`))
				require.NoError(t, err)
			}
			require.NoError(t, c.checkInvariants())
			charged := c.lim.policyBytes.Load()
			st := c.Stats()
			t.Logf("%d documents of %d bytes, %d bytes of the policy's tables counted, MaxBytes %d", st.Live, st.Bytes, charged, tc.maxBytes)
			require.Equal(t, tc.charged, charged > 0, "tables counted: %d bytes", charged)
			require.LessOrEqual(t, st.Bytes+charged, tc.maxBytes)
			require.Positive(t, st.Evicted)
		})
	}
}

// Without MaxBytes the tables are not counted (nothing reads the count,
// and a write at the bound would store it twice); SetLimits giving the
// collection a MaxBytes counts them before that bound is in force, and the
// bound then holds them with the documents.
func TestColdestTablesCountedFromSetLimits(t *testing.T) {
	if raceRepeat(t) {
		t.Skip("deterministic, and checked by the first run")
	}
	var log []string
	var written string
	c := inPlaceCollection(t, EvictColdest, 0, 0, &log, &written)
	for i := range 60000 {
		_, err := c.Create([]byte(`{"id":"d` + strconv.Itoa(i) + `"}`))
		require.NoError(t, err)
	}
	require.NoError(t, c.checkInvariants())
	require.Zero(t, c.lim.policyBytes.Load(), "counted without MaxBytes")
	maxBytes := c.Stats().Bytes // the documents alone: the tables' count must evict some
	require.NoError(t, c.SetLimits(0, maxBytes))
	require.NoError(t, c.checkInvariants())
	charged := c.lim.policyBytes.Load()
	require.Positive(t, charged, "the tables counted once MaxBytes is set")
	st := c.Stats()
	require.LessOrEqual(t, st.Bytes+charged, maxBytes)
	require.Positive(t, st.Evicted)
}
