package ttlstore_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/vfs"
)

// TestDurableDiskFullConcurrentWriters fills the disk under 32 concurrent
// writers, at many fill levels and under each sync policy: what each writer
// was told and what the collection shows must agree, in memory before Close
// and after a restart (a clean Close, a kill -9, or under SyncAlways a power
// loss). A refused upsert is not there; a refused delete removed nothing.
// Before commit groups, a group-commit batch that ENOSPC cut short kept the
// whole records of writers told ErrIO, and a restart replayed them.
func TestDurableDiskFullConcurrentWriters(t *testing.T) {
	levels := 48
	if raceEnabled {
		levels = 12
	}
	if ttlstore.RaceRepeat(t) {
		levels = 4 // the repeats of -count under -race (see RaceRepeat)
	}
	for _, policy := range []ttlstore.SyncPolicy{ttlstore.SyncAlways, ttlstore.SyncEverySecond, ttlstore.SyncNever} {
		t.Run(policy.String(), func(t *testing.T) {
			for level := range levels {
				// Room for a few to a few hundred records past the
				// preload, so that the disk fills at every point of
				// a batch; every other round with the log's zeroer
				// preallocating (vfs.MemFS.SetExtend).
				diskFullRound(t, policy, uint64(level), int64(level)*97+int64(level%7), level%2 == 1)
			}
		})
	}
}

// dfPreload is room enough for newDiskFullWriters's preload (96 records of
// about 100 bytes).
const dfPreload = 16 << 10

// diskFullRound is one round of TestDurableDiskFullConcurrentWriters with
// room bytes free after the preload, on a MemFS. With extend, the log's
// zeroer preallocates (vfs.Extender), from Open's first write on: the
// capacity is set before Open, with room for what Open and the preload
// write, so that the zeroer meets ENOSPC first and the writers fill what
// it took, the zeroer and the writers' own extensions racing.
func diskFullRound(t *testing.T, policy ttlstore.SyncPolicy, seed uint64, room int64, extend bool) {
	fsys := vfs.NewMemFS()
	if extend {
		fsys.SetExtend(true)
		fsys.SetCapacity(2*dfPreload + room)
	}
	clk := newMock()
	c, err := openMem(t, fsys, clk, policy, 1<<30)
	require.NoError(t, err)
	w := newDiskFullWriters(t, c)
	if !extend {
		fsys.SetCapacity(fsysUsed(t, fsys) + room)
	}
	w.run(t, c, seed)
	w.check(t, c, fmt.Sprintf("room %d, in memory", room))

	// A clean Close, a kill -9, or (SyncAlways) a power loss, in turn.
	restarted, how := fsys, "Close"
	switch {
	case seed%3 == 1 || seed%3 == 2 && policy != ttlstore.SyncAlways:
		restarted, how = fsys.Kill(), "kill -9"
	case seed%3 == 2:
		restarted, how = fsys.Crash(nil, false), "power loss"
	}
	closeErr := c.Close() // ErrIO if the disk filled; ErrCrashed after a kill
	if how == "Close" && closeErr != nil {
		require.ErrorIs(t, closeErr, ttlstore.ErrIO)
	}
	restarted.SetCapacity(0)
	c, err = openMem(t, restarted, clk, policy, 1<<30)
	require.NoError(t, err, how)
	w.check(t, c, fmt.Sprintf("room %d, after %s", room, how))
	require.NoError(t, c.CheckInvariants())
	require.NoError(t, c.Close())
}

// diskFullWriters is the workload of the full-disk tests: 32 goroutines,
// each upserting and deleting 3 ids of its own until the log fails, and
// what each was told.
type diskFullWriters struct {
	mu sync.Mutex
	// want is, by id, the "v" of the last acknowledged upsert, or -1 if
	// the last acknowledged write deleted it.
	want map[string]int
	// refused counts the writers that met ErrIO: a round that never
	// filled the disk tests nothing.
	refused int
}

const (
	dfWriters = 32
	dfIDsEach = 3
	dfOpsEach = 40
)

func dfID(g, k int) string { return fmt.Sprintf("w%02d-%d", g, k) }

// newDiskFullWriters stores every id of the workload, with v 0.
func newDiskFullWriters(t *testing.T, c *ttlstore.Collection) *diskFullWriters {
	w := &diskFullWriters{want: make(map[string]int)}
	for g := range dfWriters {
		for k := range dfIDsEach {
			upsert(t, c, fmt.Sprintf(`{"id":"%s","v":0}`, dfID(g, k)))
			w.want[dfID(g, k)] = 0
		}
	}
	return w
}

