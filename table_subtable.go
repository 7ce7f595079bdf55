package ttlstore

import (
	"hash/maphash"
	"math/bits"
	"sync/atomic"
	"unsafe"
)

// One subtable of a table (table.go): an open-addressing hash table of
// groups of seven slots, each slot one pointer to an entry, with a control
// word of one byte a slot that a probe matches seven at a time. What it
// promises the table: an entry is found under its id whatever the
// collisions of its hash; a slot is filled before its control byte says
// so; a removed slot becomes empty only where no probe goes past it, and
// is marked deleted otherwise; and resize builds new groups, leaving the
// old ones as they were for readers still on them. Only writers, holding
// the shard's lock, call it.

// group is 64 bytes, one cache line: a probe that matches a slot of it
// loads the slot from the line it loaded the control word from. (Eight
// slots made it 72 bytes, and the slot lay on another line than the
// control word 56 % of the time: half a D1 miss more a read.) Groups come
// in arrays of a power of two of them, which Go allocates 64-byte aligned.
type group struct {
	ctrl  atomic.Uint64 // byte i describes slots[i]; byte 7 describes none and is ignored
	slots [groupSize]atomic.Pointer[entry]
}

// rawCtrl and rawSlot give the words of ctrl and slots[i] to plain loads
// and stores, for groups no reader can see yet (subtable.init and
// insertNew, before the table publishes them). atomic.Uint64 and
// atomic.Pointer hold their value at offset 0, after fields of size 0
// (TestGroupRawWords checks it).
func (g *group) rawCtrl() *uint64 { return (*uint64)(unsafe.Pointer(&g.ctrl)) }

func (g *group) rawSlot(i int) **entry { return (**entry)(unsafe.Pointer(&g.slots[i])) }

const (
	groupSize   = 7
	ctrlEmpty   = 0x80
	ctrlDeleted = 0xFE
	lsbs        = 0x0101010101010101
	msbs        = 0x0080808080808080 // the high bits of the slots' bytes: byte 7 is masked out of every match
	// maxLoad is the share of slots (in eighths) that may be full or
	// deleted before the table grows or is rehashed.
	maxLoad = 7
)

// h1 picks the first group to probe and h2 is the tag kept in the control
// byte. The shard is picked by the low bits of the hash (see shardFor), so
// h1 uses the bits above them and h2 the top seven.
func h1(h uint64) uint64 { return h >> 7 }
func h2(h uint64) uint64 { return h >> 57 }

// matchH2 returns a mask with the high bit set in every slot's byte of ctrl
// that may equal tag: it can report false positives (only next to a true
// match), never miss one, so a match must be confirmed.
func matchH2(ctrl, tag uint64) uint64 {
	v := ctrl ^ (lsbs * tag)
	return (v - lsbs) &^ v & msbs
}

// matchEmpty returns a mask with the high bit set in every empty slot's byte.
func matchEmpty(ctrl uint64) uint64 { return ctrl &^ (ctrl << 6) & msbs }

// matchFree returns a mask with the high bit set in every empty or deleted
// slot's byte (the full ones have it clear).
func matchFree(ctrl uint64) uint64 { return ctrl & msbs }

func firstSlot(mask uint64) int { return bits.TrailingZeros64(mask) >> 3 }

// setCtrl sets the control byte of slot i. Only a writer changes a group,
// so the load and the store need not be one atomic step.
func setCtrl(g *group, i int, c uint64) {
	g.ctrl.Store(withCtrl(g.ctrl.Load(), i, c))
}

