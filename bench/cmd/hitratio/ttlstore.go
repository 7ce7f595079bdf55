package main

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/ttlstore/ttlstore"
)

// ttlstoreCache is a collection bounded by MaxDocuments with EvictColdest,
// no TTL and ManualSweep, so that only the eviction policy decides what
// stays; its policy's hash has the fixed seed (the default), or a random
// one (newTTLStoreRandom, RandomizeEviction). A key k is the document {"id":"<k>","v":1}; Get is Read of its id,
// Set is Upsert of the document, built in a buffer the adapter reuses
// (Upsert keeps its own copy).
type ttlstoreCache struct {
	c   *ttlstore.Collection
	doc []byte
}

func newTTLStore(capacity int) cache       { return newTTLStoreSeeded(capacity, false) }
func newTTLStoreRandom(capacity int) cache { return newTTLStoreSeeded(capacity, true) }

func newTTLStoreSeeded(capacity int, random bool) cache {
	c, err := ttlstore.New(ttlstore.Options{
		MaxDocuments:      capacity,
		Eviction:          ttlstore.EvictColdest,
		RandomizeEviction: random,
		SweepInterval:     ttlstore.ManualSweep,
	})
	if err != nil {
		panic(err)
	}
	return &ttlstoreCache{c: c, doc: make([]byte, 0, 64)}
}

func (t *ttlstoreCache) Get(key uint64) bool {
	id := strconv.FormatUint(key, 10)
	d, err := t.c.Read(id)
	switch {
	case errors.Is(err, ttlstore.ErrNotFound):
		return false
	case err != nil:
		panic(fmt.Sprintf("ttlstore: Read(%q): %v", id, err))
	case d.ID() != id:
		panic(fmt.Sprintf("ttlstore: Read(%q) returned the document %q", id, d.ID()))
	}
	return true
}

func (t *ttlstoreCache) Set(key uint64) {
	t.doc = append(t.doc[:0], `{"id":"`...)
	t.doc = strconv.AppendUint(t.doc, key, 10)
	t.doc = append(t.doc, `","v":1}`...)
	if _, err := t.c.Upsert(t.doc); err != nil {
		panic(fmt.Sprintf("ttlstore: Upsert(%s): %v", t.doc, err))
	}
}

func (t *ttlstoreCache) Close() { t.c.Close() }

// stats returns the collection's counters, for the test.
func (t *ttlstoreCache) stats() ttlstore.Stats { return t.c.Stats() }
