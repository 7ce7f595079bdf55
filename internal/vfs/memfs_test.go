package vfs_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore/internal/vfs"
)

// tree returns every file and directory under dir in m, as path (without a
// leading "/") -> current contents; directories end in "/" and map to "".
func tree(t *testing.T, m *vfs.MemFS, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(dir string)
	walk = func(dir string) {
		names, err := m.List(dir)
		require.NoError(t, err)
		for _, n := range names {
			p := path.Join(dir, n)
			key := strings.TrimPrefix(p, "/")
			b, err := m.ReadFile(p)
			if errors.Is(err, syscall.EISDIR) {
				out[key+"/"] = ""
				walk(p)
				continue
			}
			require.NoError(t, err)
			out[key] = string(b)
		}
	}
	walk(dir)
	return out
}

// create makes name in m with data, synced or not; the directory entry is
// never synced here.
func create(t *testing.T, m *vfs.MemFS, name, data string, sync bool) vfs.File {
	t.Helper()
	f, err := m.Create(name)
	require.NoError(t, err)
	write(t, f, data)
	if sync {
		require.NoError(t, f.Sync())
	}
	return f
}

func TestMemFSCrash(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, m *vfs.MemFS)
		want  map[string]string
	}{
		{"synced data and entry survive, the rest does not", func(t *testing.T, m *vfs.MemFS) {
			f := create(t, m, "d/log", "abc", true)
			require.NoError(t, m.SyncDir("d"))
			write(t, f, "def")
		}, map[string]string{"d/log": "abc"}},
		{"a synced file whose entry was not synced is gone", func(t *testing.T, m *vfs.MemFS) {
			create(t, m, "d/log", "abc", true)
		}, map[string]string{}},
		{"a synced entry to a file never synced is empty", func(t *testing.T, m *vfs.MemFS) {
			f := create(t, m, "d/log", "", false)
			require.NoError(t, m.SyncDir("d"))
			write(t, f, "xyz")
		}, map[string]string{"d/log": ""}},
		{"a rename without SyncDir is undone", func(t *testing.T, m *vfs.MemFS) {
			create(t, m, "d/snap.tmp", "new", true)
			require.NoError(t, m.SyncDir("d"))
			require.NoError(t, m.Rename("d/snap.tmp", "d/snap"))
		}, map[string]string{"d/snap.tmp": "new"}},
		{"a replacing rename without SyncDir keeps the old file", func(t *testing.T, m *vfs.MemFS) {
			create(t, m, "d/snap", "old", true)
			create(t, m, "d/snap.tmp", "new", true)
			require.NoError(t, m.SyncDir("d"))
			require.NoError(t, m.Rename("d/snap.tmp", "d/snap"))
		}, map[string]string{"d/snap": "old", "d/snap.tmp": "new"}},
		{"a replacing rename with SyncDir is durable", func(t *testing.T, m *vfs.MemFS) {
			create(t, m, "d/snap", "old", true)
			create(t, m, "d/snap.tmp", "new", true)
			require.NoError(t, m.SyncDir("d"))
			require.NoError(t, m.Rename("d/snap.tmp", "d/snap"))
			require.NoError(t, m.SyncDir("d"))
		}, map[string]string{"d/snap": "new"}},
		{"a rename across directories synced at the target only is in both", func(t *testing.T, m *vfs.MemFS) {
			require.NoError(t, m.MkdirAll("e"))
			create(t, m, "d/x", "x", true)
			require.NoError(t, m.SyncDir("d"))
			require.NoError(t, m.Rename("d/x", "e/x"))
			require.NoError(t, m.SyncDir("e"))
		}, map[string]string{"d/x": "x", "e/": "", "e/x": "x"}},
		{"a remove without SyncDir is undone", func(t *testing.T, m *vfs.MemFS) {
			create(t, m, "d/log", "abc", true)
			require.NoError(t, m.SyncDir("d"))
			require.NoError(t, m.Remove("d/log"))
		}, map[string]string{"d/log": "abc"}},
		{"a remove with SyncDir is durable", func(t *testing.T, m *vfs.MemFS) {
			create(t, m, "d/log", "abc", true)
			require.NoError(t, m.SyncDir("d"))
			require.NoError(t, m.Remove("d/log"))
			require.NoError(t, m.SyncDir("d"))
		}, map[string]string{}},
		{"bytes written back but not synced are lost", func(t *testing.T, m *vfs.MemFS) {
			f := create(t, m, "d/snap", "abc", true)
			require.NoError(t, m.SyncDir("d"))
			write(t, f, "def")
			require.NoError(t, f.WriteBack(0, 6))
		}, map[string]string{"d/snap": "abc"}},
		{"an unsynced truncate is undone", func(t *testing.T, m *vfs.MemFS) {
			f := create(t, m, "d/log", "abcdef", true)
			require.NoError(t, m.SyncDir("d"))
			require.NoError(t, f.Truncate(2))
			write(t, f, "XY")
		}, map[string]string{"d/log": "abcdef"}},
		{"a synced truncate is durable", func(t *testing.T, m *vfs.MemFS) {
			f := create(t, m, "d/log", "abcdef", true)
			require.NoError(t, m.SyncDir("d"))
			require.NoError(t, f.Truncate(2))
			write(t, f, "XY")
			require.NoError(t, f.Sync())
		}, map[string]string{"d/log": "abXY"}},
		{"an unsynced Create over a synced file is undone", func(t *testing.T, m *vfs.MemFS) {
			create(t, m, "d/log", "old", true)
			require.NoError(t, m.SyncDir("d"))
			create(t, m, "d/log", "new", false)
		}, map[string]string{"d/log": "old"}},
		{"MkdirAll is durable at once", func(t *testing.T, m *vfs.MemFS) {
			require.NoError(t, m.MkdirAll("d/e/f"))
			require.NoError(t, m.MkdirAll("g"))
		}, map[string]string{"d/e/": "", "d/e/f/": "", "g/": ""}},
		{"a removed directory comes back", func(t *testing.T, m *vfs.MemFS) {
			require.NoError(t, m.MkdirAll("g"))
			require.NoError(t, m.Remove("g"))
		}, map[string]string{"g/": ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := vfs.NewMemFS()
			require.NoError(t, m.MkdirAll("d"))
			c.setup(t, m)
			after := m.Crash(nil, false)
			want := map[string]string{"d/": ""}
			for k, v := range c.want {
				want[k] = v
			}
			assert.Equal(t, want, tree(t, after, "/"))
			// The new state is its own synced state: a second crash
			// changes nothing.
			assert.Equal(t, want, tree(t, after.Crash(nil, false), "/"))
		})
	}
}

