package bench

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/maypok86/otter/v2"
	"github.com/ttlstore/ttlstore"
)

// The typed workloads: reading the data set's documents as Go structs. A
// Typed view keeps each document decoded, so that a hit costs a Read, a
// lookup in the view's cache and a copy, not a JSON decode. They compare,
// on 100k documents, ids in random order:
//
//	read=untyped          Collection.Read: the base
//	read=untyped+decode   Read, then Document.Decode into the flat struct: what a typed read costs without the view
//	read=typed-flat       Typed[typedFlat].Read: a struct of strings and numbers, returned by value
//	read=typed-slice      Typed[typedSlice].Read: the same with its tags, a []string, copied on every read
//	read=typed-map        Typed[typedMap].Read: the flat fields with the address as a map[string]string, copied on every read
//	read=otter-flat       otter v2 GetIfPresent of a typedFlat value (a copy of the struct)
//	read=otter-slice      otter v2 GetIfPresent of a typedSlice value (a copy of the struct sharing its slice)
//	read=otter-map        otter v2 GetIfPresent of a typedMap value (a copy of the struct sharing its map)
//
//	BenchmarkTypedReadHit          one goroutine
//	BenchmarkTypedReadHitParallel  GOMAXPROCS goroutines
//	BenchmarkTypedWrite            Upsert of a struct: Collection.Upsert against Typed.Upsert, which also decodes and caches
//
// otter keeps the struct the caller stored, so it never decodes; its slice
// and map are shared by every reader (writing to it would change what the others
// read), which the view does not allow. It is here as the usual alternative
// to a view: a cache of Go structs with expiry, beside (or instead of) the
// collection of JSON.
//
// run.sh does not run them; by hand, five samples with the runs of each
// workload spread over the time it takes:
//
//	go test -c -o /tmp/bench.test . && for i in 1 2 3 4 5; do
//		/tmp/bench.test -test.run '^$' -test.bench 'BenchmarkTyped' -test.count 1; done

// typedFlat is a data set document without its tags: strings and numbers
// only, so that a copy of one shares nothing writable.
type typedFlat struct {
	ID      string `json:"id"`
	TTL     int32  `json:"ttl,omitempty"`
	Name    string `json:"name"`
	Email   string `json:"email"`
	Score   int    `json:"score"`
	Active  bool   `json:"active"`
	Address struct {
		Street string `json:"street"`
		City   string `json:"city"`
		Zip    string `json:"zip"`
	} `json:"address"`
}

// typedSlice is a whole data set document: typedFlat and its tags.
type typedSlice struct {
	typedFlat
	Tags []string `json:"tags"`
}

// typedMap is a data set document without its tags, with its address as a
// map of 3 strings instead of a struct.
type typedMap struct {
	ID      string            `json:"id"`
	TTL     int32             `json:"ttl,omitempty"`
	Name    string            `json:"name"`
	Email   string            `json:"email"`
	Score   int               `json:"score"`
	Active  bool              `json:"active"`
	Address map[string]string `json:"address"`
}

// typedFixture is a collection of the 100k documents with both views warm
// (every document read once through each), and otter caches of the same
// documents as structs. It is built once per process.
var typedFixture struct {
	c      *ttlstore.Collection
	flat   *ttlstore.Typed[typedFlat]
	slice  *ttlstore.Typed[typedSlice]
	tmap   *ttlstore.Typed[typedMap]
	oflat  *otter.Cache[string, typedFlat]
	oslice *otter.Cache[string, typedSlice]
	omap   *otter.Cache[string, typedMap]
}

func typedStores(b testing.TB) {
	b.Helper()
	f := &typedFixture
	if f.c != nil {
		return
	}
	dropFixture() // the other workloads' store
	d := Data(n100k)
	c, err := ttlstore.New(ttlstore.Options{DefaultTTL: ttlstore.TTL(int32(TTL / time.Second))})
	if err != nil {
		b.Fatal(err)
	}
	f.c = c
	f.flat = ttlstore.NewTyped[typedFlat](c)
	f.slice = ttlstore.NewTyped[typedSlice](c)
	f.tmap = ttlstore.NewTyped[typedMap](c)
	f.oflat = otter.Must(&otter.Options[string, typedFlat]{ExpiryCalculator: otter.ExpiryWriting[string, typedFlat](TTL)})
	f.oslice = otter.Must(&otter.Options[string, typedSlice]{ExpiryCalculator: otter.ExpiryWriting[string, typedSlice](TTL)})
	f.omap = otter.Must(&otter.Options[string, typedMap]{ExpiryCalculator: otter.ExpiryWriting[string, typedMap](TTL)})
	for i, id := range d.IDs {
		if _, err := c.Upsert(d.Docs[i]); err != nil {
			b.Fatal(err)
		}
		copyTyped(b, f.flat, f.oflat, id, func(typedFlat) string { return "" })
		copyTyped(b, f.slice, f.oslice, id, func(v typedSlice) string {
			if len(v.Tags) != 2 {
				return fmt.Sprintf("tags %q", v.Tags)
			}
			return ""
		})
		copyTyped(b, f.tmap, f.omap, id, func(v typedMap) string {
			if len(v.Address) != 3 {
				return fmt.Sprintf("address %q", v.Address)
			}
			return ""
		})
	}
	if f.flat.CacheLen() != n100k || f.slice.CacheLen() != n100k || f.tmap.CacheLen() != n100k {
		b.Fatalf("cached %d, %d and %d values, want %d", f.flat.CacheLen(), f.slice.CacheLen(), f.tmap.CacheLen(), n100k)
	}
}