// withCtrl returns the control word ctrl with slot i's byte set to c.
func withCtrl(ctrl uint64, i int, c uint64) uint64 {
	shift := uint(i) * 8
	return ctrl&^(0xFF<<shift) | c<<shift
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
			if e := ref.Load(); e != nil && e.key() == id {
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

// init gives the subtable n new empty groups. They are not yet published,
// so plain stores fill them (see group.rawCtrl).
func (t *subtable) init(n int) {
	t.groups = make([]group, n)
	for i := range t.groups {
		*t.groups[i].rawCtrl() = lsbs * ctrlEmpty
	}
	t.free = t.capacity()
	t.n = 0
}

// put stores e, whose id hashes to h, and returns the entry it replaced
// under the same id, or nil. It needs a free slot: t.free > 0.
func (t *subtable) put(h uint64, e *entry) *entry {
	id := e.key()
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
			if old := ref.Load(); old != nil && old.key() == id {
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

// insert stores e, whose id hashes to h and is not in the subtable, in the
// first free slot of its probe. It needs a free slot: t.free > 0.
func (t *subtable) insert(h uint64, e *entry) {
	mask := uint64(len(t.groups) - 1)
	g := h1(h) & mask
	for step := uint64(1); ; step++ {
		grp := &t.groups[g]
		ctrl := grp.ctrl.Load()
		if m := matchFree(ctrl); m != 0 {
			i := firstSlot(m)
			if byte(ctrl>>(i*8)) == ctrlEmpty {
				t.free-- // a deleted slot was already counted as used
			}
			// The slot first, then its control byte, as in put.
			grp.slots[i].Store(e)
			setCtrl(grp, i, h2(h))
			t.n++
			return
		}
		g = (g + step) & mask
	}
}

// remove deletes e, whose id hashes to h, and reports whether it was there.
// It finds e by identity, so it never loads another entry.
func (t *subtable) remove(h uint64, e *entry) bool {
	grp, i := t.locate(h, e)
	if grp == nil {
		return false
	}
	t.removeAt(grp, i)
	return true
}

// locate returns the group and the slot in it that hold e, whose id hashes
// to h, or a nil group when e is not there. It finds e by identity, as
// remove does: a probe that loads no entry, so no key's bytes either.
func (t *subtable) locate(h uint64, e *entry) (*group, int) {
	if t.groups == nil {
		return nil, 0
	}
	mask := uint64(len(t.groups) - 1)
	tag := h2(h)
	g := h1(h) & mask
	for step := uint64(1); ; step++ {
		grp := &t.groups[g]
		ctrl := grp.ctrl.Load()
		for m := matchH2(ctrl, tag); m != 0; m &= m - 1 {
			if i := firstSlot(m); grp.slots[i].Load() == e {
				return grp, i
			}
		}
		if matchEmpty(ctrl) != 0 {
			return nil, 0
		}
		g = (g + step) & mask
	}
}

// removeAt empties slot i of grp, one of t's groups, which holds an entry.
func (t *subtable) removeAt(grp *group, i int) {
	grp.slots[i].Store(nil)
	// A probe stops at a group with an empty slot, so if this group has
	// one, no probe goes past it and the slot can be empty again;
	// otherwise it must stay a marker.
	if matchEmpty(grp.ctrl.Load()) != 0 {
		setCtrl(grp, i, ctrlEmpty)
		t.free++
	} else {
		setCtrl(grp, i, ctrlDeleted)
	}
	t.n--
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
		hashes[i] = maphash.String(seed, e.key())
	}
	return entries, hashes
}

// insertNew stores e, known not to be in the table, which has room and no
// deleted slots and is not yet published: no reader can see its groups, so
// it fills them with plain stores (see group.rawCtrl), which the processor
// need not finish before going on to the next entry's group, where an
// atomic store waits for its line. The table's publication, an atomic
// store, orders them before any reader's loads.
func (t *subtable) insertNew(h uint64, e *entry) {
	mask := uint64(len(t.groups) - 1)
	g := h1(h) & mask
	for step := uint64(1); ; step++ {
		grp := &t.groups[g]
		ctrl := grp.rawCtrl()
		if m := matchEmpty(*ctrl); m != 0 {
			i := firstSlot(m)
			*grp.rawSlot(i) = e
			*ctrl = withCtrl(*ctrl, i, h2(h))
			t.n++
			t.free--
			return
		}
		g = (g + step) & mask
	}
}