// tornSetup makes a MemFS with a log whose synced bytes are base, followed
// by the unsynced tail, and a file cut since its Sync.
func tornSetup(t *testing.T, base, tail []byte) *vfs.MemFS {
	t.Helper()
	m := vfs.NewMemFS()
	require.NoError(t, m.MkdirAll("d"))
	f := create(t, m, "d/log", string(base), true)
	cut := create(t, m, "d/cut", "0123456789", true)
	require.NoError(t, m.SyncDir("d"))
	write(t, f, string(tail[:10]))
	write(t, f, string(tail[10:]))
	require.NoError(t, cut.Truncate(4))
	write(t, cut, "abcdefghijklmnop")
	return m
}

func TestMemFSCrashTear(t *testing.T) {
	base := []byte("synced-")
	tail := make([]byte, 64)
	for i := range tail {
		tail[i] = byte(i + 1) // never zero, so zeros mark the zero-filled part
	}
	var none, all, partial, zeroed int
	for seed := range uint64(2000) {
		after := tornSetup(t, base, tail).Crash(rand.New(rand.NewPCG(seed, 0)), true)
		got, err := after.ReadFile("d/log")
		require.NoError(t, err)
		cut, err := after.ReadFile("d/cut")
		require.NoError(t, err)
		require.Equal(t, "0123456789", string(cut), "seed %d: a cut file is not torn", seed)

		require.True(t, bytes.HasPrefix(got, base), "seed %d: %q", seed, got)
		kept := got[len(base):]
		require.LessOrEqual(t, len(kept), len(tail), "seed %d", seed)
		// kept is a prefix of tail, possibly with a zero suffix.
		z := 0
		for z < len(kept) && kept[z] == tail[z] {
			z++
		}
		require.Equal(t, make([]byte, len(kept)-z), kept[z:], "seed %d: after the kept prefix only zeros: %v", seed, kept)
		switch {
		case len(kept) == 0:
			none++
		case z < len(kept):
			zeroed++
		case len(kept) == len(tail):
			all++
		default:
			partial++
		}

		again := tornSetup(t, base, tail).Crash(rand.New(rand.NewPCG(seed, 0)), true)
		gotAgain, err := again.ReadFile("d/log")
		require.NoError(t, err)
		require.Equal(t, got, gotAgain, "seed %d: one seed, one outcome", seed)
	}
	t.Logf("none %d, all %d, partial %d, zero-filled %d", none, all, partial, zeroed)
	assert.Positive(t, none, "some crashes keep none of the tail")
	assert.Positive(t, all, "some keep all of it")
	assert.Positive(t, partial, "some keep part of it")
	assert.Positive(t, zeroed, "some end in zeros")

	for _, c := range []struct {
		name string
		rng  *rand.Rand
		tear bool
	}{
		{"tear false", rand.New(rand.NewPCG(1, 2)), false},
		{"nil rng", nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := tornSetup(t, base, tail).Crash(c.rng, c.tear).ReadFile("d/log")
			require.NoError(t, err)
			assert.Equal(t, base, got)
		})
	}
}

