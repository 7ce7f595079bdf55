package ttlstore_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/vfs"
)

// openPartitioned opens "db" on fsys with the partition key path /tenant.
func openPartitioned(t *testing.T, fsys vfs.FS, clk clock.Clock, minCompact int64) (*ttlstore.Collection, error) {
	t.Helper()
	return ttlstore.OpenFS(fsys, "db", ttlstore.Options{
		DefaultTTL:       ttlstore.TTL(3600),
		Clock:            clk,
		SweepInterval:    ttlstore.ManualSweep,
		PartitionKeyPath: "/tenant",
	}, minCompact, true)
}

// shownIn is what a partitioned collection shows: every document by
// partition and id.
func shownIn(c *ttlstore.Collection) map[string]string {
	out := map[string]string{}
	for d := range c.All() {
		out[d.PartitionKey().String()+"/"+d.ID()] = d.String()
	}
	return out
}

// TestDurablePartitionRestart: a restart, a compaction and a restart
// again keep each document's partition: the same id in two partitions is
// two documents, read by partition.
func TestDurablePartitionRestart(t *testing.T) {
	fsys := vfs.NewMemFS()
	clk := newMock()
	c, err := openPartitioned(t, fsys, clk, 1<<20)
	require.NoError(t, err)
	for _, doc := range []string{
		`{"id":"x","tenant":"a","v":1}`, `{"id":"x","tenant":"b","v":2}`, `{"id":"x","v":3}`,
		`{"id":"x","tenant":null}`, `{"id":"x","tenant":1}`, `{"id":"\u00e9","tenant":"\u00e9"}`,
		`{"id":"y","tenant":"a"}`,
	} {
		mustUpsert(t, c, doc)
	}
	require.NoError(t, c.DeleteIn(pkA, "y"))
	_, err = c.TouchIn(pkB, "x")
	require.NoError(t, err)
	want := shownIn(c)
	require.Len(t, want, 6)
	require.NoError(t, c.Close())

	for _, compact := range []bool{false, true} {
		c, err = openPartitioned(t, fsys, clk, 1<<20)
		require.NoError(t, err)
		require.NoError(t, c.CheckInvariants())
		assert.Equal(t, want, shownIn(c), "compacted before: %v", compact)
		d, err := c.ReadIn(ttlstore.PartitionKeyNumber(1.0), "x")
		require.NoError(t, err)
		assert.Equal(t, "1", string(members(t, d)["tenant"]))
		_, err = c.ReadIn(pkA, "y")
		require.ErrorIs(t, err, ttlstore.ErrNotFound)
		require.NoError(t, c.Compact())
		require.NoError(t, c.Close())
	}
}

// TestDurablePartitionPathRecorded: a directory keeps the path it was
// written with; Open with another, or with none, or a directory written
// without one opened with one, is refused and changes nothing.
func TestDurablePartitionPathRecorded(t *testing.T) {
	for _, compact := range []bool{false, true} {
		t.Run(fmt.Sprint("compacted=", compact), func(t *testing.T) {
			fsys := vfs.NewMemFS()
			clk := newMock()
			c, err := openPartitioned(t, fsys, clk, 1<<20)
			require.NoError(t, err)
			mustUpsert(t, c, `{"id":"x","tenant":"a"}`)
			if compact {
				require.NoError(t, c.Compact())
			}
			require.NoError(t, c.Close())
			for _, path := range []string{"", "/other"} {
				_, err := ttlstore.OpenFS(fsys, "db", ttlstore.Options{Clock: clk, SweepInterval: ttlstore.ManualSweep, PartitionKeyPath: path}, 1<<20, true)
				require.ErrorIs(t, err, ttlstore.ErrInvalidOptions, "path %q", path)
				assert.Contains(t, err.Error(), `"/tenant"`)
			}
			c, err = openPartitioned(t, fsys, clk, 1<<20)
			require.NoError(t, err)
			_, err = c.ReadIn(pkA, "x")
			require.NoError(t, err)
			require.NoError(t, c.Close())
		})
	}
	fsys := vfs.NewMemFS()
	c, err := openMem(t, fsys, newMock(), ttlstore.SyncAlways, 1<<20)
	require.NoError(t, err)
	mustUpsert(t, c, `{"id":"x","tenant":"a"}`)
	require.NoError(t, c.Close())
	_, err = openPartitioned(t, fsys, newMock(), 1<<20)
	require.ErrorIs(t, err, ttlstore.ErrInvalidOptions, "an unpartitioned directory")
	c, err = openMem(t, fsys, newMock(), ttlstore.SyncAlways, 1<<20)
	require.NoError(t, err, "and it still opens as it was")
	assert.Equal(t, []string{"x"}, ids(c))
	require.NoError(t, c.Close())
}

