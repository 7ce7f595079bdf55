package ttlstore

import (
	"errors"
	"math/bits"
	"strconv"
	"sync/atomic"
)

// The write pipeline. Every write (Create, Upsert, Replace and their
// conditional forms, Delete, Touch), whatever the collection's mode, is a
// commit of one or more mutations, and every commit passes the same stages
// in one order:
//
//	prepare  validate the document and build its entry, outside any lock (write.go)
//	lock     the shards of the commit's ids, in shard order
//	check    each mutation's condition, against the current documents at one second;
//	         stamp the new versions with _ts and _etag
//	reserve  the room the commit needs under MaxDocuments and MaxBytes (bound.go)
//	log      one record group in a durable collection's log: all or nothing (durable_log.go)
//	apply    the table, the expiry index, the eviction policy
//	unlock
//	notify   the collection's own listeners: the sweeper, the typed views
//	wait     until the log is as durable as the Sync policy promises
//	report   the user's callbacks, OnExpire and OnEvict, holding nothing
//
// A mode plugs into its stage and adds no branch to the others: the bound
// is the reserve stage (free when there is no bound), the durable log is
// the log and wait stages (free in memory), the typed views and the sweeper
// listen at notify, the callbacks at report. A stage that fails ends the
// commit through abandon, which gives back what the stages before it took;
// nothing the commit meant to change is then changed. The report comes
// after the wait, so that no callback tells of a removal that a power loss
// could undo (see Options.OnExpire).
//
// The commit, not the document, is the unit the stages see: a commit of N
// mutations locks each of its shards once, checks all of them before any
// is applied, logs them in one group (a restart applies all or none), and
// has one sequence number, the log position of its group, which a change
// feed can share.

// mutationKind is what a mutation does to its id.
type mutationKind uint8

const (
	put   mutationKind = iota // store a prepared entry (Create, Upsert, Replace)
	touch                     // store the current entry again, with a new _ts and _etag
	del                       // remove the current entry
	read                      // change nothing: the current entry is the result (a batch's read)
	amend                     // store the current entry with ops applied (Patch)
)

// mutation is one document's change in a commit.
type mutation struct {
	op         string // the call it stands for: "create", "delete", ...
	kind       mutationKind
	mode       writeMode // a put's requirement of the current document
	checkMatch bool      // whether the current document's _etag must be ifMatch
	ifMatch    string
	id         string
	s          *shard    // id's shard
	h          uint64    // id's hash
	e          *entry    // the new entry: prepared (put) or made by check (touch)
	w          int64     // e's weight (put, amend)
	ops        []PatchOp // amend's operations
	// prev is 1 + the index of the commit's last mutation before this
	// one of the same id, or 0: the document that one leaves is this
	// one's current document.
	prev int32

	// Found by check, under the lock.
	ref     *atomic.Pointer[entry] // the table slot of the current entry, nil if none
	old     *entry                 // the current entry, nil if none
	oldExp  int64                  // its expiry
	oldLive bool                   // whether it was live at the commit's second
	exp     int64                  // e's expiry, set by check
}

// commit is one write on its way through the pipeline.
type commit struct {
	op string
	// one is the mutation of a single-document write, kept in the
	// commit so that it costs no allocation; many the mutations of a
	// commit of several, when not nil. muts returns them.
	one  [1]mutation
	many []mutation

	now   int64 // the commit's second, read under the lock
	def   int32 // the DefaultTTL at that second
	grows bool  // whether a mutation stores an entry the bound must make room for
	// reserved is set once reserve has taken dDocs and dBytes from the
	// budget: the commit's net change, its deletions included.
	reserved bool
	// dDocs and dBytes are what the commit adds to the usage.
	dDocs, dBytes int64
	filing        bool      // counted in limits.filing (startFiling)
	locked        [2]uint64 // the shards locked, a bit each, when more than one
	failed        int       // the mutation whose condition failed, from check
	r             room      // the room evicted for the commit
	seq           uint64    // the log position of the commit's group; 0 in memory
}

// locked has a bit for each shard.
const _ = uint(2*64 - numShards)

// single makes cm, a zero commit, a commit of one mutation: op's, of kind
// on id, whose hash is h, in shard s. It returns the mutation for the
// caller to fill in. (Field by field: a composite literal of a commit
// builds all of its 368 bytes and copies them, which cost an overwrite 130
// instructions, a tenth of its time.)
func (cm *commit) single(op string, kind mutationKind, id string, s *shard, h uint64) *mutation {
	cm.op = op
	m := &cm.one[0]
	m.op, m.kind, m.id, m.s, m.h = op, kind, id, s, h
	return m
}

