package ttlstore

import (
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// testEntry makes an entry whose JSON is {"id":"<id>"}.
func testEntry(id string) *entry {
	src := `{"id":"` + id + `"}`
	e, data := newEntry(len(src))
	copy(data, src)
	*e = entry{n: uint32(len(src)), idOff: 7, idLen: uint32(len(id))}
	return e
}

// TestTableAgainstMap runs random puts (and inserts of new ids),
// overwrites, removes and lookups on a table and a Go map side by side,
// from a pool of ids small enough that they collide, overwrite and leave deleted slots, and big enough that the
// table grows and rehashes in place.
func TestTableAgainstMap(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		seed := maphash.MakeSeed()
		tb := table{maxGroups: rapid.SampledFrom([]int{1, 2, 4, defaultMaxGroups}).Draw(rt, "maxGroups")}
		if rapid.Bool().Draw(rt, "readers") {
			tb.readers = &tableLookup{}
		}
		want := map[string]*entry{}
		pool := rapid.IntRange(1, 300).Draw(rt, "pool")
		id := func(label string) string {
			return fmt.Sprintf("k%d", rapid.IntRange(0, pool-1).Draw(rt, label))
		}
		for op := range rapid.IntRange(1, 2000).Draw(rt, "ops") {
			k := id("id")
			h := maphash.String(seed, k)
			switch rapid.IntRange(0, 2).Draw(rt, "op") {
			case 0:
				e := testEntry(k)
				if want[k] == nil && rapid.Bool().Draw(rt, "insert") {
					tb.insert(h, e, seed) // the id is new: as put
					want[k] = e
					break
				}
				old := tb.put(h, e, seed)
				if old != want[k] {
					rt.Fatalf("put(%q) replaced %p, want %p", k, old, want[k])
				}
				want[k] = e
			case 1:
				e := want[k]
				if e == nil {
					e = testEntry(k) // a stranger with the same id
				}
				if rapid.Bool().Draw(rt, "locate") {
					// As an eviction removes: locate, then removeAt.
					at, ok := tb.locate(h, e)
					if ok != (want[k] != nil) {
						rt.Fatalf("locate(%q) = %v", k, ok)
					}
					if ok {
						tb.removeAt(at)
					}
				} else if got := tb.remove(h, e); got != (want[k] != nil) {
					rt.Fatalf("remove(%q) = %v", k, got)
				}
				delete(want, k)
			case 2:
				if got := tb.get(h, k); got != want[k] {
					rt.Fatalf("get(%q) = %p, want %p", k, got, want[k])
				}
				if got, ok := tb.find(h, k); got != want[k] || !ok {
					rt.Fatalf("find(%q) = %p, %v, want %p", k, got, ok, want[k])
				}
				if tb.readers == nil {
					break
				}
				if got, ok := tb.readers.find(h, k); got != want[k] || !ok {
					rt.Fatalf("readers' find(%q) = %p, %v, want %p", k, got, ok, want[k])
				}
			}
			if op%50 == 0 {
				if err := tb.check(seed, func(*entry) error { return nil }); err != nil {
					rt.Fatal(err)
				}
			}
		}
		if err := tb.check(seed, func(*entry) error { return nil }); err != nil {
			rt.Fatal(err)
		}
		if tb.len() != len(want) {
			rt.Fatalf("len %d, want %d", tb.len(), len(want))
		}
		for k, e := range want {
			if got := tb.get(maphash.String(seed, k), k); got != e {
				rt.Fatalf("get(%q) = %p, want %p", k, got, e)
			}
		}
	})
}

// A remove by identity leaves a different entry with the same id alone.
func TestTableRemoveIsByIdentity(t *testing.T) {
	seed := maphash.MakeSeed()
	var tb table
	a, b := testEntry("same"), testEntry("same")
	h := maphash.String(seed, "same")
	require.Nil(t, tb.put(h, a, seed))
	require.False(t, tb.remove(h, b))
	_, ok := tb.locate(h, b)
	require.False(t, ok)
	require.Equal(t, a, tb.get(h, "same"))
	require.True(t, tb.remove(h, a))
	require.Nil(t, tb.get(h, "same"))
	require.Equal(t, 0, tb.len())
}

