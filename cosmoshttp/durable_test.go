package cosmoshttp

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
	// The database named ".." is a directory of its own, like any other.
	names, _ := filepath.Glob(filepath.Join(dir, "*"))
	dbs := 0
	for _, n := range names {
		switch b := filepath.Base(n); {
		case strings.HasPrefix(b, "db-"):
			dbs++
		case b != "trash" && b != "LOCK":
			t.Fatalf("%s in the directory", b)
		}
	}
	if dbs != 2 {
		t.Fatalf("%d database directories, want 2: %v", dbs, names)
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
	colls, _ := filepath.Glob(filepath.Join(dir, "db-*", "coll-*"))
	if len(colls) != 1 {
		t.Fatalf("container directories: %v", colls)
	}
	coll := colls[0]
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
// with ErrLocked while the first holds it, whether or not the directory
// holds a container yet (the catalog is the Server's), and opens it once
// the first is closed.
func TestDurableLocked(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first func(t *testing.T, dir string) *Server
	}{
		{"with a container", func(t *testing.T, dir string) *Server {
			s, _ := newTestServer(t, Options{Dir: dir})
			return s
		}},
		{"empty", func(t *testing.T, dir string) *Server {
			s, err := New(Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s1 := tc.first(t, dir)
			s2, err := New(Options{Dir: dir})
			if !errors.Is(err, ttlstore.ErrLocked) {
				if err == nil {
					s2.Close()
				}
				t.Fatalf("a second server over a directory in use: %v, want ErrLocked", err)
			}
			if err := s1.Close(); err != nil {
				t.Fatal(err)
			}
			s3, err := New(Options{Dir: dir})
			if err != nil {
				t.Fatalf("after the first server closed: %v", err)
			}
			s3.Close()
		})
	}
}

// TestDurableDiskFailures: when the disk refuses a properties file (a full
// disk, a failed fsync), the create or replace answers 500 and changes
// nothing, now and after a restart.
func TestDurableDiskFailures(t *testing.T) {
	tests := []struct{ name, method, path, body string }{
		{"create database", "POST", "/dbs", `{"id":"new"}`},
		{"create container", "POST", "/dbs/db/colls", `{"id":"new","partitionKey":{"paths":["/pk"]}}`},
		{"replace container", "PUT", "/dbs/db/colls/c", `{"id":"c","partitionKey":{"paths":["/pk"]},"defaultTtl":5}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s, mock := newTestServer(t, Options{Dir: dir})
			before := dump(s)
			syncFile = func(*os.File) error { return syscall.ENOSPC }
			w := call(t, s, "", tt.method, tt.path, nil, tt.body)
			syncFile = (*os.File).Sync
			if w.Code != http.StatusInternalServerError {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			if _, msg := errorBody(t, w); !strings.Contains(msg, "no space") {
				t.Fatalf("message %q does not say what failed", msg)
			}
			if after := dump(s); after != before {
				t.Fatalf("a failed write changed the server:\n%s\n---\n%s", before, after)
			}
			s.Close()
			s2, err := New(Options{Dir: dir, Clock: mock})
			if err != nil {
				t.Fatalf("restart after a failed write: %v", err)
			}
			defer s2.Close()
			if after := dump(s2); after != before {
				t.Fatalf("after a restart:\n%s\n---\n%s", after, before)
			}
			mock.Add(10 * time.Second) // defaultTtl 5 must not have taken hold
			if w := call(t, s2, "", "GET", "/dbs/db/colls/c/docs/a", map[string]string{hdrPK: `["p"]`}, ""); w.Code != 200 {
				t.Fatalf("read after 10 s: %d", w.Code)
			}
		})
	}
}

// TestDurableUnfinishedCreate: a database or container directory without
// its properties file (a create a crash cut short) is not loaded, and is
// cleared away.
func TestDurableUnfinishedCreate(t *testing.T) {
	dir := t.TempDir()
	s, mock := newTestServer(t, Options{Dir: dir})
	before := dump(s)
	s.Close()
	dbDirs, _ := filepath.Glob(filepath.Join(dir, "db-*"))
	for _, d := range []string{filepath.Join(dir, "db-half"), filepath.Join(dbDirs[0], "coll-half", "data")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	s2, err := New(Options{Dir: dir, Clock: mock})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if after := dump(s2); after != before {
		t.Fatalf("after a restart:\n%s\n---\n%s", after, before)
	}
	for _, d := range []string{filepath.Join(dir, "db-half"), filepath.Join(dbDirs[0], "coll-half")} {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s is still there: %v", d, err)
		}
	}
}
