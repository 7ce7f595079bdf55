package ttlstore

import (
	"cmp"
	"hash/maphash"
	"slices"
	"sync/atomic"
	"unsafe"
)

// The per-shard hash table from id to entry, which readers use without the
// lock. Its whole surface is the table type's eight methods: find (with no
// lock), get, lookup, put, insert, remove, len and check, and tableLookup's
// find, which readers use where the table keeps a copy of its view outside
// itself (its readers field); nothing else in table*.go is used outside
// them but by table_internal_test.go, which tests each of
// the promises below on its own. This file has the type, its concurrency
// contract, that surface and the directory of subtables with the readers'
// view; table_subtable.go has one subtable and its groups of seven slots;
// table_check.go the consistency check that checkInvariants runs.
//
// It needs nothing of the package but entry.key(), yet it stays in the root
// package rather than internal/: there it would be generic in the entry
// type, and the id comparison in every probe, inlined here, would become a
// call through the generic dictionary, which the compiler does not inline
// (as the assembly of a generic internal candidate showed). The ways round
// that, moving entry out with it or reading its layout with unsafe, cost
// more than they give. Interleaved, the candidate's Read hit ran at 0.98x
// and 0.99x of this (10k and 100k documents, 30 rounds each), but on 2
// shared cores under a load of 11, with ranges over 2x wide and a control
// of identical read code at 0.99x and 1.26x: the machine could neither show
// the call's cost nor rule it out.

// table is one shard's map from id to entry: an open-addressing hash table
// in the manner of Go's own maps (and Abseil's SwissTable), specialised for
// entries that carry their id inside them. Each slot is one pointer, where a
// map[string]*entry slot is a 16-byte key and a pointer, so it costs under
// half the memory (about 14 bytes a document against 35). Callers pass the
// id's hash, which the collection computes once to pick the shard and then
// reuses here.
//
// Slots come in groups of seven (one cache line) with a control word of one byte per slot:
// ctrlEmpty, ctrlDeleted, or the top seven bits of the hash (h2) for a full
// slot, so a lookup compares seven slots' h2 at once and loads an entry only
// when its h2 matches. Groups are probed in the triangular sequence, which
// visits every group of a power-of-two table.
//
// # Concurrency
//
// Writers (put, remove, lookup) hold their shard's mutex. Readers (find) hold
// nothing and write nothing: they load the table's view, then control words
// and slots, all with atomic loads, while a writer may be changing them with
// atomic stores. What makes that safe:
//
//   - An entry is immutable once stored but for fields readers do not look
//     at (its place in the expiry index and in the eviction policy), so a
//     reader that loads a slot sees a whole entry.
//   - A writer fills a slot before it sets the slot's control byte, and
//     replaces an entry in place with one store, so a reader finds an id
//     that was present throughout its probe, and whatever it finds was
//     present at the instant it loaded the slot. A control byte is only a
//     hint: the reader compares the id of the entry it loads.
//   - A probe stops at a group with an empty slot. A group gains an empty
//     slot only when no probe goes past it (remove), so an entry further
//     along a probe stays reachable while it is in the table.
//   - Growing or splitting builds new groups while readers go on using the
//     old ones, which are not changed again, and then publishes the new view
//     with one atomic store. A reader still on the old groups sees the table
//     as it was when the writer started growing it: the writer holds the
//     lock throughout, so nothing else changed meanwhile.
//   - A reader that goes round every group of a subtable without finding an
//     empty slot (possible only while writers keep filling the groups it
//     already passed) gives up and says so, and its caller takes the lock.
type table struct {
	// view is what readers load: the groups of every subtable, by
	// directory entry. Writers replace it whenever a subtable's groups
	// change, always through publish, which updates readers too. Nil
	// until the first put.
	view atomic.Pointer[tableView]
	// readers, when not nil, is where view is published too: in the
	// collection's array of them (Collection.lookups), which Read loads
	// instead of view, so that a hit touches no line of the shard and
	// none of the view either. Nil in a table of its own (the tests').
	readers *tableLookup
	// subs is the directory, indexed by the top depth bits of a hash below
	// h2's (see dirIndex). A subtable with local depth d < depth fills the
	// 1<<(depth-d) consecutive entries that share its d bits. It has one
	// entry at depth 0, up to about 900 entries.
	subs  []*subtable
	depth uint
	n     int
	// maxGroups, when not 0, replaces defaultMaxGroups; tests make it
	// small to split often.
	maxGroups int
}

