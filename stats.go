package ttlstore

// Counts: Len and Stats.

// Len returns the number of live documents: expired documents are not
// counted, whether or not they were swept.
func (c *Collection) Len() int {
	st := c.Stats()
	return st.Live
}

// Stats describes a Collection's contents: all shards judged at one reading
// of the clock, taken when Stats begins, and under one DefaultTTL. Each
// shard is counted under its own lock, so under concurrent writes the counts
// may include writes made while Stats ran.
type Stats struct {
	// Live is the number of documents that have not expired.
	Live int
	// Expired is the number of expired documents still in memory, waiting
	// for a sweep. None of them is visible.
	Expired int
	// Deleted is the number of documents DeletePartition deleted that
	// are still in memory, waiting for a sweep. None of them is visible,
	// nor counted in Live or Expired.
	Deleted int
	// Swept is the number of expired documents removed from memory since
	// New (by sweeps, SetDefaultTTL's purge, and writes that reused their
	// ids). Explicit deletes are not counted.
	Swept uint64
	// TornBytes is, for a durable collection, the size of the torn tail
	// Open cut from the end of its log: writes a crash or a full disk
	// interrupted (a torn record, or whole records whose group lacks its
	// commit record), which no caller had been told had succeeded. 0
	// otherwise.
	TornBytes int64
	// LogSyncs is, for a durable collection, how many times its log was
	// fsynced since Open: with SyncAlways and many writers, far fewer
	// than the writes (they share fsyncs). 0 otherwise.
	LogSyncs uint64

	// Hits and Misses count the reads (Read, and the reads of ReadOrLoad
	// and Typed views) that found a live document and those that did not,
	// since New or Open.
	Hits, Misses uint64
	// Bytes is the weight of the documents in memory, expired ones not
	// yet swept included (see Document.Weight): what counts against
	// MaxBytes.
	Bytes int64
	// Evicted is the number of live documents evicted to make room under
	// MaxDocuments or MaxBytes, and EvictedBytes their weight.
	Evicted, EvictedBytes uint64
	// Refused is the number of writes refused with ErrFull.
	Refused uint64
	// MaxDocuments and MaxBytes are the bounds in force (0: none).
	MaxDocuments int
	MaxBytes     int64
}

// Stats returns the collection's counts. It costs O(shards + expired
// documents not yet swept). It works after Close, on the contents as Close
// left them.
func (c *Collection) Stats() Stats {
	c.policyMu.RLock()
	defer c.policyMu.RUnlock()
	var st Stats
	now := c.now()
	for i := range c.shards {
		s := &c.shards[i]
		if s.size.Load() == 0 {
			continue
		}
		s.mu.RLock()
		expired := 0
		if s.minExp.Load() <= now {
			expired = s.index.countExpired(now)
		}
		hidLive, hidExpired := c.countHiddenLocked(s, c.def.Load(), now)
		st.Live += s.docs.len() - expired - hidLive
		st.Expired += expired - hidExpired
		st.Deleted += hidLive + hidExpired
		s.mu.RUnlock()
	}
	st.Hits, st.Misses = c.counts.sum()
	st.Swept = c.swept.Load()
	st.Bytes = c.lim.bytes.Load()
	st.Evicted = c.lim.evicted.Load()
	st.EvictedBytes = c.lim.evictedBytes.Load()
	st.Refused = c.lim.refused.Load()
	st.MaxDocuments = int(c.lim.maxDocs.Load())
	st.MaxBytes = c.lim.maxBytes.Load()
	if c.d != nil {
		st.TornBytes = c.d.torn
		c.d.log.mu.Lock()
		st.LogSyncs = c.d.log.syncs
		c.d.log.mu.Unlock()
	}
	return st
}