// matchH2 finds every byte equal to the tag (false positives allowed only
// above a true match), and never one that is empty or deleted.
func TestMatchH2(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var ctrl uint64
		bytes := make([]uint64, groupSize)
		for i := range bytes {
			bytes[i] = rapid.SampledFrom([]uint64{ctrlEmpty, ctrlDeleted, 0, 1, 0x7F, 0x55, 0x2A}).Draw(rt, "ctrl")
			ctrl |= bytes[i] << (8 * i)
		}
		tag := rapid.SampledFrom([]uint64{0, 1, 0x7F, 0x55, 0x2A}).Draw(rt, "tag")
		m := matchH2(ctrl, tag)
		firstMatch := groupSize
		for i, b := range bytes {
			hit := m>>(8*i)&0x80 != 0
			switch {
			case b == tag && !hit:
				rt.Fatalf("byte %d = %#x missed", i, b)
			case hit && b&0x80 != 0:
				rt.Fatalf("byte %d = %#x (free) matched", i, b)
			case hit && b != tag && i < firstMatch:
				rt.Fatalf("false positive at byte %d below any true match", i)
			}
			if b == tag && i < firstMatch {
				firstMatch = i
			}
		}
		empty, free := matchEmpty(ctrl), matchFree(ctrl)
		for i, b := range bytes {
			if got := empty>>(8*i)&0x80 != 0; got != (b == ctrlEmpty) {
				rt.Fatalf("matchEmpty byte %d = %#x: %v", i, b, got)
			}
			if got := free>>(8*i)&0x80 != 0; got != (b&0x80 != 0) {
				rt.Fatalf("matchFree byte %d = %#x: %v", i, b, got)
			}
		}
	})
}

// TestGroupRawWords checks what rawCtrl and rawSlot assume of sync/atomic:
// that a plain store through them is what Load returns, and a Store what
// they read, so that insertNew's plain stores are the words readers load.
func TestGroupRawWords(t *testing.T) {
	var g group
	e, f := testEntry("a"), testEntry("b")
	for i := range groupSize {
		*g.rawSlot(i) = e
		require.Same(t, e, g.slots[i].Load(), "slot %d", i)
		g.slots[i].Store(f)
		require.Same(t, f, *g.rawSlot(i), "slot %d", i)
	}
	*g.rawCtrl() = 0x0102030405060708
	require.Equal(t, uint64(0x0102030405060708), g.ctrl.Load())
	g.ctrl.Store(lsbs * ctrlEmpty)
	require.Equal(t, uint64(lsbs*ctrlEmpty), *g.rawCtrl())
}

// With one group per subtable the table splits again and again; every entry
// stays findable, and the directory stays well formed.
func TestTableSplits(t *testing.T) {
	seed := maphash.MakeSeed()
	tb := table{maxGroups: 1}
	var es []*entry
	for i := range 2000 {
		e := testEntry(fmt.Sprintf("id-%d", i))
		es = append(es, e)
		require.Nil(t, tb.put(maphash.String(seed, e.key()), e, seed))
	}
	require.GreaterOrEqual(t, tb.depth, uint(8), "2000 entries in subtables of 8 slots")
	require.NoError(t, tb.check(seed, func(*entry) error { return nil }))
	for _, e := range es {
		h := maphash.String(seed, e.key())
		require.Equal(t, e, tb.get(h, e.key()))
		require.True(t, tb.remove(h, e))
	}
	require.Equal(t, 0, tb.len())
	require.NoError(t, tb.check(seed, func(*entry) error { return nil }))
}

