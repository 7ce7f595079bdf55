package ttlstore

import (
	"fmt"
	"hash/maphash"
	"math/bits"
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
// It is guarded by its shard's mutex, like the rest of the shard.
type table struct {
	groups []group
	mask   uint64 // len(groups) - 1
	n      int    // full slots
	free   int    // slots that may still be filled before the table must grow
}

type group struct {
	ctrl  uint64 // byte i describes slots[i]
	slots [groupSize]*entry
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

func setCtrl(g *group, i int, c uint64) {
	shift := uint(i) * 8
	g.ctrl = g.ctrl&^(0xFF<<shift) | c<<shift
}

// len is the number of entries.
func (t *table) len() int { return t.n }

// get returns the entry with the given id, whose hash is h, or nil.
func (t *table) get(h uint64, id string) *entry {
	if t.groups == nil {
		return nil
	}
	tag := h2(h)
	g := h1(h) & t.mask
	for step := uint64(1); ; step++ {
		grp := &t.groups[g]
		for m := matchH2(grp.ctrl, tag); m != 0; m &= m - 1 {
			if e := grp.slots[firstSlot(m)]; e != nil && e.id() == id {
				return e
			}
		}
		if matchEmpty(grp.ctrl) != 0 {
			return nil
		}
		g = (g + step) & t.mask
	}
}

// put stores e, whose id hashes to h, and returns the entry it replaced
// under the same id, or nil.
func (t *table) put(h uint64, e *entry, seed maphash.Seed) *entry {
	if t.free == 0 {
		t.resize(seed)
	}
	id := e.id()
	tag := h2(h)
	g := h1(h) & t.mask
	var ins *group // the first free slot seen, where e goes if id is new
	insAt := 0
	for step := uint64(1); ; step++ {
		grp := &t.groups[g]
		for m := matchH2(grp.ctrl, tag); m != 0; m &= m - 1 {
			i := firstSlot(m)
			if old := grp.slots[i]; old != nil && old.id() == id {
				grp.slots[i] = e
				return old
			}
		}
		if ins == nil {
			if m := matchFree(grp.ctrl); m != 0 {
				ins, insAt = grp, firstSlot(m)
			}
		}
		if matchEmpty(grp.ctrl) != 0 {
			break
		}
		g = (g + step) & t.mask
	}
	if byte(ins.ctrl>>(insAt*8)) == ctrlEmpty {
		t.free-- // a deleted slot was already counted as used
	}
	setCtrl(ins, insAt, tag)
	ins.slots[insAt] = e
	t.n++
	return nil
}

// remove deletes e, whose id hashes to h, and reports whether it was there.
// It finds e by identity, so it never loads another entry.
func (t *table) remove(h uint64, e *entry) bool {
	if t.groups == nil {
		return false
	}
	tag := h2(h)
	g := h1(h) & t.mask
	for step := uint64(1); ; step++ {
		grp := &t.groups[g]
		for m := matchH2(grp.ctrl, tag); m != 0; m &= m - 1 {
			i := firstSlot(m)
			if grp.slots[i] != e {
				continue
			}
			grp.slots[i] = nil
			// A probe stops at a group with an empty slot, so if this
			// group has one, no probe goes past it and the slot can be
			// empty again; otherwise it must stay a marker.
			if matchEmpty(grp.ctrl) != 0 {
				setCtrl(grp, i, ctrlEmpty)
				t.free++
			} else {
				setCtrl(grp, i, ctrlDeleted)
			}
			t.n--
			return true
		}
		if matchEmpty(grp.ctrl) != 0 {
			return false
		}
		g = (g + step) & t.mask
	}
}

// resize makes room for at least one more entry: it doubles the table when
// more than half its capacity is full, and otherwise rebuilds it at the same
// size to clear the deleted markers. Every entry's id is hashed again.
func (t *table) resize(seed maphash.Seed) {
	n := max(1, len(t.groups))
	if t.n*2 >= n*groupSize*maxLoad/8 {
		n *= 2
	}
	old := t.groups
	t.groups = make([]group, n)
	t.mask = uint64(n - 1)
	for i := range t.groups {
		t.groups[i].ctrl = lsbs * ctrlEmpty
	}
	t.free = n * groupSize * maxLoad / 8
	t.n = 0
	for gi := range old {
		grp := &old[gi]
		for m := ^matchFree(grp.ctrl) & msbs; m != 0; m &= m - 1 {
			e := grp.slots[firstSlot(m)]
			t.insertNew(maphash.String(seed, e.id()), e)
		}
	}
}

// insertNew stores e, known not to be in the table, which has room and no
// deleted slots.
func (t *table) insertNew(h uint64, e *entry) {
	g := h1(h) & t.mask
	for step := uint64(1); ; step++ {
		grp := &t.groups[g]
		if m := matchEmpty(grp.ctrl); m != 0 {
			i := firstSlot(m)
			setCtrl(grp, i, h2(h))
			grp.slots[i] = e
			t.n++
			t.free--
			return
		}
		g = (g + step) & t.mask
	}
}

// check verifies the table's counts and that every entry is found under its
// own id; it is part of checkInvariants.
func (t *table) check(seed maphash.Seed, each func(*entry) error) error {
	full, used := 0, 0
	for gi := range t.groups {
		grp := &t.groups[gi]
		for i := range groupSize {
			c := byte(grp.ctrl >> (i * 8))
			e := grp.slots[i]
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
				if t.get(h, e.id()) != e {
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
