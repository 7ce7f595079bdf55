package ttlstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore/internal/vfs"
	"github.com/ttlstore/ttlstore/internal/wal"
)

// The log writer (durable_log.go) tested on its own, on a MemFS file,
// without a Collection: what it promises about groups, numbering, and
// failures.

// newTestLog returns a log writer on a new file of fsys, with its preamble.
func newTestLog(t *testing.T, fsys *vfs.MemFS, policy SyncPolicy) *logWriter {
	t.Helper()
	f, err := fsys.Create("1.log")
	require.NoError(t, err)
	_, err = f.Write(logPreamble())
	require.NoError(t, err)
	return newLogWriter(f, 1, preambleSize, policy, 0)
}

// putMutations returns mutations that store a small document under each id.
func putMutations(t *testing.T, ids ...string) *commit {
	t.Helper()
	ms := make([]mutation, len(ids))
	for i, id := range ids {
		e, err := (&Collection{maxSize: 1 << 20}).prepare("put", []byte(`{"id":"`+id+`"}`))
		require.NoError(t, err)
		ms[i] = mutation{kind: put, id: id, e: e}
	}
	return &commit{many: ms}
}

// logGroup is one commit group as read back: its records' ids, and what
// its recCommit said.
type logGroup struct {
	ids   []string
	count uint32
	seq   uint64
}

// readGroups reads the log file back, checking its framing, and returns
// its groups and the bytes after the last recCommit.
func readGroups(t *testing.T, fsys *vfs.MemFS) (groups []logGroup, open []string) {
	t.Helper()
	data, err := fsys.ReadFile("1.log")
	require.NoError(t, err)
	r, err := wal.NewReader(bytes.NewReader(data), int64(len(data)), wal.KindLog, maxRecord)
	require.NoError(t, err)
	for {
		typ, p, err := r.Next()
		if err != nil {
			require.ErrorIs(t, err, io.EOF) // at the end, or a torn tail
			return groups, open
		}
		switch typ {
		case recLogInfo:
		case recPut:
			e, err := decodePut(p, false)
			require.NoError(t, err)
			open = append(open, e.key())
		case recDelete:
			open = append(open, string(p))
		case recCommit:
			count, seq, err := decodeCommit(p)
			require.NoError(t, err)
			groups = append(groups, logGroup{ids: open, count: count, seq: seq})
			open = nil
		default:
			t.Fatalf("record type %d", typ)
		}
	}
}

func TestLogWriterCommitsAreGroups(t *testing.T) {
	fsys := vfs.NewMemFS()
	l := newTestLog(t, fsys, SyncAlways)
	const writers, commits = 8, 40
	lsns := make([][]uint64, writers)
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range commits {
				var ids []string
				for k := range 1 + (g+i)%3 {
					ids = append(ids, fmt.Sprintf("g%d-c%d-%d", g, i, k))
				}
				lsn, err := l.appendCommit(putMutations(t, ids...))
				if err == nil {
					err = l.waitSynced(lsn)
				}
				if err != nil {
					t.Error(err)
					return
				}
				lsns[g] = append(lsns[g], lsn)
			}
		}()
	}
	wg.Wait()
	require.NoError(t, l.close())

	groups, open := readGroups(t, fsys)
	require.Empty(t, open, "records after the last recCommit")
	// Every group's recCommit counts its records and numbers the last;
	// numbers run on without a gap.
	var seq uint64
	where := map[string]int{} // id -> group
	for gi, g := range groups {
		require.Equal(t, int(g.count), len(g.ids))
		seq += uint64(g.count)
		require.Equal(t, seq, g.seq)
		for _, id := range g.ids {
			where[id] = gi
		}
	}
	// A commit's records are in one group, and its LSN is its last
	// record's; each writer's LSNs increase.
	for g := range writers {
		for i := range commits {
			n := 1 + (g+i)%3
			gi := where[fmt.Sprintf("g%d-c%d-0", g, i)]
			for k := 1; k < n; k++ {
				require.Equal(t, gi, where[fmt.Sprintf("g%d-c%d-%d", g, i, k)], "commit g%d-c%d split across groups", g, i)
			}
			if i > 0 {
				require.Greater(t, lsns[g][i], lsns[g][i-1])
			}
		}
	}
	require.Equal(t, seq, l.next)
}