func TestMemFSKill(t *testing.T) {
	m := vfs.NewMemFS()
	require.NoError(t, m.MkdirAll("d"))
	f := create(t, m, "d/log", "synced", true)
	require.NoError(t, m.SyncDir("d"))
	write(t, f, "+unsynced")
	create(t, m, "d/new", "unsynced entry", false)
	l, err := m.Lock("d/LOCK")
	require.NoError(t, err)

	killed := m.Kill()
	assert.Equal(t, map[string]string{
		"d/":     "",
		"d/log":  "synced+unsynced",
		"d/new":  "unsynced entry",
		"d/LOCK": "",
	}, tree(t, killed, "/"), "a kill keeps what was written")
	_, err = f.Write([]byte("x"))
	assert.ErrorIs(t, err, vfs.ErrCrashed, "the old MemFS is dead")
	assert.ErrorIs(t, l.Close(), vfs.ErrCrashed)
	l2, err := killed.Lock("d/LOCK")
	require.NoError(t, err, "a kill releases locks")
	require.NoError(t, l2.Close())

	// The synced state went through the kill: power loss now still loses
	// what was never synced.
	assert.Equal(t, map[string]string{"d/": "", "d/log": "synced"}, tree(t, killed.Crash(nil, false), "/"))
}

func TestMemFSDead(t *testing.T) {
	for _, end := range []struct {
		name string
		end  func(m *vfs.MemFS) *vfs.MemFS
	}{
		{"Crash", func(m *vfs.MemFS) *vfs.MemFS { return m.Crash(nil, false) }},
		{"Kill", (*vfs.MemFS).Kill},
	} {
		t.Run(end.name, func(t *testing.T) {
			m := vfs.NewMemFS()
			require.NoError(t, m.MkdirAll("d"))
			f := create(t, m, "d/log", "abc", true)
			l, err := m.Lock("d/LOCK")
			require.NoError(t, err)
			require.NoError(t, m.SyncDir("d"))
			after := end.end(m)

			calls := map[string]func() error{
				"Create":     func() error { _, err := m.Create("d/x"); return err },
				"Open":       func() error { _, err := m.Open("d/log"); return err },
				"OpenAppend": func() error { _, err := m.OpenAppend("d/log"); return err },
				"Rename":     func() error { return m.Rename("d/log", "d/y") },
				"Remove":     func() error { return m.Remove("d/log") },
				"MkdirAll":   func() error { return m.MkdirAll("e") },
				"List":       func() error { _, err := m.List("d"); return err },
				"SyncDir":    func() error { return m.SyncDir("d") },
				"Lock":       func() error { _, err := m.Lock("d/L2"); return err },
				"ReadFile":   func() error { _, err := m.ReadFile("d/log"); return err },
				"Corrupt":    func() error { return m.Corrupt("d/log", 0, 1) },
				"Read":       func() error { _, err := f.Read(make([]byte, 1)); return err },
				"ReadAt":     func() error { _, err := f.ReadAt(make([]byte, 1), 0); return err },
				"Write":      func() error { _, err := f.Write([]byte("x")); return err },
				"Sync":       f.Sync,
				"Truncate":   func() error { return f.Truncate(0) },
				"Size":       func() error { _, err := f.Size(); return err },
				"File.Close": f.Close,
				"Lock.Close": l.Close,
			}
			for name, call := range calls {
				assert.ErrorIs(t, call(), vfs.ErrCrashed, name)
			}
			assert.Zero(t, after.Ops(), "the old process did not reach the new MemFS")
			assert.Equal(t, map[string]string{"d/": "", "d/log": "abc", "d/LOCK": ""}, tree(t, after, "/"))
			assert.Panics(t, func() { m.Crash(nil, false) }, "Crash of a dead MemFS")
			assert.Panics(t, func() { m.Kill() }, "Kill of a dead MemFS")
		})
	}
}

