package ttlstore

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestExpiryFloor drives the floor through lowers and refreshes, some of
// them made while a refresh reads the shards (from inside its scan), and
// checks where it ends.
func TestExpiryFloor(t *testing.T) {
	tests := []struct {
		name string
		run  func(f *expiryFloor)
		want int64
	}{
		{"empty", func(f *expiryFloor) {}, neverExpires},
		{"lowered", func(f *expiryFloor) { f.lower(20); f.lower(10); f.lower(15) }, 10},
		{"never expires", func(f *expiryFloor) { f.lower(neverExpires) }, neverExpires},
		{"refresh raises", func(f *expiryFloor) {
			f.lower(10)
			f.refresh(func() int64 { return 20 })
		}, 20},
		{"refresh lowers", func(f *expiryFloor) {
			f.lower(10)
			f.refresh(func() int64 { return 5 })
		}, 5},
		{"lowered after a refresh", func(f *expiryFloor) {
			f.lower(10)
			f.refresh(func() int64 { return 20 })
			f.lower(15)
		}, 15},
		{"lowered during a refresh, below the old floor", func(f *expiryFloor) {
			f.lower(10)
			f.refresh(func() int64 { f.lower(5); return 20 })
		}, 5},
		{"lowered during a refresh, after its shard was read", func(f *expiryFloor) {
			// The document indexed at 12 is not in what the scan
			// returns: raising the floor to 20 would miss it.
			f.lower(10)
			f.refresh(func() int64 { f.lower(12); return 20 })
		}, 10},
		{"lowered during a refresh to the old floor", func(f *expiryFloor) {
			f.lower(10)
			f.refresh(func() int64 { f.lower(10); return 20 })
		}, 10},
		{"a refresh during a refresh", func(f *expiryFloor) {
			f.lower(10)
			f.refresh(func() int64 {
				f.refresh(func() int64 { return 30 })
				return 20
			})
		}, 30},
		{"lowered during a refresh during a refresh", func(f *expiryFloor) {
			f.lower(10)
			f.refresh(func() int64 {
				f.refresh(func() int64 { return 30 })
				f.lower(25) // watch must still be neverExpires
				return 20
			})
		}, 25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f expiryFloor
			f.init()
			tt.run(&f)
			assert.Equal(t, tt.want, f.floor.Load(), "floor")
			assert.Equal(t, f.floor.Load(), f.watch.Load(), "watch, with no refresh under way")
			assert.Zero(t, f.refreshing)
		})
	}
}

// TestExpiryFloorConcurrent has goroutines that each own a fake shard
// lower and raise its minimum expiry while others refresh the floor from
// every shard's: after each change, the owner (as if it still held its
// shard's lock) finds the floor at or before its shard's minimum.
func TestExpiryFloorConcurrent(t *testing.T) {
	const shards, changes = 4, 20000
	var f expiryFloor
	f.init()
	var mins [shards]atomic.Int64
	for i := range mins {
		mins[i].Store(neverExpires)
	}
	scan := func() int64 {
		m := neverExpires
		for i := range mins {
			m = min(m, mins[i].Load())
			runtime.Gosched() // let owners change what was read
		}
		return m
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				f.refresh(scan)
			}
		}()
	}
	var owners sync.WaitGroup
	for i := range shards {
		owners.Add(1)
		go func() {
			defer owners.Done()
			r := rand.New(rand.NewPCG(uint64(i), 1))
			for range changes {
				exp := r.Int64N(1000)
				if r.IntN(2) == 0 && exp > mins[i].Load() {
					mins[i].Store(exp) // the earliest document removed
				} else if exp < mins[i].Load() {
					mins[i].Store(exp) // an earlier one indexed
					f.lower(exp)
				}
				if got := f.floor.Load(); got > mins[i].Load() {
					t.Errorf("shard %d: floor %d after its minimum %d", i, got, mins[i].Load())
					return
				}
			}
		}()
	}
	owners.Wait()
	stop.Store(true)
	wg.Wait()
	assert.LessOrEqual(t, f.floor.Load(), scan())
	assert.Equal(t, f.floor.Load(), f.watch.Load(), "watch, with no refresh under way")
}
