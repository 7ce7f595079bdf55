// Command readthrough puts a ttlstore collection in front of a slow
// database of login sessions with ReadOrLoad: a request reads its session
// from the collection, and only a miss goes to the database, once per
// session however many requests miss it at the same time. Sessions expire
// after 30 idle minutes; each request touches its session (sliding
// expiration), so an active session stays cached and an idle one is
// loaded again when it comes back.
//
// The database is a map behind a real 100 ms delay; the collection runs on
// a mock clock, so that half an hour passes at once and the output is the
// same on every run. The program takes about half a second, and exits
// non-zero if the collection does not behave as described.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/ttlstore/ttlstore"
)

// idle is how long a session stays cached without a request, in seconds.
const idle = 30 * 60

// session is a login session, as the database keeps it and as the
// collection stores it.
type session struct {
	ID   string `json:"id"`
	User string `json:"user"`
	Role string `json:"role"`
}

// errNoSession is the database's answer for an unknown session id.
var errNoSession = errors.New("no such session")

// database is the slow source: every query takes delay and is counted.
type database struct {
	delay   time.Duration
	queries atomic.Int64
	rows    map[string]session
}

// get returns the session with the given id, after the database's delay;
// it gives up if ctx ends first.
func (db *database) get(ctx context.Context, id string) (session, error) {
	db.queries.Add(1)
	t := time.NewTimer(db.delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return session{}, ctx.Err()
	}
	s, ok := db.rows[id]
	if !ok {
		return session{}, fmt.Errorf("session %s: %w", id, errNoSession)
	}
	return s, nil
}

// sessions is the cache in front of the database.
type sessions struct {
	c        *ttlstore.Collection
	db       *database
	clk      clock.Clock
	requests atomic.Int64
}

// load is the function ReadOrLoad calls on a miss.
func (s *sessions) load(ctx context.Context, id string) (any, error) {
	return s.db.get(ctx, id)
}

// get returns the session with the given id, from the collection when it is
// there, and restarts its idle countdown. It touches a session at most once
// a minute: a write per request would cost more than it buys.
func (s *sessions) get(ctx context.Context, id string) (session, error) {
	s.requests.Add(1)
	d, err := s.c.ReadOrLoad(ctx, id, s.load)
	if err != nil {
		return session{}, err
	}
	if s.clk.Now().Sub(d.TS()) >= time.Minute {
		if d, err = s.c.Touch(id); err != nil {
			return session{}, err
		}
	}
	var sess session
	err = d.Decode(&sess)
	return sess, err
}

func main() {
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC))
	c, err := ttlstore.New(ttlstore.Options{DefaultTTL: ttlstore.TTL(idle), Clock: clk})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	db := &database{delay: 100 * time.Millisecond, rows: map[string]session{}}
	for i := range 10 {
		id := fmt.Sprintf("s%d", i)
		db.rows[id] = session{ID: id, User: fmt.Sprintf("user%d", i), Role: "reader"}
	}
	s := &sessions{c: c, db: db, clk: clk}
	ctx := context.Background()
	start := clk.Now()
	step := func(format string, args ...any) {
		fmt.Printf("+%-6v %s\n", clk.Now().Sub(start), fmt.Sprintf(format, args...))
	}

	// A burst: 1000 requests for 10 sessions at once, none cached.
	began := time.Now()
	burst(ctx, s, 1000, 10)
	elapsed := time.Since(began)
	step("1000 concurrent requests for 10 sessions: %d database queries (%d saved)", db.queries.Load(), 1000-db.queries.Load())
	check(db.queries.Load() == 10, "the burst made %d queries, want 10", db.queries.Load())
	check(elapsed < 3*db.delay, "the burst took %v, more than 3 queries' time", elapsed)
	step("  ... in about one query's time: the misses of each session waited for one load")

	burst(ctx, s, 1000, 10)
	step("1000 more: %d more queries (all cached)", db.queries.Load()-10)
	check(db.queries.Load() == 10, "cached sessions were queried again")

	// Sliding expiration: s1 is used every 20 minutes, s2 only at first.
	clk.Add(20 * time.Minute)
	_, err = s.get(ctx, "s1")
	check(err == nil, "s1: %v", err)
	step("s1 requested: touched, cached until 30 idle minutes from now")
	clk.Add(20 * time.Minute)
	before := db.queries.Load()
	_, err = s.get(ctx, "s1")
	check(err == nil && db.queries.Load() == before, "s1 was not served from the cache: %v", err)
	step("s1 requested: still cached (20 idle minutes), touched again")
	sess, err := s.get(ctx, "s2")
	check(err == nil && db.queries.Load() == before+1, "s2 was not loaded again: %v", err)
	step("s2 requested: expired after 30 idle minutes, loaded again for %s (%d queries in all)", sess.User, db.queries.Load())

	// A session the database does not know: the error reaches the caller
	// and is not cached, so a session created later is found.
	_, err = s.get(ctx, "s99")
	check(errors.Is(err, errNoSession), "s99: %v, want errNoSession", err)
	step("s99 requested: %v", err)
	db.rows["s99"] = session{ID: "s99", User: "newcomer", Role: "writer"}
	sess, err = s.get(ctx, "s99")
	check(err == nil, "s99: %v", err)
	step("s99 requested after it was created: %s, %s (errors are not cached)", sess.User, sess.Role)

	c.Sweep() // whatever the background sweeper has not removed yet
	st := c.Stats()
	step("collection: %d live, %d expired and removed; database: %d queries for %d requests",
		st.Live, st.Swept, db.queries.Load(), s.requests.Load())
	check(st.Live == 3 && st.Swept == 9, "stats %+v, want 3 live (s1, s2, s99) and 9 swept", st)
}

// burst makes n concurrent requests spread over the sessions s0 to
// s(ids-1), and fails if one does not get its session.
func burst(ctx context.Context, s *sessions, n, ids int) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("s%d", i%ids)
			sess, err := s.get(ctx, id)
			check(err == nil && sess.ID == id, "request for %s: %+v, %v", id, sess, err)
		}()
	}
	wg.Wait()
}

// check exits with the message if ok is false.
func check(ok bool, format string, args ...any) {
	if !ok {
		log.Fatalf(format, args...)
	}
}
