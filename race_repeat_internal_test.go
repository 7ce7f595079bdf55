package ttlstore

import (
	"sync"
	"testing"
)

var raceRuns struct {
	sync.Mutex
	n map[string]int
}

// raceRepeat reports whether t is a repeat, under the race detector, of a
// test that already ran in this process (go test -race -count=N runs each
// test N times in one process). The heaviest tests then run a fraction of
// their size: the first run checks everything at full size, and the
// repeats are for the race detector, which the shorter runs feed as well.
// This keeps `go test -race -count=20 .` within go test's default ten
// minutes (docs/testing.md). Without the race detector it is always false.
func raceRepeat(t testing.TB) bool {
	if !raceDetector {
		return false
	}
	raceRuns.Lock()
	defer raceRuns.Unlock()
	if raceRuns.n == nil {
		raceRuns.n = map[string]int{}
	}
	raceRuns.n[t.Name()]++
	return raceRuns.n[t.Name()] > 1
}

// RaceRepeat exposes raceRepeat to the black-box tests.
func RaceRepeat(t testing.TB) bool { return raceRepeat(t) }
