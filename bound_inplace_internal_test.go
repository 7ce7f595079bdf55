package ttlstore

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inPlaceCollection returns a collection on a mock clock with the given
// bound and policy, recording in log each document reported to OnEvict or
// OnExpire and whether the write being made (written, when set) was
// readable then.
func inPlaceCollection(t *testing.T, policy EvictionPolicy, maxDocs int, maxBytes int64, log *[]string, written *string) *Collection {
	t.Helper()
	var c *Collection
	report := func(what string) func(Document) {
		return func(d Document) {
			stored := "unset"
			if *written != "" {
				_, err := c.Read(*written)
				stored = fmt.Sprint(err == nil)
			}
			*log = append(*log, what+" "+d.ID()+", written stored: "+stored)
		}
	}
	c, err := New(Options{
		DefaultTTL: TTL(100), Clock: clock.NewMock(), SweepInterval: ManualSweep,
		MaxDocuments: maxDocs, MaxBytes: maxBytes, Eviction: policy,
		OnEvict: report("evict"), OnExpire: report("expire"),
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		assert.NoError(t, c.checkInvariants())
		assert.Zero(t, c.lim.filing.Load(), "writes, room or victims still counted in filing")
		c.Close()
	})
	return c
}

// TestMakeRoomInPlace checks writes at the bound that make room without
// letting go of their shard's lock: the victim is in the writer's shard,
// or in another whose lock is free, or it takes two victims. Each is
// reported once the write is stored.
func TestMakeRoomInPlace(t *testing.T) {
	for _, policy := range []EvictionPolicy{EvictColdest, EvictSoonestExpiry} {
		t.Run("same shard/"+policy.String(), func(t *testing.T) {
			var log []string
			var written string
			c := inPlaceCollection(t, policy, 1, 0, &log, &written)
			_, ids := sameShardIDs(c, 2)
			_, err := c.Create(fmt.Appendf(nil, `{"id":%q}`, ids[0]))
			require.NoError(t, err)
			written = ids[1]
			_, err = c.Create(fmt.Appendf(nil, `{"id":%q}`, ids[1]))
			require.NoError(t, err)
			assert.Equal(t, []string{"evict " + ids[0] + ", written stored: true"}, log)
			assert.Equal(t, uint64(1), c.Stats().Evicted)
		})
		t.Run("two victims/"+policy.String(), func(t *testing.T) {
			var log []string
			var written string
			c := inPlaceCollection(t, policy, 0, 0, &log, &written)
			a, err := c.Create([]byte(`{"id":"a"}`))
			require.NoError(t, err)
			b, err := c.Create([]byte(`{"id":"b"}`))
			require.NoError(t, err)
			require.NoError(t, c.SetLimits(0, a.Weight()+b.Weight()))
			written = "heavy"
			heavy := `{"id":"heavy","p":"` + strings.Repeat("x", 30) + `"}`
			d, err := c.Create([]byte(heavy))
			require.NoError(t, err)
			require.Greater(t, d.Weight(), max(a.Weight(), b.Weight()), "heavy needs both a's room and b's")
			assert.ElementsMatch(t, []string{"evict a, written stored: true", "evict b, written stored: true"}, log)
			assert.Equal(t, uint64(2), c.Stats().Evicted)
		})
	}
}

// TestMakeRoomVictimLocked checks a write at the bound whose victim is in
// another shard, whose lock is taken: it must not wait for it while it
// holds its own, so it lets go of its own, evicts the victim once the lock
// is free, and then is stored. The eviction is reported at the write's
// end, once it is stored, as every eviction is (issue 23).
func TestMakeRoomVictimLocked(t *testing.T) {
	for _, policy := range []EvictionPolicy{EvictColdest, EvictSoonestExpiry} {
		t.Run(policy.String(), func(t *testing.T) {
			var log []string
			var written string
			c := inPlaceCollection(t, policy, 1, 0, &log, &written)
			_, err := c.Create([]byte(`{"id":"a"}`))
			require.NoError(t, err)
			sa, _ := c.shardFor("a")
			id := "b"
			for i := 0; ; i++ {
				if s, _ := c.shardFor(id); s != sa {
					break
				}
				id = fmt.Sprint("b", i)
			}
			written = id

			sa.mu.Lock()
			filed := c.lim.filed.Load()
			done := make(chan error)
			go func() {
				_, err := c.Create(fmt.Appendf(nil, `{"id":%q}`, id))
				done <- err
			}()
			// The write ends its first attempt (stopFiling) when it
			// finds a's shard locked; it then waits for the lock.
			for c.lim.filed.Load() == filed {
				runtime.Gosched()
			}
			sa.mu.Unlock()
			require.NoError(t, <-done)
			assert.Equal(t, []string{"evict a, written stored: true"}, log, "a is reported once the write holds no room, stored")
			_, err = c.Read(id)
			assert.NoError(t, err)
			assert.Equal(t, uint64(1), c.Stats().Evicted)
		})
	}
}