// TestMemFSDeadProcess crashes a MemFS while goroutines write to it: they
// all end with ErrCrashed, without panicking or reaching the new MemFS.
func TestMemFSDeadProcess(t *testing.T) {
	m := vfs.NewMemFS()
	require.NoError(t, m.MkdirAll("d"))
	const writers = 4
	var started, done sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		started.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			name := path.Join("d", string(rune('a'+w)))
			f, err := m.Create(name)
			if err == nil {
				_, err = f.Write([]byte("first"))
			}
			started.Done()
			for err == nil {
				if _, err = f.Write([]byte("more")); err == nil {
					if err = f.Sync(); err == nil {
						err = m.SyncDir("d")
					}
				}
			}
			errs[w] = err
		}()
	}
	started.Wait()
	after := m.Crash(nil, false)
	done.Wait()
	for w, err := range errs {
		assert.ErrorIs(t, err, vfs.ErrCrashed, "writer %d", w)
	}
	assert.Zero(t, after.Ops(), "no writer reached the new MemFS")
	for name, data := range tree(t, after, "d") {
		// What survived was synced: "first" and whole "more"s, or nothing
		// if another writer's SyncDir synced the entry first.
		if data != "" {
			assert.Equal(t, "first"+strings.Repeat("more", (len(data)-5)/4), data, name)
		}
	}
}