// muts returns cm's mutations. (A slice of cm.one, not a field: escape
// analysis would then move every commit to the heap.)
func (cm *commit) muts() []mutation {
	if cm.many != nil {
		return cm.many
	}
	return cm.one[:]
}

// run takes cm, whose mutations are prepared, through the stages that
// follow prepare. It returns the first error a stage met, after the
// commit's removals (of expired documents, and evictions for its room) are
// reported.
func (c *Collection) run(cm *commit) error {
	if c.closed.Load() {
		return newError(cm.op, cm.muts()[0].id, ErrClosed)
	}
	for {
		c.lock(cm)
		if err := c.check(cm); err != nil {
			c.unlock(cm)
			return c.abandon(cm, err)
		}
		if retry, err := c.reserve(cm); retry || err != nil {
			if err != nil {
				return c.abandon(cm, err)
			}
			continue // room was made with the locks let go: check again
		}
		if err := c.log(cm); err != nil {
			c.unreserve(cm)
			c.unlock(cm)
			return c.abandon(cm, err)
		}
		c.apply(cm)
		c.unlock(cm)
		c.notify(cm)
		err := c.wait(cm)
		c.reportRemoved(cm)
		return err
	}
}

// lock takes the lock of every shard cm's mutations are in, each once, in
// shard order, so that commits of several documents cannot deadlock; and,
// for several, spanMu, so that no snapshot of All or Query sees part of
// the commit. (lock and the stages after it take a commit of one mutation,
// the common case, through a path short enough to be inlined into run; the
// loops over several are out of line.)
func (c *Collection) lock(cm *commit) {
	if cm.many == nil {
		cm.one[0].s.mu.Lock()
		return
	}
	c.lockSpan(cm)
}

func (c *Collection) lockSpan(cm *commit) {
	c.spanMu.RLock()
	cm.locked = [2]uint64{}
	for i := range cm.many {
		n := cm.many[i].h & (numShards - 1)
		cm.locked[n/64] |= 1 << (n % 64)
	}
	for w, set := range cm.locked {
		for ; set != 0; set &= set - 1 {
			c.shards[w*64+bits.TrailingZeros64(set)].mu.Lock()
		}
	}
}

// unlock lets go of what lock took, ending the commit's count among the
// writes in progress first (filing: set only under an evicting policy).
func (c *Collection) unlock(cm *commit) {
	if cm.filing || cm.many != nil {
		c.unlockFiling(cm)
		return
	}
	cm.one[0].s.mu.Unlock()
}

func (c *Collection) unlockFiling(cm *commit) {
	if cm.filing {
		c.lim.stopFiling()
	}
	if cm.many == nil {
		cm.one[0].s.mu.Unlock()
	} else {
		for w, set := range cm.locked {
			for ; set != 0; set &= set - 1 {
				c.shards[w*64+bits.TrailingZeros64(set)].mu.Unlock()
			}
		}
		c.spanMu.RUnlock()
	}
	if cm.filing {
		cm.filing = false
		c.lim.ended()
	}
}

