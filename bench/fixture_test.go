package bench

import (
	"fmt"
	"runtime"
	"testing"
)

// Sizes of the stores in the workloads.
const (
	n10k  = 10_000
	n100k = 100_000
	n1M   = 1_000_000
)

// sizeName is how a size appears in a benchmark name: n=10k, n=100k, n=1M.
func sizeName(n int) string {
	switch {
	case n%1_000_000 == 0:
		return fmt.Sprintf("n=%dM", n/1_000_000)
	case n%1_000 == 0:
		return fmt.Sprintf("n=%dk", n/1_000)
	}
	return fmt.Sprintf("n=%d", n)
}

// orderMask indexes the 1<<20 ids of a ReadOrder.
const orderMask = 1<<20 - 1

// forEachKind runs f as a sub-benchmark store=<name> for every store that
// passes keep (every store when keep is nil).
func forEachKind(b *testing.B, keep func(Kind) bool, f func(b *testing.B, k Kind)) {
	for _, k := range Kinds {
		if keep != nil && !keep(k) {
			continue
		}
		b.Run("store="+k.Name, func(b *testing.B) { f(b, k) })
	}
}

func isSweeper(k Kind) bool {
	s := k.New(Config{Expiry: true})
	defer s.Close()
	_, ok := s.(Sweeper)
	return ok
}

func expires(k Kind) bool { return k.Expires }

func only(names ...string) func(Kind) bool {
	return func(k Kind) bool {
		for _, n := range names {
			if k.Name == n {
				return true
			}
		}
		return false
	}
}

// The fixture is one store kept between the calls of one benchmark function
// (a b.N benchmark is called several times) and between the -count runs of
// one sub-benchmark (the testing package runs them one after another), so
// that a store of a million documents is built once, not once per call.
// Only one is kept: asking for another key closes it first.
var fixture struct {
	key   string
	store Store
	// overwrites counts the writes benchOverwrites made to store, so that
	// each run continues the alternation of values where the last left it.
	overwrites int
}

// fixtureStore returns the kept store if it has key, or closes it and builds
// a new one with build.
func fixtureStore(key string, build func() Store) Store {
	if fixture.key == key {
		return fixture.store
	}
	dropFixture()
	s := build()
	fixture.key, fixture.store, fixture.overwrites = key, s, 0
	return s
}

// dropFixture closes the kept store and collects its memory, so that the
// next workload does not pay for it.
func dropFixture() {
	if fixture.store != nil {
		fixture.store.Close()
	}
	fixture.key, fixture.store, fixture.overwrites = "", nil, 0
	runtime.GC()
}

// filled returns a store of kind k holding the first n documents, all live,
// and a random read order over their ids.
func filled(k Kind, n int, cfg Config) (Store, []string) {
	d := Data(n)
	key := fmt.Sprintf("filled/%s/%d/%v", k.Name, n, cfg)
	s := fixtureStore(key, func() Store {
		s := k.New(cfg)
		Fill(s, d.IDs, d.Docs)
		return s
	})
	return s, readOrder(n)
}

// orders holds the read orders made so far.
var orders = map[orderKey][]string{}

// orderKey names a read order: of the first n ids, at random or ascending.
type orderKey struct {
	n         int
	ascending bool
}

// readOrder returns ReadOrder of the first n ids: 1<<20 of them at random.
func readOrder(n int) []string { return order(orderKey{n: n}) }

// ascendingOrder returns AscendingOrder of the first n ids.
func ascendingOrder(n int) []string { return order(orderKey{n: n, ascending: true}) }

func order(k orderKey) []string {
	if o, ok := orders[k]; ok {
		return o
	}
	gen := ReadOrder
	if k.ascending {
		gen = AscendingOrder
	}
	o := gen(Data(k.n).IDs)
	orders[k] = o
	return o
}
