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
	if ttlstore.RaceRepeat(t) {
		t.Skip("one goroutine: a repeat under -race finds nothing the first run did not (see RaceRepeat)")
	}
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

// TestDurableCleanUpRemovesOnlyItsOwnFiles: Open and compaction remove the
// library's own stale files (logs and snapshots a newer snapshot replaces,
// temporary snapshots) and nothing else a user put in the directory, even
// names that look like the library's.
func TestDurableCleanUpRemovesOnlyItsOwnFiles(t *testing.T) {
	foreign := []string{
		"notes.txt",
		"x.tmp",
		"0000000000000001.log.bak",
		"0000000000000000.snap.old",
		"0000000000000001.snap.tmp.keep",
		"000000000000001.log", // 15 digits
	}
	put := func(t *testing.T, fsys *vfs.MemFS, name string, data []byte) {
		t.Helper()
		f, err := fsys.Create("db/" + name)
		require.NoError(t, err)
		_, err = f.Write(data)
		require.NoError(t, err)
		require.NoError(t, f.Sync())
		require.NoError(t, f.Close())
		require.NoError(t, fsys.SyncDir("db"))
	}
	fsys := vfs.NewMemFS()
	clk := newMock()
	c, err := openMem(t, fsys, clk, ttlstore.SyncNever, 1<<30)
	require.NoError(t, err)
	upsert(t, c, `{"id":"a"}`)
	require.NoError(t, c.Close())
	log1, err := fsys.ReadFile("db/0000000000000001.log")
	require.NoError(t, err)
	c, err = openMem(t, fsys, clk, ttlstore.SyncNever, 1<<30)
	require.NoError(t, err)
	require.NoError(t, c.Compact()) // snapshot and log 2; log 1 removed
	want := shownOf(c)
	require.NoError(t, c.Close())

	// What an interrupted compaction leaves (a replaced log, temporary
	// snapshots), and what a user leaves.
	stale := []string{"0000000000000001.log", "0000000000000001.snap.tmp", "0000000000000003.snap.tmp"}
	put(t, fsys, stale[0], log1)
	put(t, fsys, stale[1], []byte("partial"))
	put(t, fsys, stale[2], []byte("partial"))
	for _, name := range foreign {
		put(t, fsys, name, []byte("mine"))
	}
	check := func(when string) {
		t.Helper()
		names, err := fsys.List("db")
		require.NoError(t, err)
		for _, name := range foreign {
			assert.Contains(t, names, name, "%s removed a file it did not write", when)
		}
		for _, name := range stale {
			assert.NotContains(t, names, name, "%s left a stale file", when)
		}
	}
	c, err = openMem(t, fsys, clk, ttlstore.SyncNever, 1<<30)
	require.NoError(t, err)
	assert.True(t, shownOf(c).equal(want))
	check("Open")
	upsert(t, c, `{"id":"b"}`)
	require.NoError(t, c.Compact())
	check("Compact")
	want = shownOf(c)
	require.NoError(t, c.Close())

	c, err = openMem(t, fsys, clk, ttlstore.SyncNever, 1<<30)
	require.NoError(t, err)
	defer c.Close()
	assert.True(t, shownOf(c).equal(want), "the foreign files change nothing")
	check("a second Open")
}