// check reads the time (under the locks, which orders the commit after
// every earlier write to its ids: _ts never goes back for one id, and the
// current documents' expiry is judged at the same second) and each
// mutation's current document, and returns the first mutation's condition
// that does not hold. A touch makes its entry here, and every new entry
// gets its _ts, _etag and expiry. The mutations of a
// commit are checked in order: one that follows another of the same id
// sees the document that one leaves.
func (c *Collection) check(cm *commit) error {
	cm.now = c.now()
	cm.def = c.def.Load()
	cm.dDocs, cm.dBytes, cm.grows, cm.reserved = 0, 0, false, false
	ms := cm.muts()
	if len(ms) > 1 {
		cm.chain()
	}
	for i := range ms {
		m := &ms[i]
		if m.prev != 0 {
			m.ref = nil // found again by apply, after the one before
			m.current(&ms[m.prev-1])
		} else {
			m.ref = m.s.docs.lookup(m.h, m.id)
			m.old, m.oldExp, m.oldLive = nil, 0, false
			if m.ref != nil {
				m.old = m.ref.Load()
				m.oldExp = m.old.expiry(cm.def)
				m.oldLive = !isExpired(m.oldExp, cm.now)
			}
		}
		cm.failed = i
		switch {
		case m.kind == put && m.mode == mustNotExist && m.oldLive:
			return newError(m.op, m.id, ErrConflict)
		case (m.kind != put || m.mode == mustExist) && !m.oldLive:
			return newError(m.op, m.id, ErrNotFound)
		case m.checkMatch && !m.old.etagIs(m.ifMatch):
			t := m.old.etagText()
			return newErrorDetail(m.op, m.id, ErrPreconditionFailed, "If-Match "+strconv.Quote(m.ifMatch)+", _etag "+strconv.Quote(string(t[:])))
		}
		if m.kind == amend {
			e, err := c.patched(m.op, m.old, m.ops)
			if err != nil {
				return err
			}
			m.e, m.w = e, weigh(e)
		}
		switch m.kind {
		case del:
			cm.dDocs--
			cm.dBytes -= weigh(m.old)
		case put, amend:
			cm.grows = true
			if m.old == nil {
				cm.dDocs++
				cm.dBytes += m.w
			} else {
				cm.dBytes += m.w - weigh(m.old)
			}
		case touch:
			// A new entry with the same JSON, and the same weight:
			// Documents already returned keep the old _ts and _etag.
			size := m.old.size()
			e, data := newEntry(size)
			copy(data, m.old.bytes(size))
			*e = entry{ttl: m.old.ttl, n: m.old.n, idOff: m.old.idOff, idLen: m.old.idLen}
			m.e = e
		}
		if m.e != nil {
			// Stamped as soon as its condition holds, so that a
			// mutation after it in the commit sees its _etag. A
			// commit that fails after this leaves _etags unused:
			// they are unique, not consecutive.
			m.e.ts = cm.now
			m.e.etag = m.s.nextEtag()
			m.exp = expiryAt(cm.now, effectiveTTL(cm.def, m.e.ttl))
		}
	}
	cm.failed = -1
	return nil
}

// chain links each of cm's mutations to the last one before it of the same
// id (mutation.prev).
func (cm *commit) chain() {
	last := make(map[string]int32, len(cm.many))
	for i := range cm.many {
		m := &cm.many[i]
		m.prev = last[m.id]
		last[m.id] = int32(i + 1)
	}
}

// current makes the document p leaves m's current document.
func (m *mutation) current(p *mutation) {
	switch p.kind {
	case del:
		m.old, m.oldExp, m.oldLive = nil, 0, false
	case read:
		m.old, m.oldExp, m.oldLive = p.old, p.oldExp, p.oldLive
	default:
		m.old, m.oldExp, m.oldLive = p.e, p.exp, true // ttl >= 1: live at its own second
	}
}

// reserve is the bound's stage: it takes from the budget the room cm adds
// (counting the room evicted for it already), evicting under cm's lock when
// the policy allows and nothing has expired. When it cannot, it lets go of
// the locks, makes room without them and returns retry, for the commit to
// lock and check again; or it returns the error that ends the commit
// (ErrFull), the locks let go. It costs an unbounded collection two
// comparisons, and commits that add nothing (Delete, Touch) nothing.
func (c *Collection) reserve(cm *commit) (retry bool, err error) {
	if !cm.grows {
		return false, nil
	}
	if c.lim.policy != NoEviction {
		c.lim.startFiling()
		cm.filing = true
	}
	if !c.lim.reserve(cm.dDocs, cm.dBytes, &cm.r) {
		// pinned is what the commit leaves that the policy may not
		// evict for it (see canMake): its own documents, which take
		// the place of their ids' current ones.
		ms := cm.muts()
		var pinned int64
		for i := range ms {
			m := &ms[i]
			if m.kind != put && m.kind != amend {
				continue
			}
			pinned += m.w
			if m.old != nil && m.oldExp == neverExpires && c.lim.policy == EvictSoonestExpiry {
				pinned -= weigh(m.old) // counted in fixedBytes
			}
		}
		// (reserve fails only where dDocs or dBytes is positive, so
		// they are never the -1 and -1 that makeRoom takes for
		// "within the bounds".)
		first := &ms[0]
		fit := false
		if len(ms) == 1 {
			n := first.s.docs.len()
			if fit, err = c.makeRoomLocked(first.s, first.id, cm.dDocs, cm.dBytes, pinned, cm.now, &cm.r); fit && first.s.docs.len() != n {
				first.ref = first.s.docs.lookup(first.h, first.id) // evicted from s: ref may be stale
			}
		}
		if !fit {
			c.unlock(cm)
			if err == nil {
				err = c.makeRoom(cm.op, first.id, cm.dDocs, cm.dBytes, pinned, &cm.r)
			}
			if err != nil {
				if errors.Is(err, ErrFull) {
					c.lim.refused.Add(1)
				}
				return false, err
			}
			return true, nil
		}
	}
	cm.r.give(&c.lim) // in the reservation now
	cm.reserved = true
	return false, nil
}

