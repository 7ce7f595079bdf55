package ttlstore

// CheckInvariants exposes checkInvariants to the black-box tests.
func (c *Collection) CheckInvariants() error { return c.checkInvariants() }

// SweeperArmed reports whether the background sweeper has a timer set.
func (c *Collection) SweeperArmed() bool { return c.armed.Load() != neverExpires }

// Clock returns the collection's clock, for benchmarks that move a mock.
func (c *Collection) Clock() Clock { return c.clock }