// run runs the writers until each has made its writes or met ErrIO.
func (w *diskFullWriters) run(t *testing.T, c *ttlstore.Collection, seed uint64) {
	var wg sync.WaitGroup
	for g := range dfWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(g)))
			for n := 1; n <= dfOpsEach; n++ {
				id := dfID(g, rng.IntN(dfIDsEach))
				var err error
				v := -1
				if rng.IntN(3) == 0 {
					err = c.Delete(id)
				} else {
					v = n
					_, err = c.Upsert([]byte(fmt.Sprintf(`{"id":"%s","v":%d,"pad":"%0*d"}`, id, v, rng.IntN(60), 0)))
				}
				switch {
				case err == nil:
					w.mu.Lock()
					w.want[id] = v
					w.mu.Unlock()
				case errors.Is(err, ttlstore.ErrNotFound) && v == -1:
					// deleted already: nothing changes
				case errors.Is(err, ttlstore.ErrIO):
					w.mu.Lock()
					w.refused++
					w.mu.Unlock()
					return // the log has failed: every later write fails too
				default:
					t.Errorf("%s: %v", id, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	require.Positive(t, w.refused, "the disk never filled")
}

// check requires c to show exactly the acknowledged writes.
func (w *diskFullWriters) check(t *testing.T, c *ttlstore.Collection, when string) {
	t.Helper()
	for id, v := range w.want {
		d, err := c.Read(id)
		if v == -1 {
			require.ErrorIs(t, err, ttlstore.ErrNotFound, "%s (%s): deleted, and the delete acknowledged", id, when)
			continue
		}
		require.NoError(t, err, "%s (%s): a refused delete removed it", id, when)
		var got struct{ V int }
		require.NoError(t, d.Decode(&got))
		require.Equal(t, v, got.V, "%s (%s): not the last acknowledged write", id, when)
	}
}

// syncStallFS is a file system whose log's Syncs stall, once armed, until
// release is closed; the first to stall says so on stalled. It stalls
// outside the wrapped MemFS, whose hook would hold the MemFS's mutex.
type syncStallFS struct {
	vfs.FS
	armed            atomic.Bool
	once             sync.Once
	stalled, release chan struct{}
}

func (s *syncStallFS) Create(name string) (vfs.File, error) { return s.wrap(s.FS.Create(name)) }
func (s *syncStallFS) OpenAppend(name string) (vfs.File, error) {
	return s.wrap(s.FS.OpenAppend(name))
}

func (s *syncStallFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &syncStallFile{File: f, fs: s}, nil
}

type syncStallFile struct {
	vfs.File
	fs *syncStallFS
}

func (f *syncStallFile) Sync() error {
	if f.fs.armed.Load() {
		f.fs.once.Do(func() { close(f.fs.stalled) })
		<-f.fs.release
	}
	return f.File.Sync()
}

// TestDurableDiskFullWhileWaitingForSync: under SyncAlways, a write whose
// record reached the file waits for an fsync; meanwhile another write's
// batch meets a full disk. The first write is acknowledged (its record is
// whole, in its own group, and fsynced after all), and so it is in memory
// and after a restart; the second is refused, in neither. Before, the
// first writer got the latched ENOSPC while its document was already
// readable, and a restart brought it back.
func TestDurableDiskFullWhileWaitingForSync(t *testing.T) {
	mem := vfs.NewMemFS()
	fsys := &syncStallFS{FS: mem, stalled: make(chan struct{}), release: make(chan struct{})}
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(fsys.release) }) }
	defer release()
	clk := newMock()
	c, err := openMem(t, fsys, clk, ttlstore.SyncAlways, 1<<30)
	require.NoError(t, err)

	// c0 leads an fsync that stalls: later writers wait for it.
	fsys.armed.Store(true)
	c0 := make(chan error, 1)
	go func() { _, err := c.Upsert([]byte(`{"id":"c0"}`)); c0 <- err }()
	<-fsys.stalled
	// a's record goes to the file; a then waits for an fsync.
	before := fsysUsed(t, mem)
	a := make(chan error, 1)
	go func() { _, err := c.Upsert([]byte(`{"id":"a"}`)); a <- err }()
	for fsysUsed(t, mem) == before {
		runtime.Gosched() // until a's group is in the file
	}
	// b's batch meets a full disk.
	mem.SetCapacity(fsysUsed(t, mem) + 10)
	_, err = c.Upsert([]byte(`{"id":"b","pad":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}`))
	require.ErrorIs(t, err, syscall.ENOSPC)
	fsys.armed.Store(false)
	release()
	require.NoError(t, <-c0)
	require.NoError(t, <-a, "a's record was written whole before the disk filled")
	assert.Equal(t, []string{"a", "c0"}, ids(c))
	require.ErrorIs(t, c.Close(), syscall.ENOSPC)

	mem.SetCapacity(0)
	c, err = openMem(t, mem, clk, ttlstore.SyncAlways, 1<<30)
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, []string{"a", "c0"}, ids(c))
}