// tableView is the part of a table that readers use, published whole: it
// is never changed once stored in table.view.
type tableView struct {
	depth uint
	// root is the groups of the only subtable when depth is 0: readers then
	// skip the directory, which saves them a dependent load.
	root []group
	dir  [][]group // by dirIndex when depth > 0
}

// subtable is one open-addressing table of at most maxGroups groups. Only
// writers use it; readers see its groups through the table's view.
type subtable struct {
	groups []group
	n      int  // full slots
	free   int  // slots that may still be filled before the table must grow
	depth  uint // local depth: how many of the directory's bits it owns
}

// defaultMaxGroups bounds a subtable: one that is full at this size splits
// in two instead of doubling, so growing never rehashes more than 1792
// entries at once, whatever the size of the shard. (Growing a single
// table of 57k entries took 2.6 ms.) 256 groups of seven slots rather than
// 128 (of eight, 1024 slots, until round 7): at 128 of seven, a shard of
// 100k documents (781 each on average) filled its one subtable's capacity
// of 784 about half the time and split, and a read of a split shard
// loads its directory too (0.24 D1 misses and 15 instructions a hit).
const defaultMaxGroups = 256

// dirIndex is the directory entry for h at the given depth: bits 56 down,
// just below h2's.
func dirIndex(h uint64, depth uint) uint64 {
	return h >> (57 - depth) & (1<<depth - 1)
}

func (t *table) sub(h uint64) *subtable {
	return t.subs[dirIndex(h, t.depth)]
}

// len is the number of entries.
func (t *table) len() int { return t.n }

// find returns the entry with the given id, whose hash is h, or nil, holding
// no lock: see the type's comment. ok is false when the probe could not
// conclude, because writers kept filling the groups it had passed; the
// caller must then look again with the lock held.
func (t *table) find(h uint64, id string) (e *entry, ok bool) {
	return t.view.Load().find(h, id)
}

// find is table.find in the view v, which may be nil (an empty table).
func (v *tableView) find(h uint64, id string) (e *entry, ok bool) {
	if v == nil {
		return nil, true
	}
	groups := v.root
	if v.depth != 0 {
		groups = v.dir[dirIndex(h, v.depth)]
	}
	return probe(groups, h, id)
}

// probe is find within one subtable's groups.
func probe(groups []group, h uint64, id string) (*entry, bool) {
	if len(groups) == 0 {
		return nil, true
	}
	mask := uint64(len(groups) - 1)
	tag := h2(h)
	g := h1(h) & mask
	for step := uint64(1); step <= uint64(len(groups)); step++ {
		grp := &groups[g]
		ctrl := grp.ctrl.Load()
		for m := matchH2(ctrl, tag); m != 0; m &= m - 1 {
			if e := grp.slots[firstSlot(m)].Load(); e != nil && e.keyIs(id) {
				return e, true
			}
		}
		if matchEmpty(ctrl) != 0 {
			return nil, true
		}
		g = (g + step) & mask
	}
	return nil, false
}

// get returns the entry with the given id, whose hash is h, or nil. The
// shard's lock must be held.
func (t *table) get(h uint64, id string) *entry {
	if ref := t.lookup(h, id); ref != nil {
		return ref.Load()
	}
	return nil
}

