package ttlstore_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/ttlstore/ttlstore"
)

// BenchmarkDurableSweep measures a sweep of 1M expired documents (~200
// bytes of JSON each) in a durable collection on the real file system, under
// SyncAlways and SyncNever: ns/doc is the sweep's time per document removed
// (reports included: OnExpire counts them), log-B/doc what the sweep added to
// the log per document. Each run opens a copy of a directory filled once
// (a snapshot of the documents), outside the timer.
func BenchmarkDurableSweep(b *testing.B) {
	const n = 1_000_000
	template := b.TempDir()
	_, docs := benchDocs(n)
	fill, err := ttlstore.Open(template, ttlstore.Options{DefaultTTL: ttlstore.TTL(3600), SweepInterval: ttlstore.ManualSweep, Sync: ttlstore.SyncNever})
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range docs {
		if _, err := fill.Upsert(d); err != nil {
			b.Fatal(err)
		}
	}
	if err := fill.Compact(); err != nil {
		b.Fatal(err)
	}
	if err := fill.Close(); err != nil {
		b.Fatal(err)
	}
	docs = nil

	for _, policy := range []ttlstore.SyncPolicy{ttlstore.SyncAlways, ttlstore.SyncNever} {
		b.Run("expired=1000000/sync="+policy.String(), func(b *testing.B) {
			var elapsed time.Duration
			var logBytes int64
			for range b.N {
				b.StopTimer()
				dir := copyTree(b, template)
				clk := &skewClock{Clock: clock.New()}
				reported := 0
				c, err := ttlstore.Open(dir, ttlstore.Options{DefaultTTL: ttlstore.TTL(3600), Clock: clk,
					SweepInterval: ttlstore.ManualSweep, Sync: policy, OnExpire: func(ttlstore.Document) { reported++ }})
				if err != nil {
					b.Fatal(err)
				}
				clk.Add(2 * time.Hour)
				before := dirSize(b, dir)
				runtime.GC()
				t0 := time.Now()
				b.StartTimer()
				swept := c.Sweep()
				b.StopTimer()
				elapsed += time.Since(t0)
				if swept != n || reported != n {
					b.Fatalf("swept %d, reported %d", swept, reported)
				}
				logBytes += dirSize(b, dir) - before
				if err := c.Close(); err != nil {
					b.Fatal(err)
				}
				os.RemoveAll(dir)
			}
			b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N)/n, "ns/doc")
			b.ReportMetric(float64(logBytes)/float64(b.N)/n, "log-B/doc")
		})
	}
}

// copyTree copies the files of dir into a new temporary directory.
func copyTree(b *testing.B, dir string) string {
	b.Helper()
	dst := b.TempDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return dst
}

// dirSize is the total size of the files of dir.
func dirSize(b *testing.B, dir string) int64 {
	b.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			b.Fatal(err)
		}
		n += info.Size()
	}
	return n
}