// TestTableFindDuringWrites reads without the lock while a writer, holding
// it, inserts, replaces and removes entries in a table that grows, splits
// and rehashes all the while (subtables of 1, 2 or 256 groups). An id that is
// in the table throughout must always be found, as one of the entries stored
// under it; an id never stored must never be. Under -race it also checks
// that readers and the writer share memory only through atomics.
func TestTableFindDuringWrites(t *testing.T) {
	for _, maxGroups := range []int{1, 2, defaultMaxGroups} {
		t.Run(fmt.Sprint("maxGroups=", maxGroups), func(t *testing.T) {
			seed := maphash.MakeSeed()
			tb := table{maxGroups: maxGroups}
			var mu sync.Mutex
			// The stable ids, each with every entry ever stored under it.
			const stable = 64
			versions := make([][]*entry, stable)
			hashes := make([]uint64, stable)
			for i := range stable {
				e := testEntry(fmt.Sprintf("stable-%d", i))
				hashes[i] = maphash.String(seed, e.key())
				versions[i] = []*entry{e}
				tb.put(hashes[i], e, seed)
			}
			const rounds = 5000
			var stop atomic.Bool
			var wg sync.WaitGroup
			var inconclusive atomic.Int64
			for r := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := r; !stop.Load(); i++ {
						k := i % stable
						e, ok := tb.find(hashes[k], versions[k][0].key())
						if !ok {
							inconclusive.Add(1)
							continue
						}
						if e == nil {
							t.Errorf("find(%q) = nil, but it was in the table throughout", versions[k][0].key())
							return
						}
						if e.key() != versions[k][0].key() {
							t.Errorf("find(%q) = an entry of %q", versions[k][0].key(), e.key())
							return
						}
						if e, _ := tb.find(maphash.String(seed, "never"), "never"); e != nil {
							t.Errorf("find(never) = %q", e.key())
							return
						}
					}
				}()
			}
			// The writer: churn of other ids (so the table grows, splits
			// and leaves deleted slots), and replacements of the stable
			// ones. versions is only appended to, and only the first
			// element is read by the readers, so the writer may grow it.
			var churn []*entry
			for i := range rounds {
				mu.Lock()
				e := testEntry(fmt.Sprintf("churn-%d", i))
				tb.put(maphash.String(seed, e.key()), e, seed)
				churn = append(churn, e)
				if i%3 == 0 && len(churn) > 100 {
					old := churn[0]
					churn = churn[1:]
					tb.remove(maphash.String(seed, old.key()), old)
				}
				if i%7 == 0 {
					k := i % stable
					e := testEntry(versions[k][0].key())
					tb.put(hashes[k], e, seed)
				}
				mu.Unlock()
			}
			stop.Store(true)
			wg.Wait()
			require.NoError(t, tb.check(seed, func(*entry) error { return nil }))
			t.Logf("depth %d, %d entries, %d inconclusive finds", tb.depth, tb.len(), inconclusive.Load())
		})
	}
}

// The zero table is empty, and every method works on it.
func TestTableZero(t *testing.T) {
	seed := maphash.MakeSeed()
	var tb table
	h := maphash.String(seed, "a")
	require.Equal(t, 0, tb.len())
	require.Nil(t, tb.get(h, "a"))
	require.Nil(t, tb.lookup(h, "a"))
	e, ok := tb.find(h, "a")
	require.Nil(t, e)
	require.True(t, ok)
	require.False(t, tb.remove(h, testEntry("a")))
	require.NoError(t, tb.check(seed, func(*entry) error { return nil }))
}

