// Command partitions is a multi-tenant session store: sessions are
// documents partitioned by tenant (PartitionKeyPath "/tenant"), so two
// tenants may use the same session id, a tenant's sessions are listed at
// the cost of that tenant alone, and a tenant that leaves is purged at once
// with DeletePartition, while the other tenants' sessions, and the purged
// tenant's new logins, are untouched.
//
// It runs on a mock clock, so that the 30-minute idle timeout passes at
// once, and exits non-zero if the store does not behave as described.
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

// session is one login of a user of a tenant.
type session struct {
	ID     string `json:"id"`
	Tenant string `json:"tenant"`
	User   string `json:"user"`
}

// store keeps the sessions of every tenant.
type store struct {
	c        *ttlstore.Collection
	sessions *ttlstore.Typed[session]
}

// login starts a session.
func (s *store) login(tenant, id, user string) error {
	_, err := s.sessions.Create(session{ID: id, Tenant: tenant, User: user})
	return err
}

// user returns the user of a live session, restarting its countdown.
func (s *store) user(tenant, id string) (string, error) {
	pk := ttlstore.PartitionKeyString(tenant)
	if _, err := s.c.TouchIn(pk, id); err != nil {
		return "", err
	}
	v, err := s.sessions.ReadIn(pk, id)
	return v.User, err
}

// users lists the users with a live session in a tenant.
func (s *store) users(tenant string) []string {
	var out []string
	for v, err := range s.sessions.AllIn(ttlstore.PartitionKeyString(tenant)) {
		if err == nil {
			out = append(out, v.User)
		}
	}
	slices.Sort(out)
	return out
}

// purge logs out every user of a tenant.
func (s *store) purge(tenant string) error {
	return s.c.DeletePartition(ttlstore.PartitionKeyString(tenant))
}

func main() {
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	c, err := ttlstore.New(ttlstore.Options{
		DefaultTTL:       ttlstore.TTL(30 * 60), // idle sessions end after 30 minutes
		PartitionKeyPath: "/tenant",
		Clock:            clk,
		SweepInterval:    ttlstore.ManualSweep, // main sweeps when it wants
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	s := &store{c: c, sessions: ttlstore.NewTyped[session](c)}

	check := func(ok bool, what string, args ...any) {
		if !ok {
			log.Fatalf("FAIL: "+what, args...)
		}
		fmt.Printf("ok: "+what+"\n", args...)
	}

	for _, l := range []struct{ tenant, id, user string }{
		{"acme", "s1", "ann"}, {"acme", "s2", "al"}, {"acme", "s3", "amy"},
		{"globex", "s1", "bob"}, {"globex", "s2", "bea"},
	} {
		if err := s.login(l.tenant, l.id, l.user); err != nil {
			log.Fatal(err)
		}
	}
	u1, _ := s.user("acme", "s1")
	u2, _ := s.user("globex", "s1")
	check(u1 == "ann" && u2 == "bob", "session s1 is two sessions: acme's %s, globex's %s", u1, u2)
	_, err = c.Read("s1")
	check(errors.Is(err, ttlstore.ErrPartitionKeyRequired), "Read without a tenant is refused: %v", err)
	check(slices.Equal(s.users("acme"), []string{"al", "amy", "ann"}), "acme's users: %v", s.users("acme"))

	// Twenty minutes on, ann and bob are active again; then acme leaves.
	clk.Add(20 * time.Minute)
	s.user("acme", "s1")
	s.user("globex", "s1")
	check(s.purge("acme") == nil, "acme purged")
	_, err = s.user("acme", "s1")
	check(errors.Is(err, ttlstore.ErrNotFound), "acme's sessions are gone at once: %v", err)
	check(len(s.users("acme")) == 0, "acme lists no users")
	check(slices.Equal(s.users("globex"), []string{"bea", "bob"}), "globex's users: %v", s.users("globex"))
	check(s.login("acme", "s1", "ann") == nil, "ann logs in to acme again, with the same session id")
	// The purged s2 and s3 are still in memory, invisible (the purged s1
	// was replaced by ann's new login).
	st := c.Stats()
	check(st.Deleted == 2, "%d purged sessions wait for the sweeper", st.Deleted)
	n := c.Sweep()
	check(n == 2, "the sweep removes them: %d", n)

	// Fifteen more minutes: bea (idle 35 minutes) expires; bob (15) and
	// the new ann (15) do not.
	clk.Add(15 * time.Minute)
	check(slices.Equal(s.users("globex"), []string{"bob"}), "globex after bea's timeout: %v", s.users("globex"))
	check(slices.Equal(s.users("acme"), []string{"ann"}), "acme after the purge: %v", s.users("acme"))
	fmt.Println("partitions: all checks passed")
}