// lookup returns the slot holding the entry with the given id, whose hash
// is h, or nil. Storing another entry with the same id through it replaces
// the entry without a second probe; it is valid until the table is next
// changed. The shard's lock must be held.
func (t *table) lookup(h uint64, id string) *atomic.Pointer[entry] {
	if t.subs == nil {
		return nil
	}
	return t.sub(h).lookup(h, id)
}

// put stores e, whose id hashes to h, and returns the entry it replaced
// under the same id, or nil.
func (t *table) put(h uint64, e *entry, seed maphash.Seed) *entry {
	old := t.room(h, seed).put(h, e)
	if old == nil {
		t.n++
	}
	return old
}

// insert is put of e, whose id hashes to h, when the id is known not to be
// in the table (lookup found no slot, and the shard's lock has been held
// since): it takes the first free slot of the probe, which is where put
// would, without loading an entry to compare ids (an insert's only probe
// then, where put's second cost it some 60 instructions).
func (t *table) insert(h uint64, e *entry, seed maphash.Seed) {
	t.room(h, seed).insert(h, e)
	t.n++
}

// room returns the subtable where an id that hashes to h goes, having
// grown or split it first if it had no free slot.
func (t *table) room(h uint64, seed maphash.Seed) *subtable {
	if t.subs == nil {
		t.subs = []*subtable{{}}
	}
	sub := t.sub(h)
	for sub.free == 0 {
		if len(sub.groups) >= cmp.Or(t.maxGroups, defaultMaxGroups) && sub.n*2 >= sub.capacity() {
			t.split(sub, seed)
			sub = t.sub(h)
		} else {
			sub.resize(seed)
			t.publish()
		}
	}
	return sub
}

// remove deletes e, whose id hashes to h, and reports whether it was there.
func (t *table) remove(h uint64, e *entry) bool {
	if t.subs == nil || !t.sub(h).remove(h, e) {
		return false
	}
	t.n--
	return true
}

// tableSlot is where an entry is stored in a table (locate), so that a
// removal that follows the check of it needs no second probe (removeAt).
// It is valid until the table is next changed; the zero value is no slot.
type tableSlot struct {
	sub *subtable
	grp *group
	i   int
}

// locate returns where e, whose id hashes to h, is stored, and whether it
// is: found by identity, loading no entry. e is stored under its id if and
// only if it is there, since an id has one entry at most. The shard's lock
// must be held, and the slot is valid while it is and the table does not
// change.
func (t *table) locate(h uint64, e *entry) (tableSlot, bool) {
	if t.subs == nil {
		return tableSlot{}, false
	}
	sub := t.sub(h)
	grp, i := sub.locate(h, e)
	return tableSlot{sub, grp, i}, grp != nil
}

// removeAt removes the entry at at, from locate.
func (t *table) removeAt(at tableSlot) {
	at.sub.removeAt(at.grp, at.i)
	t.n--
}

// publish stores a new view of the subtables' groups for readers.
func (t *table) publish() {
	v := &tableView{depth: t.depth}
	if t.depth == 0 {
		v.root = t.subs[0].groups
	} else {
		v.dir = make([][]group, len(t.subs))
		for i, sub := range t.subs {
			v.dir[i] = sub.groups
		}
	}
	t.view.Store(v)
	if t.readers != nil {
		t.readers.publish(v)
	}
}

// tableLookup is a table's view as a reader without the lock loads it
// (find): the first of the groups of the only subtable and their number,
// or the directory's first entry and its depth, so that a read goes from
// here to the groups it probes without loading the view. Only the table's
// writer, holding the lock, changes it (publish).
type tableLookup struct {
	// word holds the number of root's groups in its low 32 bits (0 when
	// the table has no subtable or more than one), the directory's depth
	// in the 8 bits above them (0 when it has one subtable or none), and
	// above those a sequence number that is odd while publish changes
	// root and dir: a reader that reads the same even word before and
	// after them has a root, a directory and their sizes that go
	// together.
	word atomic.Uint64
	root atomic.Pointer[group]
	dir  atomic.Pointer[[]group]
}

