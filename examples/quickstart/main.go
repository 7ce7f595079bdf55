// Command quickstart shows ttlstore in a minute: documents with and without
// their own ttl, reads before and after expiry, a typed document, and a
// sweep handing memory back. Time is a mock clock, so an hour passes at
// once; in a service, leave Options.Clock nil for the wall clock.
package main

import (
	"errors"
	"fmt"
	"log"
	"slices"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/ttlstore/ttlstore"
)

// Session is a document as Cosmos DB users write them: an id, an optional
// ttl (omitted when zero, so the collection's default applies), and data.
type Session struct {
	ID   string `json:"id"`
	TTL  int32  `json:"ttl,omitempty"`
	User string `json:"user"`
}

func main() {
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC))

	var swept []string
	sessions, err := ttlstore.New(ttlstore.Options{
		DefaultTTL: ttlstore.TTL(3600), // documents without a ttl live an hour
		Clock:      clk,
		// A service keeps the background sweeper (the default). Here we
		// sweep by hand, so the output comes out in the same order every
		// time.
		SweepInterval: ttlstore.ManualSweep,
		OnExpire:      func(d ttlstore.Document) { swept = append(swept, d.ID()) },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer sessions.Close()

	must(sessions.Upsert([]byte(`{"id":"s-ada","user":"ada"}`)))            // the default: one hour
	must(sessions.Upsert(Session{ID: "s-bob", User: "bob", TTL: 60}))       // its own: one minute
	must(sessions.Upsert([]byte(`{"id":"s-root","user":"root","ttl":-1}`))) // never expires
	d := must(sessions.Read("s-ada"))
	exp, _ := d.ExpiresAt()
	fmt.Printf("stored %d sessions; s-ada is %s, expires at %s\n", sessions.Len(), d, exp.Format(time.TimeOnly))

	clk.Add(2 * time.Minute)
	if _, err := sessions.Read("s-bob"); errors.Is(err, ttlstore.ErrNotFound) {
		fmt.Println("after 2 minutes: s-bob is gone:", err)
	}

	clk.Add(time.Hour)
	var s Session
	if err := must(sessions.Read("s-root")).Decode(&s); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("after an hour: %d live, %q still there\n", sessions.Len(), s.User)

	fmt.Printf("before the sweep: %+v\n", sessions.Stats())
	fmt.Printf("sweep removed %d\n", sessions.Sweep())
	slices.Sort(swept)
	fmt.Printf("OnExpire saw %v\n", swept)
	fmt.Printf("after the sweep: %+v\n", sessions.Stats())
}

func must(d ttlstore.Document, err error) ttlstore.Document {
	if err != nil {
		log.Fatal(err)
	}
	return d
}
