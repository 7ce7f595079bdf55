package bench

import (
	"errors"
	"testing"
	"time"
	"unsafe"
)

// These tests keep the harness honest: a workload that measured an adapter
// which stores nothing, or a store whose "expired" documents are still
// visible, would report numbers that mean nothing.

func TestAdaptersStoreAndGet(t *testing.T) {
	d := Data(1000)
	for _, k := range Kinds {
		t.Run(k.Name, func(t *testing.T) {
			for _, cfg := range []Config{{}, {Expiry: true}} {
				s := k.New(cfg)
				Fill(s, d.IDs, d.Docs)
				for i, id := range d.IDs {
					if !s.Get(id) {
						t.Fatalf("%+v: Get(%q) after Set = false", cfg, d.IDs[i])
					}
				}
				if s.Get("no-such-id") {
					t.Errorf("%+v: Get of an id never stored = true", cfg)
				}
				// Overwrite with the other value: still there, still one.
				Fill(s, d.IDs, d.Alt)
				if !s.Get(d.IDs[0]) {
					t.Errorf("%+v: Get after overwrite = false", cfg)
				}
				if got := s.(Iterator).Iterate(); got != d.Len() {
					t.Errorf("%+v: Iterate visited %d, want %d", cfg, got, d.Len())
				}
				s.Close()
			}
		})
	}
}

func TestTTLStoreKeepsTheJSON(t *testing.T) {
	d := Data(10)
	s := KindNamed("ttlstore").New(Config{}).(*TTLStore)
	defer s.Close()
	Fill(s, d.IDs, d.Docs)
	doc, err := s.C.Read(d.IDs[3])
	if err != nil {
		t.Fatal(err)
	}
	if doc.ID() != d.IDs[3] {
		t.Errorf("ID = %q, want %q", doc.ID(), d.IDs[3])
	}
	if exp, ok := doc.ExpiresAt(); !ok || time.Until(exp) < TTL-2*time.Second {
		t.Errorf("ExpiresAt = %v, %v; want about an hour from now", exp, ok)
	}
}

