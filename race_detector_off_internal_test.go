//go:build !race

package ttlstore

// raceDetector reports whether the tests run under the race detector.
const raceDetector = false
