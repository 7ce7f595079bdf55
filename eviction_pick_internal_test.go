package ttlstore

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestColdestPickedVictimChanges drives, one step at a time, a write at the
// bound whose EvictColdest victim is in another shard, whose lock is taken:
// the victim, picked and so out of the policy's queues, waits in the
// write's room (room.pick) while the write lets go of its own lock. Whoever
// holds the victim's lock may meanwhile replace it (an Upsert, a Touch) or
// delete it. The policy must then know the new document, once, and not the
// picked one (replaced finds the old entry out of the queues and files the
// new one as new); the write, finding the picked entry no longer stored,
// ends the pick's count and evicts nothing for it, then picks again if it
// still needs room (here the new a, the only document). checkInvariants
// (in the cleanup) checks the queues against the tables, and that filing
// counts nothing.
func TestColdestPickedVictimChanges(t *testing.T) {
	for _, tc := range []struct {
		name string
		// change changes "a", whose shard s is locked, while it waits in
		// the write's room; nil leaves it.
		change func(t *testing.T, c *Collection, s *shard, h uint64)
		// evicted is what the write evicts (id and v): the document
		// stored as a when it looks, none once a is deleted.
		evicted []string
	}{
		{name: "unchanged", evicted: []string{"a v1"}},
		{name: "replaced", change: replacePicked, evicted: []string{"a v2"}},
		{name: "deleted", change: func(t *testing.T, c *Collection, s *shard, h uint64) {
			a := s.docs.get(h, "a")
			c.deleteLocked(s, h, a, a.expiry(c.def.Load()))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var evicted []string
			c, err := New(Options{
				DefaultTTL: TTL(100), Clock: clock.NewMock(), SweepInterval: ManualSweep,
				MaxDocuments: 1, Eviction: EvictColdest,
				OnEvict: func(d Document) {
					var v struct {
						ID string
						V  int
					}
					assert.NoError(t, d.Decode(&v))
					evicted = append(evicted, fmt.Sprintf("%s v%d", v.ID, v.V))
				},
			})
			require.NoError(t, err)
			t.Cleanup(func() {
				assert.NoError(t, c.checkInvariants())
				c.Close()
			})
			_, err = c.Create([]byte(`{"id":"a","v":1}`))
			require.NoError(t, err)
			sa, ha := c.shardFor("a")
			id := "b"
			for i := 0; ; i++ {
				if s, _ := c.shardFor(id); s != sa {
					break
				}
				id = fmt.Sprint("b", i)
			}

			sa.mu.Lock()
			filed := c.lim.filed.Load()
			done := make(chan error)
			go func() {
				_, err := c.Create(fmt.Appendf(nil, `{"id":%q}`, id))
				done <- err
			}()
			// The write ends its first attempt (stopFiling) once it has
			// picked a and found its shard locked; it then waits for the
			// lock, to evict a.
			for c.lim.filed.Load() == filed {
				runtime.Gosched()
			}
			c.lim.cold.mu.Lock()
			assert.Equal(t, segNone, sa.docs.get(ha, "a").seg, "a is picked: out of the queues")
			assert.Zero(t, c.lim.cold.len())
			c.lim.cold.mu.Unlock()
			assert.Equal(t, int64(1), c.lim.filing.Load(), "the pick counts in filing while it waits")
			if tc.change != nil {
				tc.change(t, c, sa, ha)
			}
			sa.mu.Unlock()
			require.NoError(t, <-done)

			assert.Equal(t, tc.evicted, evicted)
			_, err = c.Read(id)
			assert.NoError(t, err, "the write is stored")
			_, err = c.Read("a")
			assert.ErrorIs(t, err, ErrNotFound)
			assert.Equal(t, 1, c.Len())
		})
	}
}

// replacePicked replaces "a", filed in s under h, with {"id":"a","v":2},
// as a write holding s's lock does (see write): the picked entry is no
// longer the stored one.
func replacePicked(t *testing.T, c *Collection, s *shard, h uint64) {
	e, err := c.prepare("upsert", []byte(`{"id":"a","v":2}`))
	require.NoError(t, err)
	ref := s.docs.lookup(h, "a")
	old := ref.Load()
	def := c.def.Load()
	e.ts = c.now()
	e.etag = s.nextEtag()
	c.lim.bytes.Add(weigh(e) - weigh(old))
	c.storeLocked(s, h, e, expiryAt(e.ts, effectiveTTL(def, e.ttl)), ref, old.expiry(def))
}