func TestMemFSHook(t *testing.T) {
	type env struct {
		m *vfs.MemFS
		f vfs.File // d/log, "abc" synced, entry synced, open for append
	}
	cases := []struct {
		op   vfs.Op
		name string // the name the hook must see
		call func(t *testing.T, e env) error
		// check runs with the hook removed and checks the call had no
		// effect.
		check func(t *testing.T, e env)
	}{
		{vfs.OpCreate, "d/new", func(t *testing.T, e env) error { _, err := e.m.Create("d/new"); return err }, func(t *testing.T, e env) {
			_, err := e.m.ReadFile("d/new")
			assert.ErrorIs(t, err, fs.ErrNotExist)
		}},
		{vfs.OpCreate, "d/log", func(t *testing.T, e env) error { _, err := e.m.Create("d/log"); return err }, func(t *testing.T, e env) {
			got, err := e.m.ReadFile("d/log")
			require.NoError(t, err)
			assert.Equal(t, "abc", string(got), "not truncated")
		}},
		{vfs.OpOpen, "d/log", func(t *testing.T, e env) error { _, err := e.m.Open("d/log"); return err }, nil},
		{vfs.OpOpenAppend, "d/log", func(t *testing.T, e env) error { _, err := e.m.OpenAppend("d/log"); return err }, nil},
		{vfs.OpRead, "d/log", func(t *testing.T, e env) error { _, err := e.f.Read(make([]byte, 3)); return err }, func(t *testing.T, e env) {
			buf := make([]byte, 3)
			n, err := e.f.Read(buf)
			require.NoError(t, err)
			assert.Equal(t, "abc", string(buf[:n]), "the offset did not move")
		}},
		{vfs.OpRead, "d/log", func(t *testing.T, e env) error { _, err := e.f.ReadAt(make([]byte, 3), 0); return err }, nil},
		{vfs.OpWrite, "d/log", func(t *testing.T, e env) error {
			n, err := e.f.Write([]byte("defghi"))
			if n != 3 {
				return errors.New("not a short write of half")
			}
			return err
		}, func(t *testing.T, e env) {
			got, err := e.m.ReadFile("d/log")
			require.NoError(t, err)
			assert.Equal(t, "abcdef", string(got), "half was written")
		}},
		{vfs.OpSync, "d/log", func(t *testing.T, e env) error {
			write(t, e.f, "def")
			return e.f.Sync()
		}, func(t *testing.T, e env) {
			got, err := e.m.Crash(nil, false).ReadFile("d/log")
			require.NoError(t, err)
			assert.Equal(t, "abc", string(got), "synced bytes unchanged")
		}},
		{vfs.OpWriteBack, "d/log", func(t *testing.T, e env) error {
			write(t, e.f, "def")
			return e.f.WriteBack(0, 6)
		}, func(t *testing.T, e env) {
			got, err := e.m.Crash(nil, false).ReadFile("d/log")
			require.NoError(t, err)
			assert.Equal(t, "abc", string(got), "synced bytes unchanged")
		}},
		{vfs.OpTruncate, "d/log", func(t *testing.T, e env) error { return e.f.Truncate(1) }, func(t *testing.T, e env) {
			size, err := e.f.Size()
			require.NoError(t, err)
			assert.Equal(t, int64(3), size)
		}},
		{vfs.OpSize, "d/log", func(t *testing.T, e env) error { _, err := e.f.Size(); return err }, nil},
		{vfs.OpClose, "d/log", func(t *testing.T, e env) error { return e.f.Close() }, func(t *testing.T, e env) {
			write(t, e.f, "def") // still open
			require.NoError(t, e.f.Close())
		}},
		{vfs.OpRename, "d/log", func(t *testing.T, e env) error { return e.m.Rename("d/log", "d/moved") }, func(t *testing.T, e env) {
			assert.Equal(t, map[string]string{"d/log": "abc"}, tree(t, e.m, "d"))
		}},
		{vfs.OpRemove, "d/log", func(t *testing.T, e env) error { return e.m.Remove("d/log") }, func(t *testing.T, e env) {
			assert.Equal(t, map[string]string{"d/log": "abc"}, tree(t, e.m, "d"))
		}},
		{vfs.OpMkdirAll, "d/e/f", func(t *testing.T, e env) error { return e.m.MkdirAll("d/e/f") }, func(t *testing.T, e env) {
			assert.Equal(t, map[string]string{"d/log": "abc"}, tree(t, e.m, "d"))
		}},
		{vfs.OpList, "d", func(t *testing.T, e env) error { _, err := e.m.List("d"); return err }, nil},
		{vfs.OpSyncDir, "d", func(t *testing.T, e env) error {
			create(t, e.m, "d/new", "", false)
			return e.m.SyncDir("d")
		}, func(t *testing.T, e env) {
			assert.Equal(t, map[string]string{"d/log": "abc"}, tree(t, e.m.Crash(nil, false), "d"), "the entry is not synced")
		}},
		{vfs.OpLock, "d/LOCK", func(t *testing.T, e env) error { _, err := e.m.Lock("d/LOCK"); return err }, func(t *testing.T, e env) {
			assert.Equal(t, map[string]string{"d/log": "abc"}, tree(t, e.m, "d"), "no lock file")
			l, err := e.m.Lock("d/LOCK")
			require.NoError(t, err, "not held")
			require.NoError(t, l.Close())
		}},
	}
	for _, c := range cases {
		t.Run(c.op.String()+" "+c.name, func(t *testing.T) {
			m := vfs.NewMemFS()
			require.NoError(t, m.MkdirAll("d"))
			f := create(t, m, "d/log", "abc", true)
			require.NoError(t, f.Close())
			require.NoError(t, m.SyncDir("d"))
			f, err := m.OpenAppend("d/log")
			require.NoError(t, err)
			e := env{m: m, f: f}

			var seen []string
			m.SetHook(func(op vfs.Op, name string) error {
				if op == c.op {
					seen = append(seen, name)
					return vfs.ErrInjected
				}
				return nil
			})
			err = c.call(t, e)
			m.SetHook(nil)
			assert.ErrorIs(t, err, vfs.ErrInjected)
			var pe *fs.PathError
			var le *os.LinkError
			assert.True(t, errors.As(err, &pe) || errors.As(err, &le), "the error names the path: %v", err)
			assert.Contains(t, err.Error(), c.name)
			assert.Equal(t, []string{c.name}, seen)
			if c.check != nil {
				c.check(t, e)
			}
		})
	}
}