// Storing through the slot lookup returns replaces the id's entry in place:
// the table counts it once, and get, find and check see the new entry.
func TestTableLookupReplacesInPlace(t *testing.T) {
	seed := maphash.MakeSeed()
	var tb table
	for i := range 100 {
		e := testEntry(fmt.Sprint("other-", i))
		tb.put(maphash.String(seed, e.key()), e, seed)
	}
	h := maphash.String(seed, "a")
	require.Nil(t, tb.lookup(h, "a"), "not stored yet")
	a, b := testEntry("a"), testEntry("a")
	require.Nil(t, tb.put(h, a, seed))
	ref := tb.lookup(h, "a")
	require.NotNil(t, ref)
	require.Equal(t, a, ref.Load())
	ref.Store(b)
	require.Equal(t, 101, tb.len())
	require.Equal(t, b, tb.get(h, "a"))
	got, ok := tb.find(h, "a")
	require.True(t, ok)
	require.Equal(t, b, got)
	require.False(t, tb.remove(h, a), "a was replaced")
	require.NoError(t, tb.check(seed, func(*entry) error { return nil }))
}

// collidingIDs returns n ids whose hashes under seed share the bits that
// pick the first group to probe in a subtable of up to 128 groups (h1's low
// seven) and the tag (h2): in a table of one subtable, every probe for
// them starts at the same group and every slot they fill matches every one
// of their tags.
func collidingIDs(seed maphash.Seed, n int) []string {
	const mask = 0x7F<<57 | 0x7F<<7 // h2, and h1's low seven bits
	var ids []string
	var want uint64
	for i := 0; len(ids) < n; i++ {
		id := fmt.Sprint("c", i)
		h := maphash.String(seed, id) & mask
		if len(ids) == 0 {
			want = h
		}
		if h == want {
			ids = append(ids, id)
		}
	}
	return ids
}

// Ids whose hashes collide in the first group and the tag are told apart by
// their ids (a control byte is only a hint), spill over into the groups the
// probe sequence visits next, and stay reachable past the deleted markers
// that removing some of them leaves in full groups.
func TestTableCollidingHashes(t *testing.T) {
	if raceRepeat(t) {
		t.Skip("one goroutine: a repeat under -race finds nothing the first run did not (see raceRepeat)")
	}
	seed := maphash.MakeSeed()
	ids := collidingIDs(seed, 24) // the last 6 are never stored
	var tb table
	es := map[string]*entry{}
	for _, id := range ids[:18] {
		es[id] = testEntry(id)
		require.Nil(t, tb.put(maphash.String(seed, id), es[id], seed))
	}
	require.Equal(t, uint(0), tb.depth, "one subtable: the collisions are all in it")
	require.Greater(t, len(tb.subs[0].groups), 1, "more than a group's worth of collisions")
	for i, id := range ids[:18] {
		if i%3 == 0 {
			require.True(t, tb.remove(maphash.String(seed, id), es[id]))
			delete(es, id)
		}
	}
	deleted := 0
	for gi := range tb.subs[0].groups {
		for i := range groupSize {
			if byte(tb.subs[0].groups[gi].ctrl.Load()>>(i*8)) == ctrlDeleted {
				deleted++
			}
		}
	}
	require.NotZero(t, deleted, "removals from full groups leave deleted markers")
	for _, id := range ids {
		h := maphash.String(seed, id)
		require.Equal(t, es[id], tb.get(h, id), id)
		got, ok := tb.find(h, id)
		require.True(t, ok, id)
		require.Equal(t, es[id], got, id)
	}
	require.Equal(t, len(es), tb.len())
	require.NoError(t, tb.check(seed, func(*entry) error { return nil }))
}