func TestFillExpired(t *testing.T) {
	d := Data(1000)
	const nExpired = 600
	for _, k := range Kinds {
		t.Run(k.Name, func(t *testing.T) {
			s := k.New(Config{Expiry: true})
			defer s.Close()
			err := FillExpired(s, d.IDs, d.Docs, nExpired)
			if !k.Expires {
				if !errors.Is(err, ErrNoExpiry) {
					t.Fatalf("FillExpired = %v, want ErrNoExpiry", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, id := range d.IDs {
				if got, want := s.Get(id), i >= nExpired; got != want {
					t.Fatalf("Get(%q) = %v, want %v (the first %d are expired)", id, got, want, nExpired)
				}
			}
			if got := s.(Iterator).Iterate(); got != d.Len()-nExpired {
				t.Errorf("Iterate visited %d, want the %d live documents", got, d.Len()-nExpired)
			}
			if sw, ok := s.(Sweeper); ok {
				sw.Sweep()
				for _, id := range d.IDs[nExpired:] {
					if !s.Get(id) {
						t.Fatalf("Get(%q) after Sweep = false for a live document", id)
					}
				}
			}
		})
	}
}

// TestTTLStoreExpiredRead checks the premise of BenchmarkReadExpired and the
// sweep workloads: ttlstore reports an expired document not found before any
// sweep, keeps it in memory until Sweep, and Sweep removes exactly the expired
// ones.
func TestTTLStoreExpiredRead(t *testing.T) {
	d := Data(1000)
	s := KindNamed("ttlstore").New(Config{Expiry: true}).(*TTLStore)
	defer s.Close()
	if err := FillExpired(s, d.IDs, d.Docs, 400); err != nil {
		t.Fatal(err)
	}
	if s.Get(d.IDs[0]) {
		t.Fatal("an expired document was found before any sweep")
	}
	if st := s.C.Stats(); st.Live != 600 || st.Expired != 400 || st.Swept != 0 {
		t.Fatalf("Stats before Sweep = %+v, want 600 live, 400 expired, 0 swept", st)
	}
	if n := s.C.Sweep(); n != 400 {
		t.Fatalf("Sweep removed %d, want 400", n)
	}
	if st := s.C.Stats(); st.Live != 600 || st.Expired != 0 || st.Swept != 400 {
		t.Fatalf("Stats after Sweep = %+v", st)
	}
}

// TestSweepersRemove checks that each Sweeper's sweep actually removes the
// expired documents (ttlstore by Stats; the peers by their Iterate and Get
// agreeing afterwards).
func TestSweepersRemove(t *testing.T) {
	d := Data(1000)
	for _, k := range Kinds {
		s := k.New(Config{Expiry: true})
		sw, ok := s.(Sweeper)
		if !ok {
			s.Close()
			continue
		}
		t.Run(k.Name, func(t *testing.T) {
			defer s.Close()
			if err := FillExpired(s, d.IDs, d.Docs, d.Len()); err != nil {
				t.Fatal(err)
			}
			sw.Sweep()
			if got := s.(Iterator).Iterate(); got != 0 {
				t.Errorf("Iterate visited %d after the sweep, want 0", got)
			}
			if ts, ok := s.(*TTLStore); ok {
				if st := ts.C.Stats(); st.Expired != 0 || st.Swept != uint64(d.Len()) {
					t.Errorf("Stats after Sweep = %+v", st)
				}
			}
		})
	}
}

// TestAscendingOrder checks the premise of the ascending read workloads:
// every id comes after the one before it, but at the ends of the passes,
// where the walk starts again from the smallest; every pass but the last,
// cut short, reads every id; and each id is a copy of the data set's.
func TestAscendingOrder(t *testing.T) {
	d := Data(1000)
	order := AscendingOrder(d.IDs)
	if order[0] != d.IDs[0] {
		t.Fatalf("the order starts at %q, want the smallest id %q", order[0], d.IDs[0])
	}
	passes := 1
	for i := 1; i < len(order); i++ {
		if order[i] <= order[i-1] {
			if order[i] != d.IDs[0] || order[i-1] != d.IDs[d.Len()-1] {
				t.Fatalf("order[%d] = %q after %q", i, order[i], order[i-1])
			}
			passes++
		}
	}
	if want := len(order) / d.Len(); passes != want+1 {
		t.Errorf("%d passes, want %d and a part", passes, want)
	}
	if unsafe.StringData(order[5]) == unsafe.StringData(d.IDs[5]) {
		t.Error("the order holds the data set's own strings, not copies")
	}
}

func TestHistogram(t *testing.T) {
	for v := uint64(0); v < 1<<20; v += 1 + v/7 {
		lo, hi := bucketRange(bucketOf(v))
		if v < lo || v > hi {
			t.Fatalf("%d is in bucket %d = [%d, %d]", v, bucketOf(v), lo, hi)
		}
		if hi-lo > v/16 && v >= 64 {
			t.Fatalf("bucket of %d is [%d, %d], wider than 1/16", v, lo, hi)
		}
	}
	var h Histogram
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	check := func(name string, got, want time.Duration) {
		if got < want*95/100 || got > want*105/100 {
			t.Errorf("%s = %v, want about %v", name, got, want)
		}
	}
	check("p50", h.Quantile(0.5), 500*time.Microsecond)
	check("p99", h.Quantile(0.99), 990*time.Microsecond)
	if h.Max() != time.Millisecond || h.Count() != 1000 {
		t.Errorf("Max, Count = %v, %d", h.Max(), h.Count())
	}
	// Merged halves give the whole.
	var odd, even Histogram
	for i := 1; i <= 1000; i++ {
		if i%2 == 1 {
			odd.Record(time.Duration(i) * time.Microsecond)
		} else {
			even.Record(time.Duration(i) * time.Microsecond)
		}
	}
	odd.Merge(&even)
	if odd != h {
		t.Errorf("Merge of the odd and even halves differs from the whole")
	}
}