func TestMemFSHookCustomError(t *testing.T) {
	m := vfs.NewMemFS()
	errDisk := errors.New("disk on fire")
	m.SetHook(func(vfs.Op, string) error { return errDisk })
	err := m.MkdirAll("d")
	assert.ErrorIs(t, err, errDisk)
	assert.NotErrorIs(t, err, vfs.ErrInjected)
}

// workload is what a durable store does to publish a snapshot, stopping at
// the first error.
func workload(fsys vfs.FS) error {
	if err := fsys.MkdirAll("db"); err != nil {
		return err
	}
	l, err := fsys.Lock("db/LOCK")
	if err != nil {
		return err
	}
	f, err := fsys.Create("db/snap.tmp")
	if err != nil {
		return err
	}
	if _, err := f.Write([]byte("snapshot")); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := fsys.Rename("db/snap.tmp", "db/snap"); err != nil {
		return err
	}
	if err := fsys.SyncDir("db"); err != nil {
		return err
	}
	r, err := fsys.Open("db/snap")
	if err != nil {
		return err
	}
	if _, err := io.ReadAll(r); err != nil {
		return err
	}
	if err := r.Close(); err != nil {
		return err
	}
	return l.Close()
}

// TestMemFSFailNth fails each operation of a workload in turn.
func TestMemFSFailNth(t *testing.T) {
	m := vfs.NewMemFS()
	require.NoError(t, workload(m))
	n := m.Ops()
	// MkdirAll, Lock, Create, Write, Sync, Close, Rename, SyncDir, Open,
	// two Reads (the second sees EOF), Close; unlocking is not counted.
	require.Equal(t, int64(12), n)

	for k := int64(1); k <= n; k++ {
		m := vfs.NewMemFS()
		m.SetHook(vfs.FailNth(k, nil))
		err := workload(m)
		assert.ErrorIs(t, err, vfs.ErrInjected, "k=%d", k)
		assert.Equal(t, k, m.Ops(), "k=%d: the workload stopped at the failed operation", k)
	}
	for _, k := range []int64{0, -1, n + 1} {
		m := vfs.NewMemFS()
		m.SetHook(vfs.FailNth(k, nil))
		assert.NoError(t, workload(m), "k=%d fails nothing", k)
	}
	errDisk := errors.New("disk on fire")
	m = vfs.NewMemFS()
	m.SetHook(vfs.FailNth(1, errDisk))
	assert.ErrorIs(t, workload(m), errDisk)
}

