package bench

import (
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
)

// JumpClock is a clock.Clock that runs with the wall clock plus an offset
// that Add moves forward. The expiry workloads use it instead of clock.Mock:
// Mock.Now takes a mutex, which every Read of ttlstore would then pay (and
// contend on in parallel), so the measurement would be of the mock. Only Now
// (and what derives from it) sees the offset; the timers are the wall
// clock's, so it is meant for collections with ManualSweep.
type JumpClock struct {
	clock.Clock
	off atomic.Int64 // nanoseconds added to the wall clock
}

// NewJumpClock returns a JumpClock with no offset.
func NewJumpClock() *JumpClock { return &JumpClock{Clock: clock.New()} }

// Now returns the wall clock's time plus the offset.
func (c *JumpClock) Now() time.Time { return time.Now().Add(time.Duration(c.off.Load())) }

// Since is Now().Sub(t).
func (c *JumpClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// Until is t.Sub(Now()).
func (c *JumpClock) Until(t time.Time) time.Duration { return t.Sub(c.Now()) }

// Add moves the clock forward by d, which must not be negative.
func (c *JumpClock) Add(d time.Duration) {
	if d < 0 {
		panic("bench: JumpClock moved backwards")
	}
	c.off.Add(int64(d))
}

// OtterClock is an otter.Clock with the same behaviour as JumpClock: the
// wall clock's reading plus an offset that Add moves forward. Its Tick
// returns nil, which turns off otter's periodic clean-up, so expired entries
// stay until otter's own maintenance (run as part of reads and writes) or
// CleanUp removes them.
type OtterClock struct {
	start time.Time
	base  int64
	off   atomic.Int64
}

// NewOtterClock returns an OtterClock with no offset.
func NewOtterClock() *OtterClock {
	now := time.Now()
	return &OtterClock{start: now, base: now.UnixNano()}
}

// NowNano returns Unix nanoseconds, offset.
func (c *OtterClock) NowNano() int64 { return c.base + int64(time.Since(c.start)) + c.off.Load() }

// Tick returns nil: no periodic clean-up.
func (c *OtterClock) Tick(time.Duration) <-chan time.Time { return nil }

// Add moves the clock forward by d, which must not be negative.
func (c *OtterClock) Add(d time.Duration) {
	if d < 0 {
		panic("bench: OtterClock moved backwards")
	}
	c.off.Add(int64(d))
}
