package ttlstore_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/vfs"
)

// fuzzLog is the name of the log FuzzOpen writes its input to.
const fuzzLog = "db/0000000000000001.log"

// seedLog returns the log a short history writes, in commit groups: puts
// (one with an escaped id), a touch, a delete, a DefaultTTL change and a
// sweep.
func seedLog(t testing.TB) []byte {
	fsys := vfs.NewMemFS()
	clk := newMock()
	c, err := openMem(t, fsys, clk, ttlstore.SyncNever, 1<<30)
	require.NoError(t, err)
	for _, doc := range []string{`{"id":"a","v":1}`, `{"id":"b","ttl":5}`, `{"id":"\u0063","x":[1,{"y":null}]}`, `{"id":"a","ttl":-1}`} {
		_, err := c.Upsert([]byte(doc))
		require.NoError(t, err)
	}
	clk.Add(2 * time.Second)
	_, err = c.Touch("b")
	require.NoError(t, err)
	require.NoError(t, c.Delete("c"))
	require.NoError(t, c.SetDefaultTTL(ttlstore.TTL(3)))
	_, err = c.Upsert([]byte(`{"id":"d"}`))
	require.NoError(t, err)
	clk.Add(5 * time.Second)
	require.Equal(t, 2, c.Sweep()) // b and d: an expiry record
	require.NoError(t, c.Close())
	b, err := fsys.ReadFile(fuzzLog)
	require.NoError(t, err)
	return b
}

// FuzzOpen opens a directory whose log is the input. Whatever the bytes,
// Open either fails with ErrCorrupt or succeeds with a collection whose
// invariants hold, whose documents are JSON objects with their own ids,
// and which reopens to the same documents. It never panics, and never
// allocates from a length it has not checked (a record's length is
// checked against the file's size before anything is allocated for it).
func FuzzOpen(f *testing.F) {
	log := seedLog(f)
	f.Add(log)
	f.Add(log[:len(log)-7])                      // torn
	f.Add(append(log[:len(log):len(log)], 0, 0)) // zero-filled tail
	f.Add(log[:16])                              // header only
	f.Add([]byte{})
	// A log of the format before commit groups (its records apply one by
	// one).
	v1, err := os.ReadFile(filepath.Join("testdata", "format-v1", "0000000000000002.log"))
	require.NoError(f, err)
	f.Add(v1)
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := vfs.NewMemFS()
		require.NoError(t, fsys.MkdirAll("db"))
		file, err := fsys.Create(fuzzLog)
		require.NoError(t, err)
		_, err = file.Write(data)
		require.NoError(t, err)
		require.NoError(t, file.Sync())
		require.NoError(t, file.Close())
		require.NoError(t, fsys.SyncDir("db"))

		opts := ttlstore.Options{Clock: newMock(), SweepInterval: ttlstore.ManualSweep, MaxDocumentSize: 4096}
		c, err := ttlstore.OpenFS(fsys, "db", opts, 1<<30, true)
		if err != nil {
			require.ErrorIs(t, err, ttlstore.ErrCorrupt)
			return
		}
		require.NoError(t, c.CheckInvariants())
		first := shownOf(c)
		for id, js := range first.docs {
			var v map[string]any
			require.NoError(t, json.Unmarshal([]byte(js), &v), "document %q", id)
			require.Equal(t, id, v["id"])
		}
		require.NoError(t, c.Close())
		c, err = ttlstore.OpenFS(fsys, "db", opts, 1<<30, true)
		require.NoError(t, err, "a directory that opened once does not reopen")
		defer c.Close()
		require.True(t, shownOf(c).equal(first), "reopened to other documents")
	})
}