func TestMemFSOps(t *testing.T) {
	m := vfs.NewMemFS()
	assert.Zero(t, m.Ops())
	steps := []struct {
		name string
		do   func() error
		want int64
	}{
		{"MkdirAll", func() error { return m.MkdirAll("d") }, 1},
		{"Create", func() error { _, err := m.Create("d/f"); return err }, 2},
		{"a failing Open still counts", func() error {
			_, err := m.Open("d/missing")
			if !errors.Is(err, fs.ErrNotExist) {
				return errors.New("Open of a missing file did not fail")
			}
			return nil
		}, 3},
		{"ReadFile does not count", func() error { _, err := m.ReadFile("d/f"); return err }, 3},
		{"Corrupt does not count", func() error {
			if err := m.Corrupt("d/f", 0, 1); !errors.Is(err, fs.ErrInvalid) {
				return errors.New("Corrupt past the end did not fail")
			}
			return nil
		}, 3},
	}
	for _, s := range steps {
		require.NoError(t, s.do(), s.name)
		assert.Equal(t, s.want, m.Ops(), s.name)
	}
}

func TestMemFSCapacity(t *testing.T) {
	m := vfs.NewMemFS()
	require.NoError(t, m.MkdirAll("d"))
	m.SetCapacity(10)
	f := create(t, m, "d/a", "123456", false)

	n, err := f.Write([]byte("789abc"))
	assert.Equal(t, 4, n, "what fits is written")
	assert.ErrorIs(t, err, syscall.ENOSPC)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "d/a", pe.Path)
	got, err := m.ReadFile("d/a")
	require.NoError(t, err)
	assert.Equal(t, "123456789a", string(got))

	g := create(t, m, "d/b", "", false)
	n, err = g.Write([]byte("x"))
	assert.Equal(t, 0, n, "the capacity is for all files")
	assert.ErrorIs(t, err, syscall.ENOSPC)

	require.NoError(t, f.Truncate(5))
	write(t, g, "xyz")
	assert.ErrorIs(t, f.Truncate(9), syscall.ENOSPC, "extending counts")
	size, err := f.Size()
	require.NoError(t, err)
	assert.Equal(t, int64(5), size, "a failed extension changes nothing")

	require.NoError(t, m.Remove("d/b"))
	_, err = m.Create("d/a") // truncates: frees its 5 bytes
	require.NoError(t, err)
	write(t, f, "0123456789")

	// A failed write that is also short on space writes what fits.
	require.NoError(t, f.Truncate(8))
	m.SetHook(vfs.FailNth(1, nil))
	n, err = f.Write([]byte("abcdef")) // half is 3, room is 2
	assert.Equal(t, 2, n)
	assert.ErrorIs(t, err, vfs.ErrInjected)
	m.SetHook(nil)

	m.SetCapacity(0)
	write(t, f, string(make([]byte, 1000)))

	m.SetCapacity(5)
	crashed := m.Crash(nil, false) // nothing was synced: d is empty
	h := create(t, crashed, "d/c", "", false)
	n, err = h.Write([]byte("abcdef"))
	assert.Equal(t, 5, n, "the capacity survives a crash")
	assert.ErrorIs(t, err, syscall.ENOSPC)
}

func TestMemFSCorrupt(t *testing.T) {
	m := vfs.NewMemFS()
	require.NoError(t, m.MkdirAll("d"))
	f := create(t, m, "d/log", "abc", true)
	require.NoError(t, m.SyncDir("d"))
	write(t, f, "def")
	require.NoError(t, m.Corrupt("d/log", 1, 0x20)) // synced: 'b' -> 'B'
	require.NoError(t, m.Corrupt("d/log", 4, 0x20)) // unsynced: 'e' -> 'E'
	got, err := m.ReadFile("d/log")
	require.NoError(t, err)
	assert.Equal(t, "aBcdEf", string(got))
	assert.ErrorIs(t, m.Corrupt("d/log", 6, 1), fs.ErrInvalid)
	assert.ErrorIs(t, m.Corrupt("d/log", -1, 1), fs.ErrInvalid)
	assert.ErrorIs(t, m.Corrupt("d/missing", 0, 1), fs.ErrNotExist)

	got, err = m.Crash(nil, false).ReadFile("d/log")
	require.NoError(t, err)
	assert.Equal(t, "aBc", string(got), "damage to synced bytes survives a crash")
}

