// Command changefeed mirrors a durable collection into another through its
// change feed, and prints the expiries the feed marks. The mirror saves its
// token after each page; the program stops the source (Close), as a deploy
// would, opens it again, and the mirror resumes from its saved token: it
// gets every change once, in order, the expiries that happened while it was
// away included, and ends equal to the source.
//
// The clock is a mock set to a fixed instant, so the output is the same on
// every run; a service leaves Options.Clock nil. The program exits non-zero
// if the mirror and the source differ.
package main

import (
	"fmt"
	"log"
	"os"
	"slices"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/ttlstore/ttlstore"
)

func main() {
	dir, err := os.MkdirTemp("", "ttlstore-changefeed-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC))
	opts := ttlstore.Options{
		DefaultTTL:    ttlstore.TTL(ttlstore.Never), // only documents with a ttl expire
		Clock:         clk,
		SweepInterval: ttlstore.ManualSweep, // Sweep below removes what expired
		ChangeFeed:    ttlstore.ChangeFeedOptions{RetainBytes: 16 << 20},
	}
	source, err := ttlstore.Open(dir, opts)
	if err != nil {
		log.Fatal(err)
	}
	mirror, err := ttlstore.New(ttlstore.Options{SweepInterval: ttlstore.ManualSweep})
	if err != nil {
		log.Fatal(err)
	}
	defer mirror.Close()

	must(source.Upsert([]byte(`{"id":"cart-1","items":2,"ttl":1800}`)))
	must(source.Upsert([]byte(`{"id":"cart-2","items":1,"ttl":60}`)))
	must(source.Upsert([]byte(`{"id":"profile-7","name":"Ada"}`)))
	token := follow(source, mirror, "") // the mirror saves this token

	must(source.Upsert([]byte(`{"id":"cart-1","items":3,"ttl":1800}`)))
	if err := source.Delete("profile-7"); err != nil {
		log.Fatal(err)
	}
	if err := source.Close(); err != nil { // the deploy
		log.Fatal(err)
	}
	fmt.Println("-- source closed; 2 minutes pass; source reopened --")
	clk.Add(2 * time.Minute) // cart-2 expires while the source is down
	source, err = ttlstore.Open(dir, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer source.Close()
	source.Sweep()
	follow(source, mirror, token) // resumed: nothing twice, nothing missed

	if got, want := ids(mirror), ids(source); !slices.Equal(got, want) {
		log.Fatalf("mirror has %v, source %v", got, want)
	}
	fmt.Println("mirror equals source:", ids(mirror))
}

// follow applies every change of source's feed after token to mirror, and
// returns the token to resume from.
func follow(source, mirror *ttlstore.Collection, token string) string {
	req := ttlstore.FeedRequest{Mode: ttlstore.AllVersionsAndDeletes, Token: token, MaxChanges: 100}
	for {
		page, err := source.ReadFeed(req)
		if err != nil {
			log.Fatal(err)
		}
		for _, ch := range page.Changes {
			switch ch.Op {
			case ttlstore.OpCreate, ttlstore.OpReplace:
				fmt.Printf("lsn %d  %-7s %s\n", ch.LSN, ch.Op, ch.ID)
				must(mirror.Upsert(ch.Document))
			case ttlstore.OpDelete:
				what := "deleted"
				if ch.TimeToLiveExpired {
					what = "expired"
				}
				fmt.Printf("lsn %d  %-7s %s (%s)\n", ch.LSN, ch.Op, ch.ID, what)
				if err := mirror.Delete(ch.ID); err != nil {
					log.Fatal(err)
				}
			}
		}
		if len(page.Changes) == 0 {
			return page.Token
		}
		req.Token = page.Token // saved: a restart of the mirror resumes here
	}
}

// ids returns the ids of c's live documents, sorted.
func ids(c *ttlstore.Collection) []string {
	var out []string
	for d := range c.All() {
		out = append(out, d.ID())
	}
	slices.Sort(out)
	return out
}

func must(_ ttlstore.Document, err error) {
	if err != nil {
		log.Fatal(err)
	}
}
