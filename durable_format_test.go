package ttlstore_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
)

// TestDurableOpensFormatV1 opens testdata/format-v1, a directory written by
// the version before commit groups (a snapshot, and a log with puts, a
// delete, a DefaultTTL change and a Touch after it): it loads to exactly
// what that version showed (testdata/format-v1.want), leaves the old log as
// it was, writes on in a new log, and opens again to the old documents and
// the new writes.
func TestDurableOpensFormatV1(t *testing.T) {
	dir := copyDir(t, filepath.Join("testdata", "format-v1"))
	want, err := os.ReadFile(filepath.Join("testdata", "format-v1.want"))
	require.NoError(t, err)
	oldLog, err := os.ReadFile(filepath.Join(dir, "0000000000000002.log"))
	require.NoError(t, err)
	opts := ttlstore.Options{DefaultTTL: ttlstore.TTL(7200), Clock: newMock(), SweepInterval: ttlstore.ManualSweep}

	c, err := ttlstore.Open(dir, opts)
	require.NoError(t, err)
	require.Equal(t, strings.TrimSpace(string(want)), shownOf(c).String())
	upsert(t, c, `{"id":"new","ttl":-1}`)
	require.NoError(t, c.Delete("a"))
	require.NoError(t, c.Close())

	got, err := os.ReadFile(filepath.Join(dir, "0000000000000002.log"))
	require.NoError(t, err)
	assert.Equal(t, oldLog, got, "the old log changed")
	_, err = os.Stat(filepath.Join(dir, "0000000000000003.log"))
	require.NoError(t, err, "no new log for the writes after the old one")

	c, err = ttlstore.Open(dir, opts)
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, []string{"b", "c", "d", "new", "été"}, ids(c))
	assert.Zero(t, c.Stats().TornBytes)
	require.NoError(t, c.Compact(), "compacts over an old log")
	require.NoError(t, c.CheckInvariants())
}

// TestDurableOpensFormatV2 opens testdata/format-v2, a directory written by
// the version with commit groups before the write pipeline (cd1ab7b): a
// snapshot, then a log with puts, a delete, a sweep's recExpire, a Touch and
// a DefaultTTL change. It loads to exactly what that version showed after
// the same steps (testdata/format-v2.want), writes on, and opens again to
// the old documents and the new writes.
func TestDurableOpensFormatV2(t *testing.T) {
	dir := copyDir(t, filepath.Join("testdata", "format-v2"))
	want, err := os.ReadFile(filepath.Join("testdata", "format-v2.want"))
	require.NoError(t, err)
	clk := newMock()
	clk.Add(10 * time.Second) // where the writer's clock stopped
	opts := ttlstore.Options{DefaultTTL: ttlstore.TTL(7200), Clock: clk, SweepInterval: ttlstore.ManualSweep}

	c, err := ttlstore.Open(dir, opts)
	require.NoError(t, err)
	require.Equal(t, strings.TrimSpace(string(want)), shownOf(c).String())
	assert.Zero(t, c.Stats().TornBytes)
	upsert(t, c, `{"id":"new","ttl":-1}`)
	require.NoError(t, c.Delete("a"))
	require.NoError(t, c.Close())

	c, err = ttlstore.Open(dir, opts)
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, []string{"b", "c", "d", "new", "été"}, ids(c))
	require.NoError(t, c.Compact())
	require.NoError(t, c.CheckInvariants())
}
