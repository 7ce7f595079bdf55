package ttlstore

import "github.com/benbjohnson/clock"

// Clock is the source of time for a Collection: Options.Clock takes any value
// of it, such as clock.New() for the wall clock or clock.NewMock() for tests.
//
// It is an alias of github.com/benbjohnson/clock's Clock interface. That
// module is archived upstream; this file is the one place that names it, so a
// compatible fork can replace it here without touching the rest of the
// package.
type Clock = clock.Clock

// wallClock returns the clock used when Options.Clock is nil.
func wallClock() Clock { return clock.New() }
