package ttlstore_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/vfs"
)

// TestDurableOpenKeepsDocumentsAboveMaxDocumentSize: MaxDocumentSize limits
// new writes, not what Open loads. A directory written with a larger limit
// opens with a smaller one (the default) to every document, from the log
// and from a snapshot; new writes above the limit are refused; and the big
// document survives compaction and another restart.
func TestDurableOpenKeepsDocumentsAboveMaxDocumentSize(t *testing.T) {
	big := fmt.Sprintf(`{"id":"big","v":%q}`, strings.Repeat("x", 3<<20))
	for _, tt := range []struct {
		name    string
		compact bool // the big document is in a snapshot, not the log
	}{
		{"log", false},
		{"snapshot", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fsys := vfs.NewMemFS()
			clk := newMock()
			large := ttlstore.Options{Clock: clk, SweepInterval: ttlstore.ManualSweep, MaxDocumentSize: 4 << 20}
			c, err := ttlstore.OpenFS(fsys, "db", large, 1<<30, false)
			require.NoError(t, err)
			upsert(t, c, big)
			upsert(t, c, `{"id":"small"}`)
			if tt.compact {
				require.NoError(t, c.Compact())
			}
			want := shownOf(c)
			require.NoError(t, c.Close())

			small := ttlstore.Options{Clock: clk, SweepInterval: ttlstore.ManualSweep}
			c, err = ttlstore.OpenFS(fsys, "db", small, 1<<30, false)
			require.NoError(t, err, "the files are intact")
			require.NoError(t, c.CheckInvariants())
			got := shownOf(c)
			assert.True(t, got.equal(want), "reopened to other documents")
			_, err = c.Upsert([]byte(big))
			assert.ErrorIs(t, err, ttlstore.ErrTooLarge, "the limit still governs writes")
			require.NoError(t, c.Compact())
			require.NoError(t, c.Close())

			c, err = ttlstore.OpenFS(fsys, "db", small, 1<<30, false)
			require.NoError(t, err, "after a compaction under the smaller limit")
			defer c.Close()
			assert.True(t, shownOf(c).equal(want), "the big document was compacted away")
		})
	}
}