// probe concludes at the first group with an empty slot; a probe that goes
// round every group without finding one (only possible while writers keep
// filling groups behind it) gives up with ok false rather than say the id
// is absent, unless it found the id on the way.
func TestProbeGivesUp(t *testing.T) {
	seed := maphash.MakeSeed()
	present := testEntry("present")
	hp := maphash.String(seed, "present")
	// groups makes n groups whose control bytes are all c, but for
	// present's slot when withPresent.
	groups := func(n int, c uint64, withPresent bool) []group {
		gs := make([]group, n)
		for i := range gs {
			gs[i].ctrl.Store(lsbs * c)
		}
		if withPresent {
			g := &gs[h1(hp)&uint64(n-1)]
			g.slots[3].Store(present)
			setCtrl(g, 3, h2(hp))
		}
		return gs
	}
	tests := []struct {
		name   string
		groups []group
		id     string
		want   *entry
		wantOK bool
	}{
		{"no groups", nil, "absent", nil, true},
		{"all empty", groups(4, ctrlEmpty, false), "absent", nil, true},
		{"all deleted", groups(4, ctrlDeleted, false), "absent", nil, false},
		{"one group, all deleted", groups(1, ctrlDeleted, false), "absent", nil, false},
		{"all deleted but the id's", groups(4, ctrlDeleted, true), "present", present, true},
		{"the id among empties", groups(4, ctrlEmpty, true), "present", present, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := maphash.String(seed, tt.id)
			got, ok := probe(tt.groups, h, tt.id)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.wantOK, ok)
		})
	}
}

// Growing, rehashing in place and splitting build new groups: the groups
// that a writer replaced, which a reader on the old view may still be
// probing, are never written again, so such a reader sees the table as it
// was before the writer began. (The groups of the subtables a split left
// alone are in both views, and stay the current ones.)
func TestTableGrowLeavesOldGroups(t *testing.T) {
	if raceRepeat(t) {
		t.Skip("one goroutine: a repeat under -race finds nothing the first run did not (see raceRepeat)")
	}
	for _, maxGroups := range []int{1, 4, defaultMaxGroups} {
		t.Run(fmt.Sprint("maxGroups=", maxGroups), func(t *testing.T) {
			seed := maphash.MakeSeed()
			tb := table{maxGroups: maxGroups}
			type groupCopy struct {
				ctrl  uint64
				slots [groupSize]*entry
			}
			groupsOf := func(v *tableView) [][]group {
				if v.depth == 0 {
					return [][]group{v.root}
				}
				return v.dir
			}
			snapshot := func(gs []group) []groupCopy {
				c := make([]groupCopy, len(gs))
				for i := range gs {
					c[i].ctrl = gs[i].ctrl.Load()
					for j := range groupSize {
						c[i].slots[j] = gs[i].slots[j].Load()
					}
				}
				return c
			}
			// Every group slice replaced so far, as it was then.
			type replaced struct {
				gs   []group
				then []groupCopy
			}
			var old []replaced
			var live []*entry
			rehashes := 0
			for i := range 20_000 {
				// Up to 180 entries, then as many removed as put: the
				// table grows, then rehashes in place to clear the
				// deleted markers (and, with small subtables, splits).
				if len(live) >= 180 { // under half of 64 groups' capacity (392)
					e := live[0]
					live = live[1:]
					tb.remove(maphash.String(seed, e.key()), e)
				}
				e := testEntry(fmt.Sprint("id-", i))
				h := maphash.String(seed, e.key())
				v := tb.view.Load()
				var then map[*group][]groupCopy
				// When the put will grow the table: the readers' view
				// before it, and the groups of the full subtable.
				var full []group
				if v != nil && tb.sub(h).free == 0 {
					then = map[*group][]groupCopy{}
					for _, gs := range groupsOf(v) {
						then[&gs[0]] = snapshot(gs)
					}
					full = tb.sub(h).groups
				}
				depth, groups := tb.depth, len(full)
				tb.put(h, e, seed)
				live = append(live, e)
				if now := tb.view.Load(); now != v && v != nil {
					require.NotNil(t, then, "put %d published a view without needing to grow", i)
					current := map[*group]bool{}
					for _, gs := range groupsOf(now) {
						current[&gs[0]] = true
					}
					require.False(t, current[&full[0]], "put %d grew a subtable into the groups readers may be probing", i)
					if tb.depth == depth && len(tb.sub(h).groups) == groups {
						rehashes++ // rehashed in place, or split
					}
					for _, gs := range groupsOf(v) {
						if !current[&gs[0]] {
							old = append(old, replaced{gs, then[&gs[0]]})
						}
					}
				}
				if i%2000 == 0 {
					for k, r := range old {
						require.Equal(t, r.then, snapshot(r.gs), "replaced groups %d changed by put %d or before", k, i)
					}
				}
			}
			for k, r := range old {
				require.Equal(t, r.then, snapshot(r.gs), "replaced groups %d changed", k)
			}
			require.Greater(t, len(old), 5)
			require.NotZero(t, rehashes, "no growth at the same size")
		})
	}
}

