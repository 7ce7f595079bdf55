package ttlstore

import (
	"fmt"
	"hash/maphash"
)

// The table's consistency check, part of checkInvariants: the directory,
// the readers' view, each subtable's counts and control bytes, and that
// every entry is found under its own id, with the lock and without it. It
// reports the first disagreement it finds, and changes nothing.

// check verifies the directory (each subtable fills the aligned span of
// entries its depth gives it, and holds only hashes of that span), that the
// readers' view shows each subtable's current groups, each subtable's
// counts, and that every entry is found under its own id, with and without
// the lock, and calls each on every entry. It is part of checkInvariants.
func (t *table) check(seed maphash.Seed, each func(*entry) error) error {
	v := t.view.Load()
	if l := t.readers; l != nil {
		if err := l.check(v); err != nil {
			return err
		}
	}
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
			h := maphash.String(seed, e.key())
			if t.subs[dirIndex(h, t.depth)] != sub {
				return fmt.Errorf("table: %q is in the wrong subtable", e.key())
			}
			if got, ok := t.find(h, e.key()); got != e || !ok {
				return fmt.Errorf("table: %q is not found without the lock", e.key())
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
					return fmt.Errorf("table: slot %d.%d is free (%#x) but holds %q", gi, i, c, e.key())
				}
				if c == ctrlDeleted {
					used++
				}
			case c&0x80 != 0:
				return fmt.Errorf("table: slot %d.%d has control byte %#x", gi, i, c)
			default:
				h := maphash.String(seed, e.key())
				if uint64(c) != h2(h) {
					return fmt.Errorf("table: %q has tag %#x, want %#x", e.key(), c, h2(h))
				}
				if ref := t.lookup(h, e.key()); ref == nil || ref.Load() != e {
					return fmt.Errorf("table: %q is not found under its own id", e.key())
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

// check verifies that the lookup shows the view v.
func (l *tableLookup) check(v *tableView) error {
	w, root, dir := l.word.Load(), l.root.Load(), l.dir.Load()
	n, depth := int(w&(1<<lookupDepthShift-1)), uint(w>>lookupDepthShift&0xFF)
	switch {
	case w>>lookupSeqShift&1 != 0:
		return fmt.Errorf("table: the lookup is being published")
	case v == nil:
		if n != 0 || depth != 0 || root != nil || dir != nil {
			return fmt.Errorf("table: a lookup of %d groups at depth %d without a view", n, depth)
		}
	case v.depth == 0:
		if n != len(v.root) || depth != 0 || root != &v.root[0] || dir != nil {
			return fmt.Errorf("table: the lookup's root is not the view's")
		}
	default:
		if n != 0 || depth != v.depth || root != nil || dir != &v.dir[0] {
			return fmt.Errorf("table: the lookup's directory is not the view's")
		}
	}
	return nil
}