// TestDurablePartitionDelete: a partition deleted is deleted after a
// restart, whether or not the sweeper removed it first, after a
// compaction, and after a crash (SyncAlways: the call returned once its
// record was synced); writes to the partition after the call are kept.
func TestDurablePartitionDelete(t *testing.T) {
	for _, tc := range []string{"close", "sweep", "compact", "crash", "crash-torn"} {
		t.Run(tc, func(t *testing.T) {
			fsys := vfs.NewMemFS()
			clk := newMock()
			c, err := openPartitioned(t, fsys, clk, 1<<20)
			require.NoError(t, err)
			for i := range 30 {
				mustUpsert(t, c, fmt.Sprintf(`{"id":"d%d","tenant":"a"}`, i))
				mustUpsert(t, c, fmt.Sprintf(`{"id":"d%d","tenant":"b"}`, i))
			}
			require.NoError(t, c.DeletePartition(pkA))
			mustUpsert(t, c, `{"id":"d1","tenant":"a","after":true}`)
			want := shownIn(c)
			require.Len(t, want, 31)
			switch tc {
			case "sweep":
				assert.Equal(t, 29, c.Sweep())
			case "compact":
				require.NoError(t, c.Compact())
			}
			switch tc {
			case "crash", "crash-torn":
				after := fsys.Crash(rand.New(rand.NewPCG(1, 2)), tc == "crash-torn")
				c.Close() // the dead machine's
				fsys = after
			default:
				require.NoError(t, c.Close())
			}
			c, err = openPartitioned(t, fsys, clk, 1<<20)
			require.NoError(t, err)
			defer c.Close()
			require.NoError(t, c.CheckInvariants())
			assert.Equal(t, want, shownIn(c))
			assert.Zero(t, c.Stats().Deleted, "replay removes them")
			assert.Equal(t, []string{"d1"}, idsIn(c, pkA))
		})
	}
}

// TestDurableOpensFormatV3 opens testdata/format-v3, a directory written by
// the first version with partition keys (log format 3, recPutPK and
// recPurge records, a snapshot with the path): a snapshot, then a log with
// puts in several partitions, a delete, a touch, a partition delete and a
// write to that partition after it. It loads to exactly what that version
// showed (testdata/format-v3.want), writes on, and opens again.
func TestDurableOpensFormatV3(t *testing.T) {
	dir := copyDir(t, filepath.Join("testdata", "format-v3"))
	want, err := os.ReadFile(filepath.Join("testdata", "format-v3.want"))
	require.NoError(t, err)
	clk := newMock()
	clk.Add(10 * time.Second)
	opts := ttlstore.Options{DefaultTTL: ttlstore.TTL(7200), Clock: clk, SweepInterval: ttlstore.ManualSweep, PartitionKeyPath: "/tenant"}

	c, err := ttlstore.Open(dir, opts)
	require.NoError(t, err)
	require.Equal(t, strings.TrimSpace(string(want)), shownPartitions(c))
	assert.Zero(t, c.Stats().TornBytes)
	mustUpsert(t, c, `{"id":"new","tenant":"b","ttl":-1}`)
	require.NoError(t, c.DeleteIn(pkB, "x"))
	require.NoError(t, c.Close())

	c, err = ttlstore.Open(dir, opts)
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, []string{"new"}, idsIn(c, pkB))
	require.NoError(t, c.Compact())
	require.NoError(t, c.CheckInvariants())
}

// shownPartitions is shownIn as text, sorted.
func shownPartitions(c *ttlstore.Collection) string {
	var lines []string
	for k, v := range shownIn(c) {
		lines = append(lines, k+" "+v)
	}
	slicesSort(lines)
	return strings.Join(lines, "\n")
}

// TestWriteFormatV3 writes testdata/format-v3 and its .want when
// TTLSTORE_WRITE_FORMAT_V3 is set: how the checked-in directory was made,
// kept so that it can be read, not to be run again (the directory must
// stay as the first version wrote it).
func TestWriteFormatV3(t *testing.T) {
	if os.Getenv("TTLSTORE_WRITE_FORMAT_V3") == "" {
		t.Skip("writes testdata/format-v3 only when TTLSTORE_WRITE_FORMAT_V3 is set")
	}
	dir := filepath.Join("testdata", "format-v3")
	require.NoError(t, os.RemoveAll(dir))
	clk := newMock()
	opts := ttlstore.Options{DefaultTTL: ttlstore.TTL(7200), Clock: clk, SweepInterval: ttlstore.ManualSweep, PartitionKeyPath: "/tenant"}
	c, err := ttlstore.Open(dir, opts)
	require.NoError(t, err)
	mustUpsert(t, c, `{"id":"x","tenant":"a","v":1}`)
	mustUpsert(t, c, `{"id":"x","tenant":"b","v":2}`)
	mustUpsert(t, c, `{"id":"x","v":"none"}`)
	require.NoError(t, c.Compact())
	mustUpsert(t, c, `{"id":"y","tenant":null,"ttl":60}`)
	mustUpsert(t, c, `{"id":"z","tenant":1.0}`)
	mustUpsert(t, c, `{"id":"\u00e9t\u00e9","tenant":"\u00e9"}`)
	mustUpsert(t, c, `{"id":"gone","tenant":"b"}`)
	require.NoError(t, c.DeleteIn(pkB, "gone"))
	clk.Add(10 * time.Second)
	_, err = c.TouchIn(ttlstore.PartitionKeyNumber(1), "z")
	require.NoError(t, err)
	mustUpsert(t, c, `{"id":"w","tenant":"a"}`)
	require.NoError(t, c.DeletePartition(pkA))
	mustUpsert(t, c, `{"id":"after","tenant":"a"}`)
	want := shownPartitions(c)
	require.NoError(t, c.Close())
	require.NoError(t, os.Remove(filepath.Join(dir, "LOCK")))
	require.NoError(t, os.WriteFile(filepath.Join("testdata", "format-v3.want"), []byte(want+"\n"), 0o644))
}