// A subtable never has more than maxGroups groups, so growing one never
// rehashes more than maxGroups*groupSize entries at once.
func TestTableSubtablesStayBounded(t *testing.T) {
	if raceRepeat(t) {
		t.Skip("deterministic (fixed seeds), and checked by the first run")
	}
	for _, maxGroups := range []int{1, 2, 16, defaultMaxGroups} {
		t.Run(fmt.Sprint("maxGroups=", maxGroups), func(t *testing.T) {
			seed := maphash.MakeSeed()
			tb := table{maxGroups: maxGroups}
			var es []*entry
			const puts = 8000 // over 2000 left, in subtables of 256 groups too
			for i := range puts {
				e := testEntry(fmt.Sprint("id-", i))
				tb.put(maphash.String(seed, e.key()), e, seed)
				es = append(es, e)
				if i%3 == 2 { // removals too, which leave deleted markers
					tb.remove(maphash.String(seed, es[0].key()), es[0])
					es = es[1:]
				}
				if i%500 == 0 || i == puts-1 {
					for j, sub := range tb.subs {
						require.LessOrEqual(t, len(sub.groups), maxGroups, "subtable at directory entry %d after %d puts", j, i+1)
					}
				}
			}
			require.NoError(t, tb.check(seed, func(*entry) error { return nil }))
		})
	}
}

// A table whose number of entries stays the same while ids come and go
// clears its deleted markers by rehashing at the same size, rather than
// growing: 200 entries take 128 groups, a capacity of 784 slots, under
// four times theirs (a table doubles when it is half full), however many
// ids have come and gone.
func TestTableChurnDoesNotGrow(t *testing.T) {
	seed := maphash.MakeSeed()
	var tb table
	const live = 200
	var es []*entry
	for i := range 50_000 {
		e := testEntry(fmt.Sprint("id-", i))
		tb.put(maphash.String(seed, e.key()), e, seed)
		es = append(es, e)
		if len(es) > live {
			tb.remove(maphash.String(seed, es[0].key()), es[0])
			es = es[1:]
		}
		if i%1000 == 999 {
			require.Equal(t, uint(0), tb.depth, "after %d puts", i+1)
			require.LessOrEqual(t, tb.subs[0].capacity(), 4*live, "after %d puts", i+1)
		}
	}
	require.NoError(t, tb.check(seed, func(*entry) error { return nil }))
}

