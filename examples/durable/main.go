// Command durable shows a durable collection surviving a crash. A child
// process (this program, run again) opens a collection in a directory,
// writes a few documents, deletes one, and exits without Close, as a
// process that is killed would. The parent then reopens the directory and
// finds every write the child was told had succeeded, each document with
// its original _ts and _etag, and the document with "ttl":60 expires exactly
// 60 seconds after its _ts, as if there had been no crash: expiry is
// _ts + ttl, not a timer that a restart could reset.
//
// Both processes use a mock clock set to the same instant, so the output
// is the same on every run; a service leaves Options.Clock nil. The program
// exits non-zero if the collection does not behave as described.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/ttlstore/ttlstore"
)

// childEnv names the environment variable that makes the program the child,
// and holds the collection's directory.
const childEnv = "TTLSTORE_EXAMPLE_CHILD"

// start is the mock clock's time when the child starts writing.
var start = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

// ack is a line of the child's stdout: a write the collection acknowledged,
// or, last, the child's clock when it crashed.
type ack struct {
	Op      string          `json:"op"` // "write", "delete" or "crash"
	ID      string          `json:"id,omitempty"`
	Doc     json.RawMessage `json:"doc,omitempty"`     // as the write returned it, _ts and _etag included
	TS      int64           `json:"ts,omitempty"`      // its _ts, in Unix seconds
	ETag    string          `json:"etag,omitempty"`    // its _etag
	Expires int64           `json:"expires,omitempty"` // its expiry, in Unix seconds; 0 for never
	Clock   int64           `json:"clock,omitempty"`   // Unix seconds
}

// newAck returns the ack of a write that returned d.
func newAck(d ttlstore.Document) ack {
	a := ack{Op: "write", ID: d.ID(), Doc: d.JSON(), TS: d.TS().Unix(), ETag: d.ETag()}
	if t, ok := d.ExpiresAt(); ok {
		a.Expires = t.Unix()
	}
	return a
}

// describe shows a document's _ts and expiry.
func (a ack) describe() string {
	exp := "never expires"
	if a.Expires != 0 {
		exp = "expires at " + time.Unix(a.Expires, 0).UTC().Format(time.TimeOnly)
	}
	return "_ts " + time.Unix(a.TS, 0).UTC().Format(time.TimeOnly) + ", " + exp
}

func main() {
	log.SetFlags(0)
	if dir := os.Getenv(childEnv); dir != "" {
		if err := child(dir); err != nil {
			log.Fatal("child: ", err)
		}
		// No Close: the process ends as a killed one would, the log
		// neither closed nor synced again, the directory's lock
		// released only by the process's death.
		os.Exit(0)
	}
	if err := parent(); err != nil {
		log.Fatal(err)
	}
}

// options are the collection's options, the same in both processes.
func options(clk clock.Clock, onExpire func(ttlstore.Document)) ttlstore.Options {
	return ttlstore.Options{
		DefaultTTL: ttlstore.TTL(3600), // documents without a ttl live an hour
		Clock:      clk,
		Sync:       ttlstore.SyncAlways, // a write returns once fsynced
		// A service keeps the background sweeper; sweeping by hand keeps
		// the output in the same order every time.
		SweepInterval: ttlstore.ManualSweep,
		OnExpire:      onExpire,
	}
}

// child writes to the collection in dir and reports each acknowledged write
// on stdout. It leaves the collection open.
func child(dir string) error {
	clk := clock.NewMock()
	clk.Set(start)
	c, err := ttlstore.Open(dir, options(clk, nil))
	if err != nil {
		return err
	}
	out := json.NewEncoder(os.Stdout)
	write := func(doc string) error {
		d, err := c.Upsert([]byte(doc))
		if err != nil {
			return err
		}
		return out.Encode(newAck(d))
	}
	for _, doc := range []string{
		`{"id":"a-minute","ttl":60,"note":"its own ttl: one minute"}`,
		`{"id":"an-hour","note":"no ttl: the DefaultTTL, an hour"}`,
		`{"id":"forever","ttl":-1,"note":"ttl -1: never expires"}`,
	} {
		if err := write(doc); err != nil {
			return err
		}
	}
	clk.Add(10 * time.Second)
	if err := write(`{"id":"scratch"}`); err != nil {
		return err
	}
	if err := c.Delete("scratch"); err != nil {
		return err
	}
	if err := out.Encode(ack{Op: "delete", ID: "scratch"}); err != nil {
		return err
	}
	return out.Encode(ack{Op: "crash", Clock: clk.Now().Unix()})
}