// A full disk fails the commit it cuts short, and every later append with
// the same error; what was written before it is still fsynced for those
// who wait for it. Through the log's mapping the commit is refused whole,
// when the file cannot grow; through write(2) a short write leaves part
// of it, without its recCommit.
func TestLogWriterFullDisk(t *testing.T) {
	for _, mapped := range []bool{true, false} {
		t.Run(fmt.Sprintf("mapped=%v", mapped), func(t *testing.T) {
			defer setMapLogs(mapped)()
			fsys := vfs.NewMemFS()
			l := newTestLog(t, fsys, SyncNever)
			lsn, err := l.appendCommit(putMutations(t, "a", "b"))
			require.NoError(t, err)
			// Room for c's record whole, but not for the recCommit after it.
			c := putMutations(t, "c")
			fsys.SetCapacity(int64(len(mustRead(t, fsys, "1.log")) + len(appendPut(nil, c.many[0].e)) + 3))
			_, err = l.appendCommit(c)
			require.ErrorIs(t, err, ErrIO)
			_, err2 := l.appendCommit(putMutations(t, "d"))
			require.Same(t, err, err2, "the failure is latched")
			require.NoError(t, l.waitSynced(lsn), "a full disk stops appends, not fsyncs")

			groups, open := readGroups(t, fsys)
			require.Len(t, groups, 1)
			require.Equal(t, []string{"a", "b"}, groups[0].ids)
			if mapped {
				require.Empty(t, open, "the mapping wrote part of a write it refused")
			} else {
				require.Equal(t, []string{"c"}, open, "c's record is whole, and has no recCommit")
			}
			require.ErrorIs(t, l.close(), ErrIO)
		})
	}
}

// setMapLogs sets mapLogs and returns what restores it.
func setMapLogs(on bool) func() {
	was := mapLogs
	mapLogs = on
	return func() { mapLogs = was }
}

// A failed fsync is final: the writer waiting for it and every later one
// get ErrIO, and nothing is fsynced again (a retry could succeed without
// the data).
func TestLogWriterFailedSync(t *testing.T) {
	fsys := vfs.NewMemFS()
	l := newTestLog(t, fsys, SyncAlways)
	syncs := 0
	fsys.SetHook(func(op vfs.Op, _ string) error {
		if op == vfs.OpSync {
			syncs++
			return errors.New("EIO")
		}
		return nil
	})
	lsn, err := l.appendCommit(putMutations(t, "a"))
	require.NoError(t, err, "the record is with the OS")
	require.ErrorIs(t, l.waitSynced(lsn), ErrIO)
	_, err = l.appendCommit(putMutations(t, "b"))
	require.ErrorIs(t, err, ErrIO)
	require.ErrorIs(t, l.waitSynced(lsn), ErrIO)
	require.ErrorIs(t, l.close(), ErrIO)
	require.Equal(t, 1, syncs, "fsync tried again after it failed")
}

// After close, appends fail with ErrClosed and close again is nil.
func TestLogWriterClosed(t *testing.T) {
	fsys := vfs.NewMemFS()
	l := newTestLog(t, fsys, SyncEverySecond)
	_, err := l.appendCommit(putMutations(t, "a"))
	require.NoError(t, err)
	require.NoError(t, l.close())
	_, err = l.appendCommit(putMutations(t, "b"))
	require.ErrorIs(t, err, ErrClosed)
	require.NoError(t, l.close())
	groups, _ := readGroups(t, fsys)
	require.Len(t, groups, 1)
}

