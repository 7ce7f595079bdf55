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
	// ns>>63 is -1 before 1970, where the division, which truncates,
	// must round down; 0 after. Without a branch, unixSeconds is cheap
	// enough for the compiler to inline it in Collection.now (a frame
	// less on every read).
	return (ns + ns>>63*(1e9-1)) / 1e9
}

// The background sweeper waits for a time on the collection's clock through
// a waiter, chosen at New by the kind of clock:
//
//   - A clock that runs by itself (the default clock, clock.New(), or the
//     real clock inside a testing/synctest bubble) gets timerWaiter: one
//     timer of that clock per wait, so the goroutine sleeps until the time
//     comes and costs nothing meanwhile.
//   - A clock that moves only when a test moves it (a *clock.Mock, or any
//     clock with its Add and Set methods) gets pollWaiter, which sets none
//     of the clock's timers. clock.Mock.Add fires due timers one at a time,
//     setting its time to each one's deadline and sleeping 1 ms of real
//     time after each; a sweeper that re-armed a mock timer for every
//     expiry second a jump crossed made one Add cost a millisecond per
//     second crossed (a month over expiries spread across a day: 95 s).
//     Instead pollWaiter looks at the mock's time every few milliseconds of
//     real time while something can expire, so an Add of any length costs
//     what the mock itself costs, and the sweeper catches up with the
//     whole jump in one sweep right after it.

// waitResult says why a wait ended.
type waitResult uint8

const (
	waitDue   waitResult = iota // the clock reached the time waited for
	waitWoken                   // the wake channel was ready: look again
	waitDone                    // the done channel was closed: stop
)

// waiter is how the background sweeper waits until a time on the clock. Only
// the sweeper's goroutine uses it.
type waiter interface {
	// waitUntil returns waitDue once the clock reads at or later, or
	// waitWoken or waitDone as soon as wake or done is ready.
	waitUntil(at time.Time, wake, done <-chan struct{}) waitResult
}

// manualClock is a clock that moves only when told to, like *clock.Mock.
type manualClock interface {
	Clock
	Add(time.Duration)
	Set(time.Time)
}

// newWaiter returns the waiter for clk; see above.
func newWaiter(clk Clock) waiter {
	if _, ok := clk.(manualClock); ok {
		return &pollWaiter{clock: clk}
	}
	return timerWaiter{clock: clk}
}

// timerWaiter waits on one timer of its clock.
type timerWaiter struct{ clock Clock }

func (w timerWaiter) waitUntil(at time.Time, wake, done <-chan struct{}) waitResult {
	d := w.clock.Until(at)
	if d <= 0 {
		return waitDue
	}
	t := w.clock.Timer(d)
	defer t.Stop()
	select {
	case <-done:
		return waitDone
	case <-wake:
		return waitWoken
	case <-t.C:
		return waitDue
	}
}

// Poll delays of pollWaiter, in real time: pollMin right after the clock
// moved, doubling up to pollMax while it stands still.
const (
	pollMin = time.Millisecond
	pollMax = 16 * time.Millisecond
)

// pollWaiter waits for a manually moved clock by reading it on a real-time
// timer. It reads the real clock; this file is the only place that may.
type pollWaiter struct {
	clock Clock
	timer *time.Timer // real time; nil until the first wait
}

func (w *pollWaiter) waitUntil(at time.Time, wake, done <-chan struct{}) waitResult {
	now := w.clock.Now()
	delay := pollMin
	for now.Before(at) {
		if w.timer == nil {
			w.timer = time.NewTimer(delay)
		} else {
			w.timer.Reset(delay)
		}
		select {
		case <-done:
			w.timer.Stop()
			return waitDone
		case <-wake:
			w.timer.Stop()
			return waitWoken
		case <-w.timer.C:
		}
		prev := now
		now = w.clock.Now()
		if now.Equal(prev) {
			delay = min(2*delay, pollMax)
		} else {
			delay = pollMin
		}
	}
	return waitDue
}

// The durable mode's timing (when SyncEverySecond syncs, how long writers
// let a sync lag) is about the disk, not about documents, so it runs on the
// real clock even when Options.Clock is a mock; inside a testing/synctest
// bubble the real clock is the bubble's. These are its only readings of it,
// and the log arms a timer only while it holds unsynced records, so a jump
// of virtual time fires none.

// realNow is the real clock's time.
func realNow() time.Time { return time.Now() }

// newRealTimer returns a stopped timer of the real clock.
func newRealTimer() *time.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}
