package ttlstore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore/internal/vfs"
)

// The write pipeline (commit.go) is written for commits of many mutations,
// which the public API does not make yet (a transactional batch will):
// these tests make them directly, so that what the stages promise for N
// mutations holds before a caller relies on it.

// commitOf returns a commit of the given mutations on c: "+doc" is a put
// (Upsert), "!doc" a Create, "-id" a delete.
func commitOf(t *testing.T, c *Collection, ops ...string) *commit {
	t.Helper()
	cm := &commit{op: "batch", many: make([]mutation, len(ops))}
	for i, op := range ops {
		m := &cm.many[i]
		switch op[0] {
		case '+', '!':
			e, err := c.prepare("batch", []byte(op[1:]))
			require.NoError(t, err)
			m.kind, m.mode, m.e, m.w, m.id = put, mayExist, e, weigh(e), e.id()
			if op[0] == '!' {
				m.mode = mustNotExist
			}
		case '-':
			m.kind, m.id = del, op[1:]
		}
		m.op = "batch"
		m.s, m.h = c.shardFor(m.id)
	}
	return cm
}

// idsInShards returns n ids that land in n different shards of c.
func idsInShards(c *Collection, n int) []string {
	seen := map[*shard]bool{}
	var ids []string
	for i := 0; len(ids) < n; i++ {
		id := fmt.Sprintf("doc%d", i)
		if s, _ := c.shardFor(id); !seen[s] {
			seen[s] = true
			ids = append(ids, id)
		}
	}
	return ids
}

func TestCommitManyAllOrNothing(t *testing.T) {
	c, err := New(Options{Clock: clock.NewMock(), SweepInterval: ManualSweep})
	require.NoError(t, err)
	defer c.Close()
	ids := idsInShards(c, 4)
	_, err = c.Upsert([]byte(`{"id":"` + ids[3] + `","v":0}`))
	require.NoError(t, err)

	// The last mutation's condition fails (ids[3] exists): none of the
	// others is applied, though they come first.
	cm := commitOf(t, c, `+{"id":"`+ids[0]+`"}`, `+{"id":"`+ids[1]+`"}`, `!{"id":"`+ids[3]+`"}`)
	require.ErrorIs(t, c.run(cm), ErrConflict)
	for _, id := range ids[:2] {
		_, err := c.Read(id)
		require.ErrorIs(t, err, ErrNotFound, id)
	}

	// A delete of a missing id fails the commit too.
	cm = commitOf(t, c, `+{"id":"`+ids[0]+`"}`, `-`+ids[2])
	require.ErrorIs(t, c.run(cm), ErrNotFound)
	_, err = c.Read(ids[0])
	require.ErrorIs(t, err, ErrNotFound)

	// All conditions hold: all applied, in four shards, at one _ts.
	cm = commitOf(t, c, `+{"id":"`+ids[0]+`"}`, `+{"id":"`+ids[1]+`"}`, `+{"id":"`+ids[2]+`"}`, `-`+ids[3])
	require.NoError(t, c.run(cm))
	for _, id := range ids[:3] {
		_, err := c.Read(id)
		require.NoError(t, err, id)
	}
	_, err = c.Read(ids[3])
	require.ErrorIs(t, err, ErrNotFound)
	require.Equal(t, 3, c.Len())
	for _, m := range cm.many[:3] {
		require.Equal(t, cm.now, m.e.ts)
	}
	require.NoError(t, c.checkInvariants())

	// An id named twice: each mutation sees what the one before leaves.
	cm = commitOf(t, c, `+{"id":"`+ids[0]+`","v":1}`, `-`+ids[0], `!{"id":"`+ids[0]+`","v":2}`, `+{"id":"`+ids[0]+`","v":3}`, `-`+ids[1])
	require.NoError(t, c.run(cm))
	d, err := c.Read(ids[0])
	require.NoError(t, err)
	require.Contains(t, d.String(), `"v":3`)
	require.Equal(t, 2, c.Len())
	require.NoError(t, c.checkInvariants())
}

// Commits of several mutations over overlapping shards, from many
// goroutines at once, with single writes beside them: the stage that locks
// takes each shard once and in order, so none deadlocks.
func TestCommitManyConcurrent(t *testing.T) {
	c, err := New(Options{Clock: clock.NewMock(), SweepInterval: ManualSweep})
	require.NoError(t, err)
	defer c.Close()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range 300 {
				var ops []string
				for range 1 + rng.IntN(6) {
					k := rng.IntN(40) // ids may repeat in a commit
					ops = append(ops, fmt.Sprintf(`+{"id":"k%d","g":%d}`, k, g))
				}
				if err := c.run(commitOf(t, c, ops...)); err != nil {
					t.Error(err)
					return
				}
				if _, err := c.Upsert([]byte(fmt.Sprintf(`{"id":"k%d"}`, rng.IntN(40)))); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	require.NoError(t, c.checkInvariants())
}

// A durable commit of several mutations is one group in the log: after a
// crash that tears the log anywhere, a restart finds all of its documents
// or none of them, never some.
func TestCommitManyDurableAllOrNothing(t *testing.T) {
	for seed := range uint64(60) {
		fsys := vfs.NewMemFS()
		opts := Options{Clock: clock.NewMock(), SweepInterval: ManualSweep, Sync: SyncNever}
		c, err := open(fsys, "db", opts, 1<<30, false)
		require.NoError(t, err)
		ids := idsInShards(c, 5)
		var ops []string
		for i, id := range ids {
			ops = append(ops, fmt.Sprintf(`+{"id":%q,"pad":"%0*d"}`, id, 50*(i+1), 0))
		}
		require.NoError(t, c.run(commitOf(t, c, ops...)))
		rng := rand.New(rand.NewPCG(seed, 2))
		after := fsys.Crash(rng, true)
		c.Close() // fails: its MemFS is dead

		c, err = open(after, "db", opts, 1<<30, false)
		require.NoError(t, err)
		n := c.Len()
		require.True(t, n == 0 || n == len(ids), "seed %d: %d of %d documents after the crash", seed, n, len(ids))
		require.NoError(t, c.Close())
	}
}

// A commit the log refuses (a full disk) changes nothing, in memory or
// after a restart.
func TestCommitManyDurableFullDisk(t *testing.T) {
	fsys := vfs.NewMemFS()
	opts := Options{Clock: clock.NewMock(), SweepInterval: ManualSweep}
	c, err := open(fsys, "db", opts, 1<<30, false)
	require.NoError(t, err)
	ids := idsInShards(c, 3)
	names, err := fsys.List("db")
	require.NoError(t, err)
	used := 0
	for _, name := range names {
		b, err := fsys.ReadFile("db/" + name)
		require.NoError(t, err)
		used += len(b)
	}
	fsys.SetCapacity(int64(used) + 40) // room for part of the group only
	var ops []string
	for _, id := range ids {
		ops = append(ops, fmt.Sprintf(`+{"id":%q}`, id))
	}
	err = c.run(commitOf(t, c, ops...))
	require.ErrorIs(t, err, ErrIO)
	require.Equal(t, 0, c.Len())
	require.True(t, errors.Is(c.Close(), ErrIO))

	fsys.SetCapacity(0)
	c, err = open(fsys, "db", opts, 1<<30, false)
	require.NoError(t, err)
	defer c.Close()
	require.Equal(t, 0, c.Len())
}
