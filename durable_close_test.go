package ttlstore_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/vfs"
)

// stallFS is a file system whose first Write to a temporary snapshot
// stalls, as on a slow disk, until release is closed; it says so on
// stalled first. It stalls outside the wrapped MemFS, whose hook would
// hold the MemFS's mutex and so stall every other call on it too.
type stallFS struct {
	vfs.FS
	once             sync.Once
	stalled, release chan struct{}
}

func (s *stallFS) Create(name string) (vfs.File, error) {
	f, err := s.FS.Create(name)
	if err != nil || !strings.HasSuffix(name, ".snap.tmp") {
		return f, err
	}
	return &stallFile{File: f, fs: s}, nil
}

type stallFile struct {
	vfs.File
	fs *stallFS
}

func (f *stallFile) Write(p []byte) (int, error) {
	f.fs.once.Do(func() {
		close(f.fs.stalled)
		<-f.fs.release
	})
	return f.File.Write(p)
}

// TestDurableCloseWaitsForCompact: Close waits for a Compact a caller
// started, and keeps the directory locked meanwhile; a Compact called
// after Close began returns ErrClosed; the compaction completes, and the
// directory reopens to the same documents.
func TestDurableCloseWaitsForCompact(t *testing.T) {
	mem := vfs.NewMemFS()
	fsys := &stallFS{FS: mem, stalled: make(chan struct{}), release: make(chan struct{})}
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(fsys.release) }) }
	defer release() // lets the goroutines end if the test fails early

	opts := ttlstore.Options{Clock: newMock(), SweepInterval: ttlstore.ManualSweep}
	c, err := ttlstore.OpenFS(fsys, "db", opts, 1<<30, false)
	require.NoError(t, err)
	upsert(t, c, `{"id":"a"}`)
	upsert(t, c, `{"id":"b"}`)
	want := shownOf(c)

	compacted := make(chan error, 1)
	go func() { compacted <- c.Compact() }()
	<-fsys.stalled
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	select {
	case err := <-closed:
		release()
		<-compacted
		t.Fatalf("Close returned (%v) while a Compact was writing its snapshot", err)
	case <-time.After(50 * time.Millisecond): // a chance for a wrong Close to return
	}
	if other, err := ttlstore.OpenFS(mem, "db", opts, 1<<30, false); err == nil {
		other.Close()
		release()
		<-compacted
		<-closed
		t.Fatal("the directory was released while a Compact ran")
	} else {
		assert.ErrorIs(t, err, ttlstore.ErrLocked)
	}
	assert.ErrorIs(t, c.Compact(), ttlstore.ErrClosed, "a Compact after Close began")

	release()
	require.NoError(t, <-compacted)
	require.NoError(t, <-closed)
	names, err := mem.List("db")
	require.NoError(t, err)
	assert.Contains(t, names, "0000000000000002.snap", "the compaction was published")

	c, err = ttlstore.OpenFS(mem, "db", opts, 1<<30, false)
	require.NoError(t, err)
	defer c.Close()
	assert.True(t, shownOf(c).equal(want))
}
