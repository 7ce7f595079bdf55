package bench

import (
	"testing"
)

// BenchmarkDurableReadHit is BenchmarkReadHit (100k documents, one
// goroutine) on ttlstore made by New (store=ttlstore) and by Open
// (store=ttlstore-durable: the documents loaded, the collection closed and
// opened again with the default SyncAlways, so they were recovered from its
// files). Reads never touch the disk: the two should be equal within noise.
func BenchmarkDurableReadHit(b *testing.B) {
	benchDurableReads(b, func(b *testing.B, s getter, order []string) {
		benchReads(b, s, order, true)
	})
}

// BenchmarkDurableReadHitParallel is BenchmarkDurableReadHit with
// b.RunParallel, as BenchmarkReadHitParallel.
func BenchmarkDurableReadHitParallel(b *testing.B) {
	benchDurableReads(b, benchParallelReads)
}

func benchDurableReads(b *testing.B, run func(*testing.B, getter, []string)) {
	order := readOrder(n100k)
	b.Run("store=ttlstore", func(b *testing.B) {
		s, _ := filled(KindNamed("ttlstore"), n100k, Config{})
		run(b, s, order)
	})
	dropFixture()
	// The durable collection lives in the parent's directory, for every
	// run of the sub-benchmark.
	dir := b.TempDir()
	var s DurableStore
	defer func() {
		if s != nil {
			if err := s.Close(); err != nil {
				b.Error(err)
			}
		}
	}()
	b.Run("store=ttlstore-durable", func(b *testing.B) {
		if s == nil {
			k := DurableKindNamed("ttlstore")
			d := Data(n100k)
			if err := k.Load(dir, d.IDs, d.Docs); err != nil {
				b.Fatal(err)
			}
			var err error
			if s, err = k.Open(dir, DurableConfig{Sync: SyncAlways}); err != nil {
				b.Fatal(err)
			}
		}
		run(b, s, order)
	})
}
