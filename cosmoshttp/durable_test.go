package cosmoshttp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ttlstore/ttlstore"
)

// TestDurableRestart: a Server over a directory serves, after a restart,
// the databases, containers (their defaultTtl as last replaced) and items
// it held, expiring at the same second; what was deleted stays deleted.
func TestDurableRestart(t *testing.T) {
	dir := t.TempDir()
	s, mock := newTestServer(t, Options{Dir: dir})
	pk := map[string]string{hdrPK: `["p"]`}
	steps := []struct{ method, path, body string }{
		{"POST", "/dbs/db/colls/c/docs", `{"id":"long","pk":"p","ttl":3600}`},
		{"POST", "/dbs/db/colls/c/docs", `{"id":"gone","pk":"p"}`},
		{"DELETE", "/dbs/db/colls/c/docs/gone", ""},
		{"POST", "/dbs/db/colls", `{"id":"tmp","partitionKey":{"paths":["/pk"]}}`},
		{"DELETE", "/dbs/db/colls/tmp", ""},
		{"POST", "/dbs", `{"id":".."}`},
		{"PUT", "/dbs/db/colls/c", `{"id":"c","partitionKey":{"paths":["/pk"]},"defaultTtl":30}`},
	}
	for _, st := range steps {
		if w := call(t, s, "", st.method, st.path, pk, st.body); w.Code >= 300 {
			t.Fatalf("%s %s: %d %s", st.method, st.path, w.Code, w.Body)
		}
	}
	before := dump(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "db-..")); err != nil {
		t.Fatalf("the database named .. is not in its own directory: %v", err)
	}
	s2, err := New(Options{Dir: dir, Clock: mock})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if after := dump(s2); after != before {
		t.Fatalf("after a restart:\n%s\nwant:\n%s", after, before)
	}
	// "a" was written at 12:00:00 with no ttl: under defaultTtl 30 (set by
	// the PUT) it expires at 12:00:30; "long" at 13:00:00.
	mock.Add(29 * time.Second)
	if w := call(t, s2, "", "GET", "/dbs/db/colls/c/docs/a", pk, ""); w.Code != 200 {
		t.Fatalf("a at 29 s: %d", w.Code)
	}
	mock.Add(time.Second)
	if w := call(t, s2, "", "GET", "/dbs/db/colls/c/docs/a", pk, ""); w.Code != 404 {
		t.Fatalf("a at 30 s: %d", w.Code)
	}
	if w := call(t, s2, "", "GET", "/dbs/db/colls/c/docs/long", pk, ""); w.Code != 200 {
		t.Fatalf("long at 30 s: %d", w.Code)
	}
	if w := call(t, s2, "", "GET", "/dbs/db/colls/tmp", nil, ""); w.Code != 404 {
		t.Fatalf("a deleted container after a restart: %d", w.Code)
	}
}

// TestDurableDamage: a properties file that does not parse makes New fail
// with ttlstore.ErrCorrupt, naming it; a temporary file a crash left behind
// is ignored.
func TestDurableDamage(t *testing.T) {
	dir := t.TempDir()
	s, _ := newTestServer(t, Options{Dir: dir})
	s.Close()
	coll := filepath.Join(dir, "db-db", "coll-c")
	if err := os.WriteFile(filepath.Join(coll, "container.json.tmp"), []byte(`{"id":"c","parti`), 0o600); err != nil {
		t.Fatal(err)
	}
	s2, err := New(Options{Dir: dir})
	if err != nil {
		t.Fatalf("a torn temporary file: %v", err)
	}
	s2.Close()
	b, _ := os.ReadFile(filepath.Join(coll, "container.json"))
	if err := os.WriteFile(filepath.Join(coll, "container.json"), b[:len(b)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = New(Options{Dir: dir})
	if !errors.Is(err, ttlstore.ErrCorrupt) || !strings.Contains(err.Error(), "container.json") {
		t.Fatalf("a torn container.json: %v", err)
	}
}

// TestDurableLocked: a second Server over the same directory is refused
// while the first holds it (each container's collection locks its own
// directory).
func TestDurableLocked(t *testing.T) {
	dir := t.TempDir()
	newTestServer(t, Options{Dir: dir})
	s2, err := New(Options{Dir: dir})
	if err == nil {
		s2.Close()
		t.Fatal("a second server opened a directory in use")
	}
}
