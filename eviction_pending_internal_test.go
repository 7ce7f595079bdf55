package ttlstore

import (
	"fmt"
	"testing"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestColdestPendingAdds holds EvictColdest's mutex, as a writer picking a
// victim on another core does, while new documents are written: their
// writers leave them pending (added) and return without waiting, up to
// maxPending; the next writer waits for the mutex. Whoever takes the mutex
// next must put the pending documents in the queues before anything else:
// a delete or a replace of a pending document, and a write's pick of a
// victim, find them there. checkInvariants checks the queues against the
// tables and the bound's count of the policy's bytes (a MaxBytes bound, so
// that it is counted).
func TestColdestPendingAdds(t *testing.T) {
	var evicted []string
	c, err := New(Options{
		DefaultTTL: TTL(100), Clock: clock.NewMock(), SweepInterval: ManualSweep,
		MaxDocuments: 2 * maxPending, MaxBytes: 1 << 20, Eviction: EvictColdest,
		OnEvict: func(d Document) { evicted = append(evicted, d.ID()) },
	})
	require.NoError(t, err)
	defer c.Close()
	p := c.lim.cold
	doc := func(i, v int) []byte { return fmt.Appendf(nil, `{"id":"d%d","v":%d}`, i, v) }
	next := 0
	// pending writes n new documents while mu is held, then runs w, which
	// waits for mu, and lets go of mu.
	pending := func(n int, w func() error) {
		t.Helper()
		p.mu.Lock()
		len0 := p.len()
		for range n {
			_, err := c.Create(doc(next, 1)) // returns while mu is held
			require.NoError(t, err)
			next++
		}
		assert.Equal(t, len0, p.len(), "nothing enters the queues while mu is held")
		assert.Equal(t, int32(n), p.npend.Load())
		done := make(chan error)
		go func() { done <- w() }()
		p.mu.Unlock()
		require.NoError(t, <-done)
		require.NoError(t, c.checkInvariants())
	}

	pending(2, func() error { return c.Delete("d1") })                               // no longer stored
	pending(2, func() error { _, err := c.Upsert(doc(3, 2)); return err })           // replaced
	pending(maxPending, func() error { _, err := c.Create(doc(-1, 1)); return err }) // the buffer is full
	assert.Equal(t, 4+maxPending, c.Len())

	// At the bound, with every document pending before, a write evicts
	// one of them: the policy holds them all.
	pending(maxPending-4, func() error { return nil })
	require.Equal(t, 2*maxPending, c.Len())
	pending(0, func() error { _, err := c.Create(doc(next, 1)); return err })
	assert.Equal(t, 2*maxPending, c.Len())
	require.Len(t, evicted, 1)
	_, err = c.Read(evicted[0])
	assert.ErrorIs(t, err, ErrNotFound)
}
