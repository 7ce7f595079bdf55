package ttlstore

import (
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
	id         string    // the document's key: its id, preceded in a partitioned collection by its partition key's encoding
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
	// oldHidden is whether a DeletePartition hid old: it is absent, and
	// replacing it is no expiry to report.
	oldHidden bool
	exp       int64 // e's expiry, set by check
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
	// revDocs and revBytes count the versions that the commit's writes
	// replace in place though they have expired (or DeletePartition hid
	// them), and their weight: dDocs and dBytes count those writes as
	// adding no document, but each brings a document back. Where the
	// commit needs room, makeRoom judges it as if those versions were
	// swept (see SetLimits and limits.fits).
	revDocs, revBytes int64
	// reserved is set once reserve has taken dDocs and dBytes from the
	// budget: the commit's net change, its deletions included.
	reserved bool
	// dDocs and dBytes are what the commit adds to the usage.
	dDocs, dBytes int64
	filing        bool      // counted in limits.filing (startFiling)
	applied       bool      // applied, so that only its wait can have failed
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
		cm.applied = true
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
	cm.revDocs, cm.revBytes = 0, 0
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
			m.old, m.oldExp, m.oldLive, m.oldHidden = nil, 0, false, false
			if m.ref != nil {
				m.old = m.ref.Load()
				m.oldExp = m.old.expiry(cm.def)
				m.oldHidden = m.s.hidden(m.old) // deleted by DeletePartition: absent
				m.oldLive = !isExpired(m.oldExp, cm.now) && !m.oldHidden
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
				if !m.oldLive {
					cm.revDocs++
					cm.revBytes += weigh(m.old)
				}
			}
		case touch:
			// A new entry with the same JSON, and the same weight:
			// Documents already returned keep the old _ts and _etag.
			size := m.old.size()
			e, data := newEntry(size)
			copy(data, m.old.bytes(size))
			*e = entry{ttl: m.old.ttl, n: m.old.n, idOff: m.old.idOff, idLen: m.old.idLen, pkLen: m.old.pkLen}
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
// id (mutation.prev). A small commit compares hashes pairwise, which costs
// less than building a map (a batch of 10 spent a third of its overhead on
// one); a large one uses a map.
func (cm *commit) chain() {
	ms := cm.many
	if len(ms) <= 32 {
		for i := range ms {
			ms[i].prev = 0
			for j := i - 1; j >= 0; j-- {
				if ms[j].h == ms[i].h && ms[j].id == ms[i].id {
					ms[i].prev = int32(j + 1)
					break
				}
			}
		}
		return
	}
	last := make(map[string]int32, len(ms))
	for i := range ms {
		m := &ms[i]
		m.prev = last[m.id]
		last[m.id] = int32(i + 1)
	}
}

// current makes the document p leaves m's current document.
func (m *mutation) current(p *mutation) {
	switch p.kind {
	case del:
		m.old, m.oldExp, m.oldLive, m.oldHidden = nil, 0, false, false
	case read:
		m.old, m.oldExp, m.oldLive, m.oldHidden = p.old, p.oldExp, p.oldLive, p.oldHidden
	default:
		m.old, m.oldExp, m.oldLive, m.oldHidden = p.e, p.exp, true, false // ttl >= 1: live at its own second
	}
}