// copyTyped reads id through view, checks it (wrong says what is wrong,
// "" if nothing), and stores it in the otter cache o.
func copyTyped[T any](b testing.TB, view *ttlstore.Typed[T], o *otter.Cache[string, T], id string, wrong func(T) string) {
	v, err := view.Read(id)
	if err != nil {
		b.Fatal(err)
	}
	if w := wrong(v); w != "" {
		b.Fatalf("%s: %s", id, w)
	}
	o.Set(id, v)
}

// typedReaders are the reads the typed workloads compare, each reporting
// whether it found the document.
func typedReaders() []struct {
	name string
	get  func(id string) bool
} {
	f := &typedFixture
	return []struct {
		name string
		get  func(id string) bool
	}{
		{"untyped", func(id string) bool { _, err := f.c.Read(id); return err == nil }},
		{"untyped+decode", func(id string) bool {
			d, err := f.c.Read(id)
			if err != nil {
				return false
			}
			var v typedFlat
			return d.Decode(&v) == nil && v.ID != ""
		}},
		{"typed-flat", func(id string) bool { v, err := f.flat.Read(id); return err == nil && v.ID != "" }},
		{"typed-slice", func(id string) bool { v, err := f.slice.Read(id); return err == nil && len(v.Tags) == 2 }},
		{"typed-map", func(id string) bool { v, err := f.tmap.Read(id); return err == nil && len(v.Address) == 3 }},
		{"otter-flat", func(id string) bool { v, ok := f.oflat.GetIfPresent(id); return ok && v.ID != "" }},
		{"otter-slice", func(id string) bool { v, ok := f.oslice.GetIfPresent(id); return ok && len(v.Tags) == 2 }},
		{"otter-map", func(id string) bool { v, ok := f.omap.GetIfPresent(id); return ok && len(v.Address) == 3 }},
	}
}

// getFunc adapts a read function to the getter the read workloads take.
type getFunc func(id string) bool

func (f getFunc) Get(id string) bool { return f(id) }

// BenchmarkTypedReadHit measures one read of a live document as a struct,
// 100k documents, one goroutine.
func BenchmarkTypedReadHit(b *testing.B) {
	typedStores(b)
	order := readOrder(n100k)
	for _, r := range typedReaders() {
		b.Run("read="+r.name, func(b *testing.B) {
			benchReads(b, getFunc(r.get), order, true)
		})
	}
}

// BenchmarkTypedReadHitParallel is BenchmarkTypedReadHit on GOMAXPROCS
// goroutines.
func BenchmarkTypedReadHitParallel(b *testing.B) {
	typedStores(b)
	order := readOrder(n100k)
	for _, r := range typedReaders() {
		b.Run("read="+r.name, func(b *testing.B) {
			benchParallelReads(b, getFunc(r.get), order)
		})
	}
}

// BenchmarkTypedWrite measures an Upsert of a struct over a live document,
// 100k documents: the collection's (marshal and store) and the view's
// (marshal, store, decode what was stored and cache it).
func BenchmarkTypedWrite(b *testing.B) {
	typedStores(b)
	f := &typedFixture
	d := Data(n100k)
	values := make([]typedSlice, d.Len())
	for i, id := range d.IDs {
		v, err := f.slice.Read(id)
		if err != nil {
			b.Fatal(err)
		}
		values[i] = v
	}
	writes := []struct {
		name string
		put  func(v typedSlice) error
	}{
		{"untyped", func(v typedSlice) error { _, err := f.c.Upsert(v); return err }},
		{"typed-slice", func(v typedSlice) error { _, err := f.slice.Upsert(v); return err }},
	}
	for _, w := range writes {
		b.Run("write="+w.name, func(b *testing.B) {
			b.ReportAllocs()
			var i atomic.Int64
			for b.Loop() {
				n := int(i.Add(1)) * 7919 % len(values)
				if err := w.put(values[n]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestTypedFixture checks that every typed reader finds the documents,
// and that a struct read through a view is the caller's.
func TestTypedFixture(t *testing.T) {
	typedStores(t)
	for _, r := range typedReaders() {
		for _, id := range Data(n100k).IDs[:1000] {
			if !r.get(id) {
				t.Fatalf("read=%s: %s not found", r.name, id)
			}
		}
	}
	v, err := typedFixture.slice.Read("user-0000001")
	if err != nil {
		t.Fatal(err)
	}
	tag := v.Tags[0]
	v.Tags[0] = "changed"
	if v, _ := typedFixture.slice.Read("user-0000001"); v.Tags[0] != tag {
		t.Fatalf("a change to a read value showed in the next read: %q", v.Tags)
	}
	m, err := typedFixture.tmap.Read("user-0000001")
	if err != nil {
		t.Fatal(err)
	}
	city := m.Address["city"]
	m.Address["city"] = "changed"
	if m, _ := typedFixture.tmap.Read("user-0000001"); m.Address["city"] != city {
		t.Fatalf("a change to a read value showed in the next read: %q", m.Address)
	}
}
