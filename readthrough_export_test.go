package ttlstore

// LoadWaiters returns how many ReadOrLoad callers wait for the load of id
// in progress; 0 when none is in progress.
func (c *Collection) LoadWaiters(id string) int {
	p := c.loads.part(c.seed, id)
	p.mu.Lock()
	defer p.mu.Unlock()
	if call := p.calls[id]; call != nil {
		return call.waiters
	}
	return 0
}

// LoadPart returns the index of the part of the table of loads that holds
// the loads of id.
func (c *Collection) LoadPart(id string) int {
	p := c.loads.part(c.seed, id)
	for i := range c.loads.parts {
		if &c.loads.parts[i] == p {
			return i
		}
	}
	panic("unreachable")
}

// IdleLoaders returns how many loaders wait for a load.
func (c *Collection) IdleLoaders() int {
	c.loads.loadersMu.Lock()
	defer c.loads.loadersMu.Unlock()
	return len(c.loads.idle)
}
