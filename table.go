package ttlstore

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"math/bits"
	"slices"
	"sync/atomic"
)

// table is one shard's map from id to entry: an open-addressing hash table
// in the manner of Go's own maps (and Abseil's SwissTable), specialised for
// entries that carry their id inside them. Each slot is one pointer, where a
// map[string]*entry slot is a 16-byte key and a pointer, so it costs under
// half the memory (about 14 bytes a document against 35). Callers pass the
// id's hash, which the collection computes once to pick the shard and then
// reuses here.
//
// Slots come in groups of eight with a control word of one byte per slot:
// ctrlEmpty, ctrlDeleted, or the low seven bits of the hash (h2) for a full
// slot, so a lookup compares eight slots' h2 at once and loads an entry only
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
	// change. Nil until the first put.
	view atomic.Pointer[tableView]
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
// in two instead of doubling, so growing never rehashes more than 1024
// entries at once, whatever the size of the shard. (Growing a single
// table of 57k entries took 2.6 ms.)
const defaultMaxGroups = 128

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
	v := t.view.Load()
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
			if e := grp.slots[firstSlot(m)].Load(); e != nil && e.id() == id {
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
	old := sub.put(h, e)
	if old == nil {
		t.n++
	}
	return old
}

// remove deletes e, whose id hashes to h, and reports whether it was there.
func (t *table) remove(h uint64, e *entry) bool {
	if t.subs == nil || !t.sub(h).remove(h, e) {
		return false
	}
	t.n--
	return true
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

type group struct {
	ctrl  atomic.Uint64 // byte i describes slots[i]
	slots [groupSize]atomic.Pointer[entry]
}

const (
	groupSize   = 8
	ctrlEmpty   = 0x80
	ctrlDeleted = 0xFE
	lsbs        = 0x0101010101010101
	msbs        = 0x8080808080808080
	// maxLoad is the share of slots (in eighths) that may be full or
	// deleted before the table grows or is rehashed.
	maxLoad = 7
)

// h1 picks the first group to probe and h2 is the tag kept in the control
// byte. The shard is picked by the low bits of the hash (see shardFor), so
// h1 uses the bits above them and h2 the top seven.
func h1(h uint64) uint64 { return h >> 7 }
func h2(h uint64) uint64 { return h >> 57 }

// matchH2 returns a mask with the high bit set in every byte of ctrl that
// may equal tag: it can report false positives (only next to a true
// match), never miss one, so a match must be confirmed.
func matchH2(ctrl, tag uint64) uint64 {
	v := ctrl ^ (lsbs * tag)
	return (v - lsbs) &^ v & msbs
}

// matchEmpty returns a mask with the high bit set in every empty byte.
func matchEmpty(ctrl uint64) uint64 { return ctrl &^ (ctrl << 6) & msbs }

// matchFree returns a mask with the high bit set in every empty or deleted
// byte (the full ones have it clear).
func matchFree(ctrl uint64) uint64 { return ctrl & msbs }

func firstSlot(mask uint64) int { return bits.TrailingZeros64(mask) >> 3 }

// setCtrl sets the control byte of slot i. Only a writer changes a group,
// so the load and the store need not be one atomic step.
func setCtrl(g *group, i int, c uint64) {
	shift := uint(i) * 8
	g.ctrl.Store(g.ctrl.Load()&^(0xFF<<shift) | c<<shift)
}

// lookup is table.lookup within one subtable.
func (t *subtable) lookup(h uint64, id string) *atomic.Pointer[entry] {
	if t.groups == nil {
		return nil
	}
	mask := uint64(len(t.groups) - 1)
	tag := h2(h)
	g := h1(h) & mask
	for step := uint64(1); ; step++ {
		grp := &t.groups[g]
		ctrl := grp.ctrl.Load()
		for m := matchH2(ctrl, tag); m != 0; m &= m - 1 {
			ref := &grp.slots[firstSlot(m)]
			if e := ref.Load(); e != nil && e.id() == id {
				return ref
			}
		}
		if matchEmpty(ctrl) != 0 {
			return nil
		}
		g = (g + step) & mask
	}
}

// capacity is how many slots may be full or deleted at once.
func (t *subtable) capacity() int { return len(t.groups) * groupSize * maxLoad / 8 }

// init gives the subtable n new empty groups.
func (t *subtable) init(n int) {
	t.groups = make([]group, n)
	for i := range t.groups {
		t.groups[i].ctrl.Store(lsbs * ctrlEmpty)
	}
	t.free = t.capacity()
	t.n = 0
}

// put stores e, whose id hashes to h, and returns the entry it replaced
// under the same id, or nil. It needs a free slot: t.free > 0.
func (t *subtable) put(h uint64, e *entry) *entry {
	id := e.id()
	mask := uint64(len(t.groups) - 1)
	tag := h2(h)
	g := h1(h) & mask
	var ins *group // the first free slot seen, where e goes if id is new
	insAt := 0
	for step := uint64(1); ; step++ {
		grp := &t.groups[g]
		ctrl := grp.ctrl.Load()
		for m := matchH2(ctrl, tag); m != 0; m &= m - 1 {
			ref := &grp.slots[firstSlot(m)]
			if old := ref.Load(); old != nil && old.id() == id {
				ref.Store(e)
				return old
			}
		}
		if ins == nil {
			if m := matchFree(ctrl); m != 0 {
				ins, insAt = grp, firstSlot(m)
			}
		}
		if matchEmpty(ctrl) != 0 {
			break
		}
		g = (g + step) & mask
	}
	if byte(ins.ctrl.Load()>>(insAt*8)) == ctrlEmpty {
		t.free-- // a deleted slot was already counted as used
	}
	// The slot first, then its control byte: a reader that sees the tag
	// finds the entry.
	ins.slots[insAt].Store(e)
	setCtrl(ins, insAt, tag)
	t.n++
	return nil
}

// remove deletes e, whose id hashes to h, and reports whether it was there.
// It finds e by identity, so it never loads another entry.
func (t *subtable) remove(h uint64, e *entry) bool {
	if t.groups == nil {
		return false
	}
	mask := uint64(len(t.groups) - 1)
	tag := h2(h)
	g := h1(h) & mask
	for step := uint64(1); ; step++ {
		grp := &t.groups[g]
		ctrl := grp.ctrl.Load()
		for m := matchH2(ctrl, tag); m != 0; m &= m - 1 {
			i := firstSlot(m)
			if grp.slots[i].Load() != e {
				continue
			}
			grp.slots[i].Store(nil)
			// A probe stops at a group with an empty slot, so if this
			// group has one, no probe goes past it and the slot can be
			// empty again; otherwise it must stay a marker.
			if matchEmpty(ctrl) != 0 {
				setCtrl(grp, i, ctrlEmpty)
				t.free++
			} else {
				setCtrl(grp, i, ctrlDeleted)
			}
			t.n--
			return true
		}
		if matchEmpty(ctrl) != 0 {
			return false
		}
		g = (g + step) & mask
	}
}

// resize makes room for at least one more entry: it doubles the table when
// more than half its capacity is full, and otherwise rebuilds it at the same
// size to clear the deleted markers. Every entry's id is hashed again. The
// new groups are new memory: the old ones stay as they were for readers
// still using them, and the caller publishes the new ones.
func (t *subtable) resize(seed maphash.Seed) {
	n := len(t.groups)
	switch {
	case n == 0:
		n = 1
	case t.n*2 >= t.capacity():
		n *= 2
	}
	entries, hashes := t.rehash(seed)
	t.init(n)
	for i, e := range entries {
		t.insertNew(hashes[i], e)
	}
}

// rehash returns the subtable's entries and the hashes of their ids. It
// hashes them in a loop of its own, where the loads of the entries do not
// wait for each other, so the processor overlaps their cache misses.
func (t *subtable) rehash(seed maphash.Seed) ([]*entry, []uint64) {
	entries := make([]*entry, 0, t.n)
	for gi := range t.groups {
		grp := &t.groups[gi]
		for m := ^matchFree(grp.ctrl.Load()) & msbs; m != 0; m &= m - 1 {
			entries = append(entries, grp.slots[firstSlot(m)].Load())
		}
	}
	hashes := make([]uint64, len(entries))
	for i, e := range entries {
		hashes[i] = maphash.String(seed, e.id())
	}
	return entries, hashes
}

// insertNew stores e, known not to be in the table, which has room and no
// deleted slots and is not yet published.
func (t *subtable) insertNew(h uint64, e *entry) {
	mask := uint64(len(t.groups) - 1)
	g := h1(h) & mask
	for step := uint64(1); ; step++ {
		grp := &t.groups[g]
		if m := matchEmpty(grp.ctrl.Load()); m != 0 {
			i := firstSlot(m)
			grp.slots[i].Store(e)
			setCtrl(grp, i, h2(h))
			t.n++
			t.free--
			return
		}
		g = (g + step) & mask
	}
}

// check verifies the directory (each subtable fills the aligned span of
// entries its depth gives it, and holds only hashes of that span), that the
// readers' view shows each subtable's current groups, each subtable's
// counts, and that every entry is found under its own id, with and without
// the lock, and calls each on every entry. It is part of checkInvariants.
func (t *table) check(seed maphash.Seed, each func(*entry) error) error {
	v := t.view.Load()
	if t.subs == nil {
		if v != nil || t.n != 0 || t.depth != 0 {
			return fmt.Errorf("table: no subtables, but a view, depth %d or n %d", t.depth, t.n)
		}
		return nil
	}
	if len(t.subs) != 1<<t.depth {
		return fmt.Errorf("table: directory of %d entries at depth %d", len(t.subs), t.depth)
	}
	if v == nil || v.depth != t.depth {
		return fmt.Errorf("table: the readers' view is not of depth %d", t.depth)
	}
	n := 0
	for i := 0; i < len(t.subs); {
		sub := t.subs[i]
		if sub.depth > t.depth {
			return fmt.Errorf("table: subtable depth %d, directory depth %d", sub.depth, t.depth)
		}
		span := 1 << (t.depth - sub.depth)
		if i%span != 0 {
			return fmt.Errorf("table: subtable of depth %d starts at directory entry %d", sub.depth, i)
		}
		for j := i; j < i+span; j++ {
			if t.subs[j] != sub {
				return fmt.Errorf("table: directory entry %d breaks the span of entry %d", j, i)
			}
			seen := v.root
			if t.depth != 0 {
				seen = v.dir[j]
			}
			if len(seen) != len(sub.groups) || len(seen) != 0 && &seen[0] != &sub.groups[0] {
				return fmt.Errorf("table: the readers' view of directory entry %d is not its subtable's groups", j)
			}
		}
		err := sub.check(seed, func(e *entry) error {
			h := maphash.String(seed, e.id())
			if t.subs[dirIndex(h, t.depth)] != sub {
				return fmt.Errorf("table: %q is in the wrong subtable", e.id())
			}
			if got, ok := t.find(h, e.id()); got != e || !ok {
				return fmt.Errorf("table: %q is not found without the lock", e.id())
			}
			return each(e)
		})
		if err != nil {
			return err
		}
		n += sub.n
		i += span
	}
	if n != t.n {
		return fmt.Errorf("table: subtables hold %d entries, n is %d", n, t.n)
	}
	return nil
}

// check verifies the subtable's counts and that every entry is found under
// its own id, and calls each on every entry.
func (t *subtable) check(seed maphash.Seed, each func(*entry) error) error {
	full, used := 0, 0
	for gi := range t.groups {
		grp := &t.groups[gi]
		for i := range groupSize {
			c := byte(grp.ctrl.Load() >> (i * 8))
			e := grp.slots[i].Load()
			switch {
			case c == ctrlEmpty || c == ctrlDeleted:
				if e != nil {
					return fmt.Errorf("table: slot %d.%d is free (%#x) but holds %q", gi, i, c, e.id())
				}
				if c == ctrlDeleted {
					used++
				}
			case c&0x80 != 0:
				return fmt.Errorf("table: slot %d.%d has control byte %#x", gi, i, c)
			default:
				h := maphash.String(seed, e.id())
				if uint64(c) != h2(h) {
					return fmt.Errorf("table: %q has tag %#x, want %#x", e.id(), c, h2(h))
				}
				if ref := t.lookup(h, e.id()); ref == nil || ref.Load() != e {
					return fmt.Errorf("table: %q is not found under its own id", e.id())
				}
				if err := each(e); err != nil {
					return err
				}
				full++
				used++
			}
		}
	}
	if full != t.n {
		return fmt.Errorf("table: %d full slots, n is %d", full, t.n)
	}
	if capacity := len(t.groups) * groupSize * maxLoad / 8; t.groups != nil && used+t.free != capacity {
		return fmt.Errorf("table: %d used slots and %d free make %d, want %d", used, t.free, used+t.free, capacity)
	}
	return nil
}
