package ttlstore_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/ttlstore/ttlstore"
)

// exampleClock is a mock clock at 2026-11-20 09:00:00 UTC.
func exampleClock() *clock.Mock {
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC))
	return clk
}

func ExampleNew() {
	c, err := ttlstore.New(ttlstore.Options{
		DefaultTTL: ttlstore.TTL(3600), // documents without a ttl live an hour
		Clock:      exampleClock(),     // nil: the wall clock
	})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	fmt.Println(*c.DefaultTTL(), c.Len())

	_, err = ttlstore.New(ttlstore.Options{DefaultTTL: ttlstore.TTL(0)})
	fmt.Println(errors.Is(err, ttlstore.ErrInvalidTTL), err)
	// Output:
	// 3600 0
	// true ttlstore: new: DefaultTTL 0 is not nil, -1 or an integer from 1 to 2147483647: invalid ttl
}

func ExampleCollection_Upsert() {
	clk := exampleClock()
	c, _ := ttlstore.New(ttlstore.Options{DefaultTTL: ttlstore.TTL(ttlstore.Never), Clock: clk})
	defer c.Close()

	type Cart struct {
		ID    string   `json:"id"`
		TTL   int32    `json:"ttl,omitempty"`
		Items []string `json:"items"`
	}
	d, _ := c.Upsert(Cart{ID: "cart-7", TTL: 900, Items: []string{"tea"}})
	exp, _ := d.ExpiresAt()
	fmt.Println(d.ID(), d.TS().Format(time.TimeOnly), exp.Format(time.TimeOnly))

	clk.Add(10 * time.Minute)
	d, _ = c.Upsert([]byte(`{"id":"cart-7","ttl":900,"items":["tea","milk"]}`)) // the countdown restarts
	exp, _ = d.ExpiresAt()
	fmt.Println(d.ID(), d.TS().Format(time.TimeOnly), exp.Format(time.TimeOnly))
	// Output:
	// cart-7 09:00:00 09:15:00
	// cart-7 09:10:00 09:25:00
}

func ExampleCollection_Read() {
	clk := exampleClock()
	c, _ := ttlstore.New(ttlstore.Options{DefaultTTL: ttlstore.TTL(10), Clock: clk})
	defer c.Close()
	c.Upsert([]byte(`{"id":"token","scope":"read"}`))

	clk.Add(9*time.Second + 999*time.Millisecond)
	_, err := c.Read("token")
	fmt.Println("at 9.999 s:", err)

	clk.Add(time.Millisecond)
	_, err = c.Read("token")
	fmt.Println("at 10 s:", err, errors.Is(err, ttlstore.ErrNotFound))
	// Output:
	// at 9.999 s: <nil>
	// at 10 s: ttlstore: read "token": not found true
}

func ExampleCollection_Touch() {
	clk := exampleClock()
	c, _ := ttlstore.New(ttlstore.Options{DefaultTTL: ttlstore.TTL(1800), Clock: clk})
	defer c.Close()
	c.Create([]byte(`{"id":"sess","user":"ada"}`))

	for range 3 {
		clk.Add(20 * time.Minute)
		_, err := c.Touch("sess") // sliding expiration: each use restarts the 30 minutes
		fmt.Println(clk.Now().Format(time.TimeOnly), err)
	}
	clk.Add(30 * time.Minute)
	_, err := c.Touch("sess")
	fmt.Println(clk.Now().Format(time.TimeOnly), err)
	// Output:
	// 09:20:00 <nil>
	// 09:40:00 <nil>
	// 10:00:00 <nil>
	// 10:30:00 ttlstore: touch "sess": not found
}

func ExampleCollection_ReplaceIfMatch() {
	c, _ := ttlstore.New(ttlstore.Options{Clock: exampleClock()})
	defer c.Close()
	v1, _ := c.Create([]byte(`{"id":"counter","n":1}`))
	_, err := c.ReplaceIfMatch([]byte(`{"id":"counter","n":2}`), v1.ETag())
	fmt.Println(err)
	_, err = c.ReplaceIfMatch([]byte(`{"id":"counter","n":3}`), v1.ETag()) // stale _etag
	fmt.Println(errors.Is(err, ttlstore.ErrPreconditionFailed))
	// Output:
	// <nil>
	// true
}

func ExampleCollection_SetDefaultTTL() {
	clk := exampleClock()
	c, _ := ttlstore.New(ttlstore.Options{DefaultTTL: ttlstore.TTL(3600), Clock: clk})
	defer c.Close()
	c.Upsert([]byte(`{"id":"a"}`))
	clk.Add(30 * time.Minute)
	c.Upsert([]byte(`{"id":"b"}`))
	clk.Add(10 * time.Minute) // a is 40 minutes old, b 10

	c.SetDefaultTTL(ttlstore.TTL(20 * 60)) // lowering hides a at once
	fmt.Println(ids(c))
	c.SetDefaultTTL(nil) // TTL off: nothing expires
	clk.Add(24 * time.Hour)
	fmt.Println(ids(c))
	c.SetDefaultTTL(ttlstore.TTL(3600)) // on again: b, a day old, expires at once
	fmt.Println(ids(c))
	// Output:
	// [b]
	// [b]
	// []
}