func TestMemFSNames(t *testing.T) {
	m := vfs.NewMemFS()
	require.NoError(t, m.MkdirAll("/a/b"))
	create(t, m, "a/b/f", "x", false)
	for _, name := range []string{"a/b/f", "/a/b/f", "./a//b/f", "a/b/../b/f", "../../a/b/f"} {
		got, err := m.ReadFile(name)
		require.NoError(t, err, name)
		assert.Equal(t, "x", string(got), name)
	}
	_, err := m.Create("a/b/f/g")
	assert.ErrorIs(t, err, syscall.ENOTDIR)
	_, err = m.Open("a/b")
	assert.ErrorIs(t, err, syscall.EISDIR)
	_, err = m.Create("a")
	assert.ErrorIs(t, err, syscall.EISDIR)
	_, err = m.List("a/b/f")
	assert.ErrorIs(t, err, syscall.ENOTDIR)
	names, err := m.List("/")
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, names)
}

func TestMemFSRenameDirectory(t *testing.T) {
	m := vfs.NewMemFS()
	require.NoError(t, m.MkdirAll("a/b"))
	create(t, m, "a/b/f", "x", false)
	assert.ErrorIs(t, m.Rename("a", "a/b/c"), syscall.EINVAL, "into itself")
	require.NoError(t, m.Rename("a/b", "c"))
	assert.Equal(t, map[string]string{"a/": "", "c/": "", "c/f": "x"}, tree(t, m, "/"))
	require.NoError(t, m.Rename("c/f", "c/f"), "to itself")
	create(t, m, "g", "", false)
	assert.ErrorIs(t, m.Rename("c", "g"), syscall.ENOTDIR)
}

// TestMemFSOpenFiles checks that an open file follows its inode, not its
// name, as a file descriptor does.
func TestMemFSOpenFiles(t *testing.T) {
	m := vfs.NewMemFS()
	require.NoError(t, m.MkdirAll("d"))
	f := create(t, m, "d/a", "one", false)
	require.NoError(t, m.Rename("d/a", "d/b"))
	write(t, f, "+two")
	got, err := m.ReadFile("d/b")
	require.NoError(t, err)
	assert.Equal(t, "one+two", string(got), "a write after a rename lands in the renamed file")

	r, err := m.Open("d/b")
	require.NoError(t, err)
	_, err = m.Create("d/b") // the same inode, cut
	require.NoError(t, err)
	n, err := r.ReadAt(make([]byte, 1), 0)
	assert.Equal(t, 0, n)
	assert.ErrorIs(t, err, io.EOF, "an open file sees the cut")

	require.NoError(t, m.Remove("d/b"))
	write(t, f, "orphan")
	size, err := f.Size()
	require.NoError(t, err)
	assert.Equal(t, int64(6), size, "a removed file stays usable while open")
	names, err := m.List("d")
	require.NoError(t, err)
	assert.Empty(t, names)
}

func TestOpString(t *testing.T) {
	want := map[vfs.Op]string{
		vfs.OpCreate: "create", vfs.OpOpen: "open", vfs.OpOpenAppend: "openappend",
		vfs.OpRead: "read", vfs.OpWrite: "write", vfs.OpSync: "sync",
		vfs.OpTruncate: "truncate", vfs.OpSize: "size", vfs.OpClose: "close",
		vfs.OpRename: "rename", vfs.OpRemove: "remove", vfs.OpMkdirAll: "mkdirall",
		vfs.OpList: "list", vfs.OpSyncDir: "syncdir", vfs.OpLock: "lock",
		vfs.OpWriteBack: "writeback", vfs.OpAllocate: "allocate",
		vfs.Op(200): "Op(200)",
	}
	for op, s := range want {
		assert.Equal(t, s, op.String())
	}
}
