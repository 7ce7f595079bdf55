package ttlstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
)

// TestBoundExpiredFirstAfterEarlierExpiry checks that a write at the bound
// finds a document that expires before every other stored, however that
// document came to expire so early, after writes at the bound have found
// nothing expired (and raised the collection's expiry floor past it): it
// is swept, not a live document evicted.
func TestBoundExpiredFirstAfterEarlierExpiry(t *testing.T) {
	const n = 8
	earlier := []struct {
		name string
		// make gives a stored document an expiry 5 s from now, before
		// every other stored one, and returns its id.
		make func(t *testing.T, c *ttlstore.Collection) []string
	}{
		{"written with a shorter ttl", func(t *testing.T, c *ttlstore.Collection) []string {
			_, err := c.Upsert(bndDoc("short", 10, `,"ttl":5`))
			require.NoError(t, err)
			return []string{"short"}
		}},
		{"replaced with a shorter ttl", func(t *testing.T, c *ttlstore.Collection) []string {
			var id string
			for d := range c.All() {
				id = d.ID()
			}
			_, err := c.Replace(bndDoc(id, 10, `,"ttl":5`))
			require.NoError(t, err)
			return []string{id}
		}},
		{"DefaultTTL lowered", func(t *testing.T, c *ttlstore.Collection) []string {
			require.NoError(t, c.SetDefaultTTL(ttlstore.TTL(5)))
			var ids []string
			for d := range c.All() {
				ids = append(ids, d.ID())
			}
			return ids
		}},
	}
	for _, e := range earlier {
		for _, policy := range []ttlstore.EvictionPolicy{ttlstore.EvictColdest, ttlstore.EvictSoonestExpiry} {
			t.Run(e.name+"/"+policy.String(), func(t *testing.T) {
				var expired []string
				var evicted bndEvictions
				c, clk := newCollection(t, ttlstore.Options{
					DefaultTTL:   ttlstore.TTL(1000),
					MaxDocuments: n,
					Eviction:     policy,
					OnExpire:     func(d ttlstore.Document) { expired = append(expired, d.ID()) },
					OnEvict:      evicted.add,
				})
				// One that expires soon, swept by a write at the bound,
				// then a write at the bound that finds nothing expired.
				_, err := c.Create(bndDoc("first", 10, `,"ttl":1`))
				require.NoError(t, err)
				for i := range n - 1 {
					_, err := c.Create(bndDoc(fmt.Sprint("live", i), 10, ""))
					require.NoError(t, err)
				}
				clk.Add(time.Second)
				_, err = c.Create(bndDoc("sweeps", 10, ""))
				require.NoError(t, err)
				require.Equal(t, []string{"first"}, expired)
				_, err = c.Create(bndDoc("evicts", 10, ""))
				require.NoError(t, err)
				require.Equal(t, 1, evicted.count(), "nothing was expired")

				ids := e.make(t, c)
				clk.Add(5 * time.Second)
				expired = nil
				before := evicted.count()
				for i := range len(ids) {
					_, err := c.Create(bndDoc(fmt.Sprint("new", i), 10, ""))
					require.NoError(t, err)
				}
				assert.ElementsMatch(t, ids, expired, "OnExpire")
				assert.Equal(t, before, evicted.count(), "a live document was evicted while expired ones remained")
				assert.Zero(t, c.Stats().Expired)
			})
		}
	}
}