func mustRead(t *testing.T, fsys *vfs.MemFS, name string) []byte {
	t.Helper()
	b, err := fsys.ReadFile(name)
	require.NoError(t, err)
	return b
}

// syncHookFile calls during before each Sync, outside the MemFS's lock, so
// that a test can append to the log while a sync is under way.
type syncHookFile struct {
	vfs.File
	during func(n int)
	syncs  int
}

func (f *syncHookFile) Sync() error {
	f.syncs++
	f.during(f.syncs)
	return f.File.Sync()
}

// rotate syncs the old log while writers go on, again while they wrote more
// than rotateTail bytes during the last sync (up to rotateSyncs), so that
// the sync they wait for (with the log's lock held) covers little; and no
// record goes to the new log before the old one is synced whole.
func TestLogWriterRotateSyncsWhileWritersGo(t *testing.T) {
	for _, c := range []struct {
		name   string
		during []int // bytes appended during each sync
		syncs  int   // syncs of the old log
	}{
		{"nothing written meanwhile", []int{0}, 1},
		{"a little written meanwhile", []int{100}, 2},
		{"much, then a little", []int{2 * rotateTail, 100}, 3},
		{"much, then nothing", []int{2 * rotateTail, 0}, 2},
		{"always much", []int{2 * rotateTail, 2 * rotateTail, 2 * rotateTail, 2 * rotateTail}, rotateSyncs + 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			fsys := vfs.NewMemFS()
			l := newTestLog(t, fsys, SyncNever)
			require.NoError(t, fsys.SyncDir("/"))
			f := &syncHookFile{File: l.f}
			l.f = f
			_, err := l.appendCommit(putMutations(t, "first"))
			require.NoError(t, err)
			i := 0
			f.during = func(n int) {
				if n > len(c.during) {
					return
				}
				for size := l.size; l.size-size < int64(c.during[n-1]); {
					_, err := l.appendCommit(putMutations(t, fmt.Sprintf("d%d", i)))
					require.NoError(t, err)
					i++
				}
			}
			nf, err := fsys.Create("2.log")
			require.NoError(t, err)
			seq, err := l.rotate(nf, 2)
			require.NoError(t, err)
			require.Equal(t, c.syncs, f.syncs)
			require.Equal(t, uint64(i+1), seq, "every record went to the old log")
			groups, open := readGroups(t, fsys.Crash(nil, false))
			require.Len(t, groups, i+1, "the old log is synced whole")
			require.Empty(t, open)
		})
	}
}

// With no zeroer running (none is started here), the log's preallocation
// falls behind: the first request of a file is the zeroer's alone, the next
// one sets behind, and catchUp, a writer's, extends the file to what was
// asked, once; Close cuts the tail.
func TestLogWriterCatchUp(t *testing.T) {
	fsys := vfs.NewMemFS()
	fsys.SetExtend(true)
	l := newTestLog(t, fsys, SyncNever)
	size := func() int64 { return int64(len(mustRead(t, fsys, "1.log"))) }
	n := 0
	put := func() {
		n++
		_, err := l.appendCommit(putMutations(t, fmt.Sprintf("d%d", n)))
		require.NoError(t, err)
	}
	put()
	require.False(t, l.behind.Load(), "behind after a file's first request")
	require.Equal(t, l.size, size(), "the file was extended without a zeroer")
	first := l.ahead
	for l.ahead == first {
		put()
	}
	require.True(t, l.behind.Load(), "not behind with the zeroer's requests undone")
	l.catchUp()
	require.False(t, l.behind.Load())
	require.Equal(t, l.ahead, size(), "catchUp extended the file to what was asked")
	require.Equal(t, l.ahead, l.extended.Load())
	put()
	require.False(t, l.behind.Load(), "behind with the preallocation done")
	require.NoError(t, l.close())
	require.Equal(t, l.size, size(), "Close cut the tail")
}