// unreserve gives back what reserve took, for a commit that a later stage
// ends.
func (c *Collection) unreserve(cm *commit) {
	if cm.reserved {
		c.lim.release(cm.dDocs, cm.dBytes)
		cm.reserved = false
	}
}

// log is the durable mode's stage: it writes cm's records to the log, in
// one group that a restart applies whole or not at all, and sets cm.seq.
// Logged before it is applied: a commit the log refuses (a full disk, a
// failed disk) changes nothing.
func (c *Collection) log(cm *commit) error {
	if c.d == nil {
		return nil
	}
	return c.logDurable(cm)
}

func (c *Collection) logDurable(cm *commit) error {
	seq, err := c.d.log.appendCommit(cm.muts())
	cm.seq = seq // 0 for a commit of reads only, which logs nothing
	return err
}

// apply files cm's changes in the table, the expiry index and the
// eviction policy, and accounts for them in the usage.
func (c *Collection) apply(cm *commit) {
	if cm.many == nil {
		c.applyOne(cm, &cm.one[0])
		return
	}
	for i := range cm.many {
		m := &cm.many[i]
		if m.kind != read {
			// A mutation before this one may have filed or removed
			// an entry of this shard: the table may have moved the
			// slot check found.
			m.ref = m.s.docs.lookup(m.h, m.id)
		}
		c.applyOne(cm, m)
	}
}

func (c *Collection) applyOne(cm *commit, m *mutation) {
	switch m.kind {
	case del:
		if cm.reserved {
			// Counted in the reservation already: added back before
			// deleteLocked takes it off, so that the usage never
			// reads below the truth.
			c.lim.release(-1, -weigh(m.old))
		}
		c.deleteLocked(m.s, m.h, m.old, m.oldExp)
	case put, touch, amend:
		c.storeLocked(m.s, m.h, m.e, m.exp, m.ref, m.oldExp)
	}
}

// notify tells the collection's own listeners of cm's changes: the
// sweeper of the new expiries, the typed views of the entries replaced.
func (c *Collection) notify(cm *commit) {
	if cm.many == nil {
		c.notifyOne(&cm.one[0])
		return
	}
	for i := range cm.many {
		if m := &cm.many[i]; m.kind != read {
			c.notifyOne(m)
		}
	}
}

func (c *Collection) notifyOne(m *mutation) {
	if m.e != nil {
		c.noteExpiry(m.exp)
	}
	if m.old != nil {
		c.views.forget(m.old)
	}
}

// wait returns once cm's records, and those of what was removed for it,
// are as durable as the Sync policy promises.
func (c *Collection) wait(cm *commit) error {
	if c.d == nil {
		return nil
	}
	return c.synced(max(cm.seq, cm.r.lsn))
}

// reportRemoved reports what cm replaced after it had expired (an expiry,
// R9) and what was evicted or swept for its room: once it is as durable as
// the commit (so that a power loss cannot make a restart report it again),
// and even if the wait failed, for it is gone from memory.
func (c *Collection) reportRemoved(cm *commit) {
	if cm.many == nil {
		c.reportReplaced(&cm.one[0])
	} else {
		for i := range cm.many {
			c.reportReplaced(&cm.many[i])
		}
	}
	c.reportEvicted(&cm.r)
}

// reportReplaced reports the expired document m replaced, if it did.
func (c *Collection) reportReplaced(m *mutation) {
	if m.kind == put && m.prev == 0 && m.old != nil && !m.oldLive {
		c.swept.Add(1)
		c.report([]slot{{e: m.old, exp: m.oldExp}})
	}
}

// abandon ends a commit that changed nothing with err, after giving back
// the room evicted for it, waiting for the log records of what was removed
// for it and reporting those removals: they stand, whether or not the
// commit does. (A write refuses before it evicts when evicting cannot make
// its room; evictions stand behind a failed write only when other calls
// ran at the same time, or the log failed: see EvictionPolicy.) A failure
// to sync them is returned instead.
func (c *Collection) abandon(cm *commit, err error) error {
	r := &cm.r
	if r.held() != 0 {
		c.lim.release(r.docs, r.bytes)
		r.give(&c.lim)
	}
	// Whether or not r held room, makeRoom may have ended a pick's
	// count: tell a room maker that waits for it (one atomic load when
	// none does).
	c.lim.ended()
	var serr error
	if r.lsn != 0 {
		serr = c.synced(r.lsn)
	}
	c.reportEvicted(r) // holding nothing: OnEvict and OnExpire may write
	if serr != nil {
		return serr
	}
	return err
}