// TestDurablePartitionDeleteFaults fails each file-system step of a
// DeletePartition (its record's write, its fsync), then crashes: after
// Open the partition is either whole or gone, never in part, and gone
// whenever the call returned nil. (As for any write, a failed fsync
// leaves the deletion applied in memory: see ErrIO.)
func TestDurablePartitionDeleteFaults(t *testing.T) {
	for n := int64(1); n <= 4; n++ {
		for _, tear := range []bool{false, true} {
			t.Run(fmt.Sprintf("step=%d/tear=%v", n, tear), func(t *testing.T) {
				fsys := vfs.NewMemFS()
				clk := newMock()
				c, err := openPartitioned(t, fsys, clk, 1<<20)
				require.NoError(t, err)
				for i := range 20 {
					mustUpsert(t, c, fmt.Sprintf(`{"id":"d%d","tenant":"a"}`, i))
				}
				mustUpsert(t, c, `{"id":"d0","tenant":"b"}`)
				fsys.SetHook(vfs.FailNth(n, nil))
				delErr := c.DeletePartition(pkA)
				if delErr != nil {
					require.ErrorIs(t, delErr, ttlstore.ErrIO)
					assert.Contains(t, []int{0, 20}, len(idsIn(c, pkA)), "whole or gone in memory")
				} else {
					assert.Empty(t, idsIn(c, pkA))
				}
				after := fsys.Crash(rand.New(rand.NewPCG(uint64(n), 9)), tear)
				c.Close()
				c, err = openPartitioned(t, after, clk, 1<<20)
				require.NoError(t, err)
				defer c.Close()
				require.NoError(t, c.CheckInvariants())
				got := len(idsIn(c, pkA))
				if delErr == nil {
					assert.Zero(t, got, "deleted, and acknowledged")
				} else {
					assert.Contains(t, []int{0, 20}, got, "whole or gone")
				}
				assert.Equal(t, []string{"d0"}, idsIn(c, pkB))
			})
		}
	}
}

// TestDurablePartitionBatchFaults fails each file-system step of a
// partition's batch, then crashes: after Open the batch is all there or
// not at all, and there whenever ExecuteBatch returned nil.
func TestDurablePartitionBatchFaults(t *testing.T) {
	for n := int64(1); n <= 4; n++ {
		for _, tear := range []bool{false, true} {
			t.Run(fmt.Sprintf("step=%d/tear=%v", n, tear), func(t *testing.T) {
				fsys := vfs.NewMemFS()
				clk := newMock()
				c, err := openPartitioned(t, fsys, clk, 1<<20)
				require.NoError(t, err)
				mustUpsert(t, c, `{"id":"old","tenant":"a"}`)
				mustUpsert(t, c, `{"id":"old","tenant":"b"}`)
				fsys.SetHook(vfs.FailNth(n, nil))
				b := new(ttlstore.Batch).In(pkA).Delete("old")
				for i := range 10 {
					b.Create(fmt.Sprintf(`{"id":"n%d","tenant":"a","pad":%q}`, i, strings.Repeat("x", 200)))
				}
				_, batchErr := c.ExecuteBatch(b)
				after := fsys.Crash(rand.New(rand.NewPCG(uint64(n), 5)), tear)
				c.Close()
				c, err = openPartitioned(t, after, clk, 1<<20)
				require.NoError(t, err)
				defer c.Close()
				require.NoError(t, c.CheckInvariants())
				got := idsIn(c, pkA)
				all := []string{"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9"}
				if batchErr == nil {
					assert.Equal(t, all, got)
				} else {
					require.ErrorIs(t, batchErr, ttlstore.ErrIO)
					if len(got) != 1 {
						assert.Equal(t, all, got, "all or nothing")
					} else {
						assert.Equal(t, []string{"old"}, got, "all or nothing")
					}
				}
				assert.Equal(t, []string{"old"}, idsIn(c, pkB), "the other partition's old is untouched")
			})
		}
	}
}
