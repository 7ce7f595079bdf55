package ttlstore

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// An overwritten document's memory is handed back: nothing in the
// collection keeps the old entry, the map key included (it points into the
// entry, so the map must take the new entry's key).
func TestOverwrittenEntryIsCollected(t *testing.T) {
	c, err := New(Options{SweepInterval: ManualSweep})
	require.NoError(t, err)
	defer c.Close()
	for _, op := range []string{"upsert", "touch"} {
		t.Run(op, func(t *testing.T) {
			d, err := c.Upsert([]byte(`{"id":"k","v":1}`))
			require.NoError(t, err)
			collected := make(chan struct{})
			runtime.SetFinalizer(d.e, func(*entry) { close(collected) })
			d = Document{}
			if op == "upsert" {
				_, err = c.Upsert([]byte(`{"id":"k","v":2}`))
			} else {
				_, err = c.Touch("k")
			}
			require.NoError(t, err)
			runtime.GC()
			select {
			case <-collected:
			case <-time.After(10 * time.Second): // a bound on a wait, not a delay
				t.Fatal("the overwritten entry was not collected")
			}
			require.NoError(t, c.checkInvariants())
		})
	}
}

// TestAllocSize checks the table lookup of allocSize against the plain
// definition: the smallest size class that holds n, or whole 8 KiB pages
// above the largest class.
func TestAllocSize(t *testing.T) {
	want := func(n int) int {
		for _, c := range sizeClasses {
			if int(c) >= n {
				return int(c)
			}
		}
		return (n + 8191) / 8192 * 8192
	}
	for n := 0; n <= 70_000; n++ {
		if got := allocSize(n); got != want(n) {
			t.Fatalf("allocSize(%d) = %d, want %d", n, got, want(n))
		}
	}
}

// keyIs agrees with == for keys of every length round its 8-to-16-byte
// fast path, whichever byte differs.
func TestEntryKeyIs(t *testing.T) {
	for n := range 25 {
		id := strings.Repeat("k", n)
		if n > 0 {
			id = "a" + id[1:]
		}
		e := testEntry(id)
		require.True(t, e.keyIs(strings.Clone(id)), "%q", id)
		require.False(t, e.keyIs(id+"x"), "%q longer", id)
		if n > 0 {
			require.False(t, e.keyIs(id[:n-1]), "%q shorter", id)
		}
		for i := range n {
			other := []byte(id)
			other[i]++
			require.False(t, e.keyIs(string(other)), "%q against %q", id, other)
		}
	}
}
