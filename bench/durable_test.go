package bench

import (
	"errors"
	"testing"
)

// TestDurableAdapters checks, for every durable store at every sync level
// it is measured at, that what Set stores is found, survives Close and
// Open, and survives Compact where there is one.
func TestDurableAdapters(t *testing.T) {
	d := Data(200)
	for _, k := range DurableKinds {
		t.Run(k.Name, func(t *testing.T) {
			for _, sy := range k.Syncs {
				t.Run("sync="+sy.String(), func(t *testing.T) { testDurableAdapter(t, k, sy, d) })
			}
		})
	}
}

func testDurableAdapter(t *testing.T, k DurableKind, sy Sync, d *Dataset) {
	dir := t.TempDir()
	s, err := k.Open(dir, DurableConfig{Sync: sy})
	if err != nil {
		t.Fatal(err)
	}
	// Few writes: each may wait for an fsync.
	n := 20
	for i := range n {
		if err := s.Set(d.IDs[i], d.Docs[i]); err != nil {
			t.Fatal(err)
		}
	}
	checkFound(t, "after Set", s, d.IDs[:n])
	if s.Get("no-such-id") {
		t.Error("Get of an id never stored = true")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = k.Open(dir, DurableConfig{Sync: sy})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}()
	checkFound(t, "after Open", s, d.IDs[:n])
	if err := checkLen(s, n); err != nil {
		t.Error(err)
	}
	err = s.Compact()
	if !k.Compacts {
		if !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("Compact = %v, want ErrUnsupported", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	checkFound(t, "after Compact", s, d.IDs[:n])
}

// TestDurableLoad checks DurableKind.Load, which the 1M workloads build
// their stores with.
func TestDurableLoad(t *testing.T) {
	d := Data(2000)
	for _, k := range DurableKinds {
		t.Run(k.Name, func(t *testing.T) {
			dir := t.TempDir()
			if err := k.Load(dir, d.IDs, d.Docs); err != nil {
				t.Fatal(err)
			}
			s, err := k.Open(dir, DurableConfig{Sync: SyncNever})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			checkFound(t, "after Load", s, d.IDs)
			if err := checkLen(s, d.Len()); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestCompactStall runs the procedure of BenchmarkDurableCompactStall on
// 2000 documents, with SyncNever.
func TestCompactStall(t *testing.T) {
	if testing.Short() {
		t.Skip("buntdb's Shrink sleeps 250 ms")
	}
	d := Data(2000)
	for _, k := range DurableKinds {
		if !k.Compacts {
			continue
		}
		t.Run(k.Name, func(t *testing.T) {
			r, err := compactStall(t.TempDir(), k, SyncNever, d, 4)
			if err != nil {
				t.Fatal(err)
			}
			if r.compact <= 0 || r.write.Count() == 0 || r.idleWrite.Count() == 0 || r.read.Count() == 0 {
				t.Errorf("compaction %v, %d writes during it, %d before, %d reads during it: want some of each",
					r.compact, r.write.Count(), r.idleWrite.Count(), r.read.Count())
			}
		})
	}
}

func checkFound(t *testing.T, when string, s DurableStore, ids []string) {
	t.Helper()
	for _, id := range ids {
		if !s.Get(id) {
			t.Fatalf("%s: Get(%q) = false", when, id)
		}
	}
}
