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
