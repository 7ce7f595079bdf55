package ttlstore

import (
	"time"

	"github.com/benbjohnson/clock"
)

// Clock is the source of time for a Collection: Options.Clock takes any value
// of it, such as clock.NewMock() for tests.
//
// It is an alias of github.com/benbjohnson/clock's Clock interface. That
// module is archived upstream; this file is the one place that names it, so a
// compatible fork can replace it here without touching the rest of the
// package.
type Clock = clock.Clock

// monoClock is the clock a Collection uses when Options.Clock is nil: the
// wall clock as read once, at New, advanced by the monotonic clock ever
// after, the way time.Since measures. Two reasons:
//
//   - A step of the system's wall clock (NTP, an operator) cannot move
//     expiry: stepping it back would bring expired documents back into view,
//     stepping it forward would expire live ones early. Gradual NTP slewing
//     applies to both clocks alike, so the two do not drift apart.
//   - One monotonic reading is cheaper than time.Now, which reads both
//     clocks, and a read pays for a clock reading every time.
//
// Timers are the wall clock's own (they run on monotonic time too).
type monoClock struct {
	clock.Clock           // timers and sleeps
	start       time.Time // carries a monotonic reading
	startNanos  int64     // start as Unix nanoseconds
}

func newMonoClock() *monoClock {
	now := time.Now()
	return &monoClock{Clock: clock.New(), start: now, startNanos: now.UnixNano()}
}

// Now returns the current time; it carries a monotonic reading, so
// durations between its results are monotonic too.
func (m *monoClock) Now() time.Time { return m.start.Add(time.Since(m.start)) }

func (m *monoClock) Since(t time.Time) time.Duration { return m.Now().Sub(t) }

func (m *monoClock) Until(t time.Time) time.Duration { return t.Sub(m.Now()) }

// unixSeconds is the whole Unix second of Now without building a time.Time.
func (m *monoClock) unixSeconds() int64 {
	ns := m.startNanos + int64(time.Since(m.start))
	s := ns / 1e9
	if ns < 0 && s*1e9 != ns {
		s-- // round down before 1970 too
	}
	return s
}