func ExampleCollection_Query() {
	clk := exampleClock()
	c, _ := ttlstore.New(ttlstore.Options{DefaultTTL: ttlstore.TTL(ttlstore.Never), Clock: clk})
	defer c.Close()
	c.Upsert([]byte(`{"id":"e1","kind":"click","ttl":60}`))
	c.Upsert([]byte(`{"id":"e2","kind":"view","ttl":60}`))
	c.Upsert([]byte(`{"id":"e3","kind":"click","ttl":600}`))
	clk.Add(time.Minute)

	type event struct{ Kind string }
	clicks := c.Query(func(d ttlstore.Document) bool {
		var e event
		return d.Decode(&e) == nil && e.Kind == "click"
	})
	for d := range clicks {
		fmt.Println(d.ID()) // e1 has expired
	}
	// Output:
	// e3
}

func ExampleCollection_Sweep() {
	clk := exampleClock()
	c, _ := ttlstore.New(ttlstore.Options{
		DefaultTTL:    ttlstore.TTL(60),
		Clock:         clk,
		SweepInterval: ttlstore.ManualSweep, // no background sweeper: the caller sweeps
		OnExpire:      func(d ttlstore.Document) { fmt.Println("expired:", d.ID()) },
	})
	defer c.Close()
	c.Upsert([]byte(`{"id":"job-1"}`))
	clk.Add(time.Minute)
	st := c.Stats()
	fmt.Printf("live %d, expired %d, swept %d\n", st.Live, st.Expired, st.Swept)
	fmt.Println("swept", c.Sweep())
	st = c.Stats()
	fmt.Printf("live %d, expired %d, swept %d\n", st.Live, st.Expired, st.Swept)
	// Output:
	// live 0, expired 1, swept 0
	// expired: job-1
	// swept 1
	// live 0, expired 0, swept 1
}

func ExampleDocument_Decode() {
	c, _ := ttlstore.New(ttlstore.Options{Clock: exampleClock()})
	defer c.Close()
	d, _ := c.Upsert([]byte(`{"id":"u1","name":"Ada","_ts":1,"_etag":"mine"}`))

	var v struct {
		ID   string `json:"id"`
		Name string `json:"name"`
		TS   int64  `json:"_ts"`
	}
	d.Decode(&v)
	fmt.Println(v.ID, v.Name, v.TS == d.TS().Unix(), v.TS)
	// Output:
	// u1 Ada true 1795165200
}

// A store refuses a write when full; a cache evicts its coldest document.
func ExampleEvictionPolicy() {
	store, _ := ttlstore.New(ttlstore.Options{MaxDocuments: 2}) // NoEviction
	defer store.Close()
	store.Upsert([]byte(`{"id":"a"}`))
	store.Upsert([]byte(`{"id":"b"}`))
	_, err := store.Upsert([]byte(`{"id":"c"}`))
	fmt.Println(errors.Is(err, ttlstore.ErrFull), err)

	cache, _ := ttlstore.New(ttlstore.Options{
		MaxDocuments: 2,
		Eviction:     ttlstore.EvictColdest,
		OnEvict:      func(d ttlstore.Document) { fmt.Println("evicted", d.ID()) },
	})
	defer cache.Close()
	cache.Upsert([]byte(`{"id":"a"}`))
	cache.Upsert([]byte(`{"id":"b"}`))
	cache.Read("a") // a is read, b is not
	cache.Upsert([]byte(`{"id":"c"}`))
	_, err = cache.Read("a")
	fmt.Println("a:", err)
	// Output:
	// true ttlstore: upsert "c": MaxDocuments is 2 and 2 documents are stored: collection full
	// evicted b
	// a: <nil>
}

// A transactional batch: the operations apply in order, all or nothing.
func ExampleCollection_ExecuteBatch() {
	c, _ := ttlstore.New(ttlstore.Options{DefaultTTL: ttlstore.TTL(3600)})
	defer c.Close()
	c.Upsert(`{"id":"cart-1","items":2}`)

	var b ttlstore.Batch
	b.Create(`{"id":"order-9","cart":"cart-1"}`).
		Delete("cart-1").
		Read("order-9")
	docs, err := c.ExecuteBatch(&b)
	fmt.Println(len(docs), err, docs[2].ID())

	// A batch that fails changes nothing, and says which operation failed.
	b = ttlstore.Batch{}
	b.Upsert(`{"id":"cart-2"}`).Replace(`{"id":"cart-1","items":3}`)
	_, err = c.ExecuteBatch(&b)
	var be *ttlstore.BatchError
	fmt.Println(errors.As(err, &be), be.Index, errors.Is(err, ttlstore.ErrNotFound), c.Len())
	// Output:
	// 3 <nil> order-9
	// true 1 true 1
}

// Patch changes fields of a document in place, as one write.
func ExampleCollection_Patch() {
	c, _ := ttlstore.New(ttlstore.Options{DefaultTTL: ttlstore.TTL(3600)})
	defer c.Close()
	c.Upsert(`{"id":"cart-1","items":2,"tags":["new"]}`)

	ops, _ := ttlstore.ParsePatch([]byte(`[
		{"op":"incr","path":"/items","value":1},
		{"op":"add","path":"/tags/-","value":"big"},
		{"op":"set","path":"/ttl","value":60}]`))
	d, err := c.Patch("cart-1", ops)
	ttl, _ := d.TTL()
	var v struct {
		Items int
		Tags  []string
	}
	d.Decode(&v)
	fmt.Println(err, v.Items, v.Tags, ttl)

	_, err = c.Patch("cart-1", []ttlstore.PatchOp{{Kind: ttlstore.PatchRemove, Path: "/coupon"}})
	fmt.Println(errors.Is(err, ttlstore.ErrInvalidPatch))
	// Output:
	// <nil> 3 [new big] 60
	// true
}
