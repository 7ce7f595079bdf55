package ttlstore

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore/internal/vfs"
	"github.com/ttlstore/ttlstore/internal/wal"
)

// TestLogCommitGroups writes logs by hand and opens them: a group is applied
// once its recCommit is read, a group without one at the end of the log is
// a torn tail (cut, and counted), and a recCommit that does not close
// exactly the records before it, or whose sequence number does not follow,
// is corruption. A log without recLogInfo applies its records one by one.
func TestLogCommitGroups(t *testing.T) {
	put := func(id string) []byte {
		src := []byte(`{"id":"` + id + `"}`)
		e, data := newEntry(len(src))
		copy(data, src)
		*e = entry{ts: 1700000000, etag: 7, n: uint32(len(src)), idOff: 7, idLen: uint32(len(id))}
		return appendPut(nil, e)
	}
	del := func(id string) []byte { return appendDelete(nil, id) }
	commit := func(count uint32, seq uint64) []byte { return appendCommit(nil, count, seq) }
	groups := logPreamble()
	old := wal.AppendHeader(nil, wal.KindLog)
	cat := func(parts ...[]byte) []byte { return slices.Concat(parts...) }

	for _, tc := range []struct {
		name    string
		log     []byte
		ids     []string // what it loads to
		torn    int64    // Stats.TornBytes
		corrupt string   // a part of the ErrCorrupt message, if corrupt
	}{
		{name: "groups", log: cat(groups, put("a"), commit(1, 1), put("b"), put("c"), del("a"), commit(3, 4)), ids: []string{"b", "c"}},
		{name: "a group without its commit", log: cat(groups, put("a"), commit(1, 1), put("b"), put("c")), ids: []string{"a"},
			torn: int64(len(put("b")) * 2)},
		{name: "a group cut in its commit", log: cat(groups, put("a"), commit(1, 1), put("b"), commit(1, 2)[:15]), ids: []string{"a"},
			torn: int64(len(put("b")) + 15)},
		{name: "only the preamble", log: groups},
		{name: "a commit of too few", log: cat(groups, put("a"), put("b"), commit(1, 2)), corrupt: "closes 1 records, after 2"},
		{name: "a group missing its commit before another", log: cat(groups, put("a"), put("b"), commit(1, 2), put("c"), commit(1, 3)),
			corrupt: "closes 1 records, after 2"},
		{name: "an empty commit", log: cat(groups, commit(0, 2)), corrupt: "closes 0 records"},
		{name: "a sequence that skips", log: cat(groups, put("a"), commit(1, 5), put("b"), commit(1, 7)), corrupt: "does not follow"},
		{name: "a commit in a log without groups", log: cat(old, put("a"), commit(1, 1)), corrupt: "unknown record type 4"},
		{name: "records without groups", log: cat(old, put("a"), put("b"), del("a")), ids: []string{"b"}},
		{name: "recLogInfo of another format", log: cat(wal.AppendHeader(nil, wal.KindLog), wal.AppendRecord(nil, recLogInfo, []byte{3, 0, 0, 0})),
			corrupt: "unknown format"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := vfs.NewMemFS()
			require.NoError(t, fsys.MkdirAll("db"))
			f, err := fsys.Create("db/" + fileName(1, wal.KindLog))
			require.NoError(t, err)
			_, err = f.Write(tc.log)
			require.NoError(t, err)
			require.NoError(t, f.Close())

			c, err := open(fsys, "db", Options{SweepInterval: ManualSweep}, 1<<30, true)
			if tc.corrupt != "" {
				require.ErrorIs(t, err, ErrCorrupt)
				require.True(t, strings.Contains(err.Error(), tc.corrupt), "%v", err)
				after, rerr := fsys.ReadFile("db/" + fileName(1, wal.KindLog))
				require.NoError(t, rerr)
				require.Equal(t, tc.log, after, "a corrupt log was changed")
				return
			}
			require.NoError(t, err)
			var got []string
			for d := range c.All() {
				got = append(got, d.ID())
			}
			slices.Sort(got)
			require.Equal(t, tc.ids, got)
			require.Equal(t, tc.torn, c.Stats().TornBytes)
			// Writes go on after the last whole group, numbered after
			// its sequence number, and the log opens again.
			_, err = c.Upsert([]byte(`{"id":"z"}`))
			require.NoError(t, err)
			require.NoError(t, c.Close())
			c, err = open(fsys, "db", Options{SweepInterval: ManualSweep}, 1<<30, true)
			require.NoError(t, err)
			defer c.Close()
			_, err = c.Read("z")
			require.NoError(t, err)
			require.Zero(t, c.Stats().TornBytes)
			require.NoError(t, c.checkInvariants())
		})
	}
}
