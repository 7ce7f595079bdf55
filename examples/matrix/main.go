// Command matrix prints the TTL matrix of Azure Cosmos DB's time-to-live
// article, with every cell computed by ttlstore: for each DefaultTTL and
// document ttl it stores a document under a mock clock, then checks that it
// is still there one nanosecond before the expiry it reports and gone at it
// (or still there after a century when it reports none).
package main

import (
	"fmt"
	"log"
	"os"
	"text/tabwriter"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/ttlstore/ttlstore"
)

const n, m = 600, 30 // DefaultTTL n and document ttl m, in seconds

func main() {
	defaults := []struct {
		name string
		ttl  *int32
	}{{"DefaultTTL off (nil)", nil}, {"DefaultTTL -1", ttlstore.TTL(ttlstore.Never)}, {fmt.Sprintf("DefaultTTL n=%d", n), ttlstore.TTL(n)}}
	docs := []struct{ name, json string }{
		{"ttl absent", `{"id":"doc"}`},
		{"ttl -1", `{"id":"doc","ttl":-1}`},
		{fmt.Sprintf("ttl m=%d", m), fmt.Sprintf(`{"id":"doc","ttl":%d}`, m)},
	}

	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprint(w, "document \\ collection")
	for _, d := range defaults {
		fmt.Fprint(w, "\t", d.name)
	}
	fmt.Fprintln(w)
	for _, doc := range docs {
		fmt.Fprint(w, doc.name)
		for _, def := range defaults {
			fmt.Fprint(w, "\t", cell(def.ttl, doc.json))
		}
		fmt.Fprintln(w)
	}
	w.Flush()
}

// cell stores one document and returns what the collection does with it,
// after checking that the collection really behaves so.
func cell(def *int32, doc string) string {
	clk := clock.NewMock()
	clk.Set(time.Unix(1_000_000, 0))
	c, err := ttlstore.New(ttlstore.Options{DefaultTTL: def, Clock: clk, SweepInterval: ttlstore.ManualSweep})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	d, err := c.Upsert([]byte(doc))
	if err != nil {
		log.Fatal(err)
	}
	exp, ok := d.ExpiresAt()
	if !ok {
		clk.Add(100 * 365 * 24 * time.Hour)
		check(c, true, "a century later")
		if _, own := d.TTL(); own && def == nil {
			return "never expires (ttl ignored)"
		}
		return "never expires"
	}
	life := exp.Sub(d.TS())
	clk.Add(life - time.Nanosecond)
	check(c, true, "1 ns before its expiry")
	clk.Add(time.Nanosecond)
	check(c, false, "at its expiry")
	return fmt.Sprintf("expires %d s after _ts", int(life.Seconds()))
}

func check(c *ttlstore.Collection, wantLive bool, when string) {
	_, err := c.Read("doc")
	if live := err == nil; live != wantLive {
		log.Fatalf("%s: live = %v, want %v (%v)", when, live, wantLive, err)
	}
}