// parent runs the child, then reopens its directory and checks what it
// finds against what the child was told.
func parent() error {
	tmp, err := os.MkdirTemp("", "ttlstore-durable-example-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "sessions")

	// With go run, the executable is the binary go run built.
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("child: %w", err)
	}

	acked, crashed, err := readAcks(stdout)
	if err != nil {
		return err
	}

	clk := clock.NewMock()
	clk.Set(crashed)
	var expired []string
	c, err := ttlstore.Open(dir, options(clk, func(d ttlstore.Document) { expired = append(expired, d.ID()) }))
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Printf("\nparent process: reopened at %s: %d live documents, %d torn bytes cut\n",
		crashed.Format(time.TimeOnly), c.Len(), c.Stats().TornBytes)
	if err := check(c, acked); err != nil {
		return err
	}
	if _, err := c.Read("scratch"); !errors.Is(err, ttlstore.ErrNotFound) {
		return fmt.Errorf("scratch, deleted before the crash: %v", err)
	}
	fmt.Println("  scratch   still deleted")

	// a-minute was written at start with "ttl":60: it expires at
	// start+60s, one second after start+59s.
	clk.Set(start.Add(59 * time.Second))
	if _, err := c.Read("a-minute"); err != nil {
		return fmt.Errorf("a-minute, 59 s after its _ts: %w", err)
	}
	fmt.Printf("\nat %s (+59 s): a-minute is live\n", clk.Now().Format(time.TimeOnly))
	clk.Add(time.Second)
	if _, err = c.Read("a-minute"); !errors.Is(err, ttlstore.ErrNotFound) {
		return fmt.Errorf("a-minute, 60 s after its _ts: %v", err)
	}
	fmt.Printf("at %s (+60 s): a-minute is gone: %v\n", clk.Now().Format(time.TimeOnly), err)
	delete(acked, "a-minute")

	clk.Add(time.Second)
	n := c.Sweep()
	fmt.Printf("at %s (+61 s): sweep removed %d, OnExpire saw %v\n", clk.Now().Format(time.TimeOnly), n, expired)
	fmt.Printf("  %d live documents\n", c.Len())
	if err := check(c, acked); err != nil {
		return err
	}
	return c.Close()
}

// readAcks reads what the child printed: the writes and deletes it was
// told had succeeded, as the documents that should be back by id, and the
// clock's time when it crashed.
func readAcks(stdout []byte) (map[string]ack, time.Time, error) {
	fmt.Println("child process: open, write, crash")
	acked := map[string]ack{} // what the child was told, by id
	var crashed time.Time
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	for sc.Scan() {
		var a ack
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			return nil, time.Time{}, fmt.Errorf("child said %q: %w", sc.Text(), err)
		}
		switch a.Op {
		case "write":
			acked[a.ID] = a
			fmt.Printf("  wrote   %-9s %s\n", a.ID, a.describe())
		case "delete":
			delete(acked, a.ID)
			fmt.Printf("  deleted %s\n", a.ID)
		case "crash":
			crashed = time.Unix(a.Clock, 0).UTC()
			fmt.Printf("  exited at %s without Close\n", crashed.Format(time.TimeOnly))
		}
	}
	if crashed.IsZero() {
		return nil, time.Time{}, errors.New("the child did not report its crash")
	}
	return acked, crashed, nil
}

// check returns an error unless c holds exactly the documents of acked,
// each with the JSON, _ts, _etag and expiry the child was told of, and
// prints them.
func check(c *ttlstore.Collection, acked map[string]ack) error {
	if n := c.Len(); n != len(acked) {
		return fmt.Errorf("%d live documents, want %d", n, len(acked))
	}
	for _, id := range []string{"a-minute", "an-hour", "forever"} {
		want, ok := acked[id]
		if !ok {
			continue
		}
		d, err := c.Read(id)
		if err != nil {
			return fmt.Errorf("%s, acknowledged before the crash: %w", id, err)
		}
		if got := newAck(d); got.TS != want.TS || got.ETag != want.ETag || got.Expires != want.Expires || !bytes.Equal(got.Doc, want.Doc) {
			return fmt.Errorf("%s is %s, %s; the child was told %s, %s", id, got.Doc, got.describe(), want.Doc, want.describe())
		}
		fmt.Printf("  %-9s %s: same JSON, _ts and _etag as before the crash\n", id, newAck(d).describe())
	}
	return nil
}