// check reports each kind of damage it is there to find: a check that
// cannot fail would prove nothing in checkInvariants.
func TestTableCheckCatches(t *testing.T) {
	// fullSlot returns the first full slot of sub.
	fullSlot := func(sub *subtable) (*group, int) {
		for gi := range sub.groups {
			g := &sub.groups[gi]
			if m := ^matchFree(g.ctrl.Load()) & msbs; m != 0 {
				return g, firstSlot(m)
			}
		}
		panic("no full slot")
	}
	tests := []struct {
		name   string
		damage func(tb *table)
		want   string
	}{
		{"count", func(tb *table) { tb.n++ }, "subtables hold"},
		{"subtable count", func(tb *table) { tb.subs[0].n++ }, "full slots"},
		{"free count", func(tb *table) { tb.subs[0].free++ }, "used slots"},
		{"tag", func(tb *table) {
			g, i := fullSlot(tb.subs[0])
			setCtrl(g, i, (ctrlByte(g.ctrl.Load(), i)+1)&0x7F)
		}, "has tag"},
		{"full slot marked empty", func(tb *table) {
			g, i := fullSlot(tb.subs[0])
			setCtrl(g, i, ctrlEmpty)
		}, "is free"},
		{"control byte", func(tb *table) {
			g, i := fullSlot(tb.subs[0])
			setCtrl(g, i, 0x90)
		}, "has control byte"},
		{"stale view", func(tb *table) {
			v := *tb.view.Load()
			v.dir = slices.Clone(v.dir)
			v.dir[0] = slices.Clone(v.dir[0])
			tb.view.Store(&v)
		}, "readers' view"},
		{"subtables swapped", func(tb *table) {
			// The split that made the directory as deep as it is left
			// two subtables of that depth, one directory entry each.
			var full []int
			for i, sub := range tb.subs {
				if sub.depth == tb.depth {
					full = append(full, i)
				}
			}
			i, j := full[0], full[1]
			tb.subs[i], tb.subs[j] = tb.subs[j], tb.subs[i]
			tb.publish()
		}, "in the wrong subtable"},
		{"subtable deeper than the directory", func(tb *table) { tb.subs[0].depth = tb.depth + 1 }, "subtable depth"},
		{"directory size", func(tb *table) { tb.depth++ }, "directory of"},
		{"each", nil, "from each"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seed := maphash.MakeSeed()
			tb := table{maxGroups: 2}
			for i := range 200 {
				e := testEntry(fmt.Sprint("id-", i))
				tb.put(maphash.String(seed, e.key()), e, seed)
			}
			require.NoError(t, tb.check(seed, func(*entry) error { return nil }))
			require.Greater(t, tb.depth, uint(1))
			each := func(*entry) error { return nil }
			if tt.damage == nil {
				each = func(*entry) error { return errors.New("from each") }
			} else {
				tt.damage(&tb)
			}
			err := tb.check(seed, each)
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.want)
		})
	}
}

// ctrlByte is control byte i of ctrl.
func ctrlByte(ctrl uint64, i int) uint64 { return ctrl >> (i * 8) & 0xFF }

// A reader of a tableLookup that a writer is publishing to gives up rather
// than use a root and a number of groups that do not go together; check
// reports a lookup that is not the table's view.
func TestTableLookupPublishing(t *testing.T) {
	seed := maphash.MakeSeed()
	tb := table{readers: &tableLookup{}}
	e := testEntry("a")
	h := maphash.String(seed, "a")
	got, ok := tb.readers.find(h, "a")
	require.True(t, ok, "empty table")
	require.Nil(t, got)
	tb.put(h, e, seed)
	got, ok = tb.readers.find(h, "a")
	require.True(t, ok)
	require.Equal(t, e, got)

	w := tb.readers.word.Load()
	tb.readers.word.Store(w + 1<<lookupSeqShift) // odd: being published
	_, ok = tb.readers.find(h, "a")
	require.False(t, ok, "found while being published")
	require.ErrorContains(t, tb.check(seed, func(*entry) error { return nil }), "being published")
	tb.readers.word.Store(w)

	tb.readers.root.Store(nil)
	require.ErrorContains(t, tb.check(seed, func(*entry) error { return nil }), "root")
	tb.publish()
	require.NoError(t, tb.check(seed, func(*entry) error { return nil }))

	// Split until the table has a directory; the lookup follows it.
	tb.maxGroups = 1
	for i := 0; tb.depth == 0; i++ {
		k := fmt.Sprint("k", i)
		tb.put(maphash.String(seed, k), testEntry(k), seed)
	}
	require.NoError(t, tb.check(seed, func(*entry) error { return nil }))
	got, ok = tb.readers.find(h, "a")
	require.True(t, ok)
	require.Equal(t, e, got)
	tb.readers.dir.Store(nil)
	require.ErrorContains(t, tb.check(seed, func(*entry) error { return nil }), "directory")
}
