// Command boundedcache shows the two faces of a bounded collection: a
// cache that keeps its hot set under a flood of new documents
// (EvictColdest), and a store that refuses writes when full rather than
// lose a document (NoEviction, the zero value).
package main

import (
	"errors"
	"fmt"
	"log"

	"github.com/ttlstore/ttlstore"
)

func main() {
	cache()
	store()
}

// cache fills a 64 KiB cache with 100 hot product pages, reads them, then
// writes 20,000 pages that are read once each: the hot ones stay.
func cache() {
	evicted := 0
	c, err := ttlstore.New(ttlstore.Options{
		DefaultTTL: ttlstore.TTL(600),
		MaxBytes:   64 << 10,
		Eviction:   ttlstore.EvictColdest,
		OnEvict:    func(ttlstore.Document) { evicted++ },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	page := func(i int) []byte {
		return fmt.Appendf(nil, `{"id":"p%d","title":"Product %d","price":%d.99}`, i, i, i%100)
	}
	for i := range 100 {
		if _, err := c.Upsert(page(i)); err != nil {
			log.Fatal(err)
		}
	}
	for range 5 {
		for i := range 100 {
			c.Read(fmt.Sprint("p", i))
		}
	}
	for i := 1000; i < 21000; i++ {
		if _, err := c.Upsert(page(i)); err != nil {
			log.Fatal(err)
		}
		c.Read(fmt.Sprint("p", i))
	}
	kept := 0
	for i := range 100 {
		if _, err := c.Read(fmt.Sprint("p", i)); err == nil {
			kept++
		}
	}
	st := c.Stats()
	fmt.Printf("cache: %d documents weighing %d of MaxBytes %d; %d evicted (OnEvict saw %d); %d of 100 hot pages kept\n",
		st.Live, st.Bytes, st.MaxBytes, st.Evicted, evicted, kept)
}

// store holds at most three carts, and says so.
func store() {
	s, err := ttlstore.New(ttlstore.Options{DefaultTTL: ttlstore.TTL(3600), MaxDocuments: 3})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	for i := range 4 {
		_, err := s.Create(fmt.Appendf(nil, `{"id":"cart-%d","items":[]}`, i))
		switch {
		case errors.Is(err, ttlstore.ErrFull):
			fmt.Println("store:", err)
		case err != nil:
			log.Fatal(err)
		}
	}
	if err := s.Delete("cart-0"); err != nil {
		log.Fatal(err)
	}
	_, err = s.Create([]byte(`{"id":"cart-3","items":[]}`))
	fmt.Printf("store: after a delete, cart-3: %v; refused so far: %d\n", err, s.Stats().Refused)
}