const (
	lookupDepthShift = 32
	lookupSeqShift   = 40
)

// publish makes v what readers use.
func (l *tableLookup) publish(v *tableView) {
	seq := l.word.Load()>>lookupSeqShift + 1 // odd
	l.word.Store(seq<<lookupSeqShift | l.word.Load()&(1<<lookupSeqShift-1))
	var n uint64
	var root *group
	var dir *[]group
	switch {
	case v.depth != 0:
		dir = &v.dir[0]
	case len(v.root) != 0:
		n, root = uint64(len(v.root)), &v.root[0]
	}
	l.root.Store(root)
	l.dir.Store(dir)
	l.word.Store((seq+1)<<lookupSeqShift | uint64(v.depth)<<lookupDepthShift | n)
}

// find is table.find for a reader without the lock. ok is false also when
// a writer was publishing new groups during the call. It is every Read's,
// so it has probe's loop in line rather than call it (the call, and the
// registers saved around it, were some 20 instructions of a hit's 540).
func (l *tableLookup) find(h uint64, id string) (e *entry, ok bool) {
	w := l.word.Load()
	root, dir := l.root.Load(), l.dir.Load()
	if l.word.Load() != w || w>>lookupSeqShift&1 != 0 {
		return nil, false
	}
	// The first group and the mask of a power of two of them (never 0
	// once published), so that the loop indexes them without a bounds
	// check (10 instructions a hit).
	var first *group
	var mask uint64
	if n := w & (1<<lookupDepthShift - 1); n != 0 {
		first, mask = root, n-1
	} else if depth := uint(w >> lookupDepthShift & 0xFF); depth != 0 {
		groups := unsafe.Slice(dir, 1<<depth)[dirIndex(h, depth)]
		first, mask = unsafe.SliceData(groups), uint64(len(groups)-1)
	} else {
		return nil, true
	}
	// probe's loop.
	tag := h2(h)
	g := h1(h) & mask
	for step := uint64(1); step <= mask+1; step++ {
		grp := (*group)(unsafe.Add(unsafe.Pointer(first), g*uint64(unsafe.Sizeof(group{}))))
		ctrl := grp.ctrl.Load()
		for m := matchH2(ctrl, tag); m != 0; m &= m - 1 {
			if e := grp.slots[firstSlot(m)].Load(); e != nil && e.keyIs(id) {
				return e, true
			}
		}
		if matchEmpty(ctrl) != 0 {
			return nil, true
		}
		g = (g + step) & mask
	}
	return nil, false
}

// split replaces sub by two subtables of the same size, one level deeper,
// each taking the entries whose next directory bit is 0 or 1, and doubles
// the directory first if sub already uses all of its bits. sub's groups are
// left as they were, for readers still using them.
func (t *table) split(sub *subtable, seed maphash.Seed) {
	dir := t.subs
	depth := t.depth
	if sub.depth == depth {
		dir = make([]*subtable, 2*len(t.subs))
		for i := range dir {
			dir[i] = t.subs[i>>1]
		}
		depth++
	} else {
		dir = slices.Clone(dir)
	}
	var halves [2]*subtable
	for i := range halves {
		halves[i] = &subtable{depth: sub.depth + 1}
		halves[i].init(len(sub.groups))
	}
	bit := 57 - sub.depth - 1 // the hash bit that tells the halves apart
	entries, hashes := sub.rehash(seed)
	for i, e := range entries {
		h := hashes[i]
		halves[h>>bit&1].insertNew(h, e)
	}
	// sub filled the 1<<(depth-sub.depth) entries from start; the first
	// half of them go to halves[0], the rest to halves[1].
	span := 1 << (depth - sub.depth)
	start := slices.Index(dir, sub)
	for i := range span {
		dir[start+i] = halves[i*2/span]
	}
	t.subs, t.depth = dir, depth
	t.publish()
}