// TestDurableCompactWriteBackFails: a snapshot is written back to the disk
// a chunk at a time (vfs.File.WriteBack) as it is written. When that fails,
// at the first chunk or a later one, Compact returns ErrIO and leaves no
// snapshot, temporary or published; the log goes on taking writes; and the
// directory loads after a crash to what was acknowledged. A later Compact
// succeeds.
func TestDurableCompactWriteBackFails(t *testing.T) {
	if ttlstore.RaceRepeat(t) {
		t.Skip("deterministic, one goroutine: checked by the first run")
	}
	for _, nth := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("writeback=%d", nth), func(t *testing.T) {
			fsys := vfs.NewMemFS()
			clk := newMock()
			c, err := openMem(t, fsys, clk, ttlstore.SyncAlways, 1<<30)
			require.NoError(t, err)
			pad := strings.Repeat("x", 300)
			for i := range 2000 { // 600 KB: three chunks
				_, err := c.Upsert(fmt.Appendf(nil, `{"id":"d%d","p":%q}`, i, pad))
				require.NoError(t, err)
			}
			calls := 0
			fsys.SetHook(func(op vfs.Op, _ string) error {
				if op == vfs.OpWriteBack {
					if calls++; calls == nth {
						return vfs.ErrInjected
					}
				}
				return nil
			})
			require.ErrorIs(t, c.Compact(), ttlstore.ErrIO)
			require.Equal(t, nth, calls, "the snapshot stopped at the failure")
			fsys.SetHook(nil)
			names, err := fsys.List("db")
			require.NoError(t, err)
			for _, name := range names {
				assert.NotContains(t, name, ".snap", "a failed compaction left %s", name)
			}
			_, err = c.Upsert([]byte(`{"id":"after"}`))
			require.NoError(t, err, "the log goes on")
			want := shownOf(c)

			crashed := fsys.Crash(nil, false)
			c.Close() // its file system is gone
			c2, err := openMem(t, crashed, clk, ttlstore.SyncAlways, 1<<30)
			require.NoError(t, err)
			assert.True(t, want.equal(shownOf(c2)), "after a crash")
			require.NoError(t, c2.Compact())
			require.NoError(t, c2.Close())
			c3, err := openMem(t, crashed, clk, ttlstore.SyncAlways, 1<<30)
			require.NoError(t, err)
			assert.True(t, want.equal(shownOf(c3)), "after a compaction that succeeded")
			require.NoError(t, c3.Close())
		})
	}
}

// TestDurableCompactTrimsBigStaleSnapshot: a compaction that replaces a
// snapshot bigger than 8 MiB cuts it down a few MiB at a time, each cut
// fsynced, before it removes it. If the removal fails (or a crash comes
// first), the cut-down stale snapshot is left beside the new one, and the
// directory still loads to the same documents, Open removing it.
func TestDurableCompactTrimsBigStaleSnapshot(t *testing.T) {
	if ttlstore.RaceRepeat(t) {
		t.Skip("deterministic, one goroutine: checked by the first run")
	}
	fsys := vfs.NewMemFS()
	clk := newMock()
	c, err := openMem(t, fsys, clk, ttlstore.SyncNever, 1<<40)
	require.NoError(t, err)
	pad := strings.Repeat("x", 300)
	for i := range 30000 { // 9.5 MB of snapshot
		_, err := c.Upsert(fmt.Appendf(nil, `{"id":"d%d","p":%q}`, i, pad))
		require.NoError(t, err)
	}
	require.NoError(t, c.Compact())
	names, err := fsys.List("db")
	require.NoError(t, err)
	var stale string
	for _, name := range names {
		if strings.HasSuffix(name, ".snap") {
			stale = name
		}
	}
	require.NotEmpty(t, stale)
	var ops []string
	fsys.SetHook(func(op vfs.Op, name string) error {
		if strings.HasSuffix(name, stale) {
			ops = append(ops, op.String())
			if op == vfs.OpRemove {
				return vfs.ErrInjected
			}
		}
		return nil
	})
	require.NoError(t, c.Compact(), "cleaning up is best effort")
	fsys.SetHook(nil)
	assert.Equal(t, []string{"openappend", "size", "truncate", "sync", "close", "remove"}, ops)
	left, err := fsys.ReadFile("db/" + stale)
	require.NoError(t, err)
	assert.Less(t, len(left), 8<<20, "cut down")
	want := shownOf(c)
	crashed := fsys.Crash(nil, false)
	c.Close() // its file system is gone
	c2, err := openMem(t, crashed, clk, ttlstore.SyncNever, 1<<40)
	require.NoError(t, err)
	assert.True(t, want.equal(shownOf(c2)))
	require.NoError(t, c2.Close())
	_, err = crashed.ReadFile("db/" + stale)
	assert.Error(t, err, "Open removed the stale snapshot")
}
