package ttlstore_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
)

// The kill -9 test runs the test binary again as a child process that
// writes to a durable collection from many goroutines and reports every
// acknowledged write on stdout; the parent kills it at a random moment and
// reopens the directory. Every acknowledged write must be there, and nothing
// else but at most one write per goroutine that was under way at the kill.
//
// The child's stdout, one line per acknowledged operation, in the order
// each goroutine's operations returned:
//
//	put <id> <seq> <etag> <ts>  Create, Replace or Upsert of <id> returned
//	                            a document with that _etag and _ts
//	del <id> <seq>              Delete of <id> returned nil
//	compact                     Compact returned nil (for the log only)
//	fail <error>                an operation failed: the child exits with 2
//
// <id> is r<round>-g<goroutine>-<n> and <seq> numbers the operations of
// one goroutine in one round from 1, deletes included; the document a put
// stores is killDoc(id, g, seq), so the parent knows what any seq wrote.

// Environment variables that make TestKill9Child run, and configure it.
const (
	killEnvDir    = "TTLSTORE_KILL_CHILD_DIR"   // the collection's directory
	killEnvSync   = "TTLSTORE_KILL_CHILD_SYNC"  // the SyncPolicy, as an integer
	killEnvRound  = "TTLSTORE_KILL_CHILD_ROUND" // the round, for new ids
	killEnvRounds = "TTLSTORE_KILL_ROUNDS"      // rounds per policy (default 5)
)

// killWriters is the number of writing goroutines in the child.
const killWriters = 16

// killTTL is the ttl of the documents that have one: far beyond the test.
const killTTL = 86400

// killOptions are the options of the child and of the parent's reopening.
func killOptions(policy ttlstore.SyncPolicy) ttlstore.Options {
	return ttlstore.Options{
		DefaultTTL:    ttlstore.TTL(ttlstore.Never), // only documents with a ttl expire
		SweepInterval: ttlstore.ManualSweep,
		Sync:          policy,
	}
}

// killDoc is the document that operation seq of goroutine g writes to id:
// its ttl (none, killTTL or -1) and the size of its pad (a mix of small,
// medium and a few large documents, one in 400 over 1 MiB) follow from seq
// and g.
func killDoc(id string, g, seq int) (doc []byte, ttl int32, hasTTL bool) {
	h := uint64(seq)*0x9E3779B97F4A7C15 + uint64(g)*0xBF58476D1CE4E5B9
	h ^= h >> 29
	var pad int
	switch p := h % 100; {
	case p < 79:
		pad = int(h>>8) % 64
	case p < 99:
		pad = 200 + int(h>>8)%1800
	case (h>>16)%4 != 0:
		pad = 8<<10 + int(h>>8)%(8<<10)
	default: // near the 2 MiB limit: a write batch of more than 1 MiB
		pad = 1<<20 + int(h>>8)%(512<<10)
	}
	b := fmt.Appendf(nil, `{"id":%q,"g":%d,"seq":%d`, id, g, seq)
	switch (h >> 40) % 3 {
	case 1:
		b = fmt.Appendf(b, `,"ttl":%d`, killTTL)
		ttl, hasTTL = killTTL, true
	case 2:
		b = append(b, `,"ttl":-1`...)
		ttl, hasTTL = ttlstore.Never, true
	}
	b = append(b, `,"pad":"`...)
	b = append(b, bytes.Repeat([]byte{'a' + byte(seq%26)}, pad)...)
	return append(b, `"}`...), ttl, hasTTL
}

// TestKill9Child is the child of TestKill9KeepsAcknowledgedWrites: it
// writes until it is killed. It is skipped unless killEnvDir is set.
func TestKill9Child(t *testing.T) {
	dir := os.Getenv(killEnvDir)
	if dir == "" {
		t.Skip("runs only as the child of TestKill9KeepsAcknowledgedWrites")
	}
	policy, err := strconv.Atoi(os.Getenv(killEnvSync))
	if err != nil {
		fmt.Printf("fail %s: %v\n", killEnvSync, err)
		os.Exit(2)
	}
	round := os.Getenv(killEnvRound)

	var mu sync.Mutex // mu protects out
	out := bufio.NewWriter(os.Stdout)
	// report prints one line, and flushes it before it returns: a line
	// the parent reads is an operation that returned nil.
	report := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format+"\n", args...)
		if err := out.Flush(); err != nil {
			os.Exit(3) // the parent is gone
		}
	}
	fail := func(err error) {
		report("fail %s", strings.ReplaceAll(err.Error(), "\n", " "))
		os.Exit(2)
	}

	c, err := ttlstore.Open(dir, killOptions(ttlstore.SyncPolicy(policy)))
	if err != nil {
		fail(err)
	}
	for g := range killWriters {
		go func() {
			rng := rand.New(rand.NewPCG(uint64(g), rand.Uint64()))
			var live []string // ids of this goroutine's live documents
			next := 0         // ids made so far
			for seq := 1; ; seq++ {
				if g == 0 && seq%256 == 0 {
					// Compaction, so that kills land in it and later
					// rounds recover snapshots too.
					if err := c.Compact(); err != nil {
						fail(err)
					}
					report("compact")
				}
				switch p := rng.IntN(20); {
				case p < 5 && len(live) > 0: // delete one of its own
					i := rng.IntN(len(live))
					id := live[i]
					if err := c.Delete(id); err != nil {
						fail(err)
					}
					live[i] = live[len(live)-1]
					live = live[:len(live)-1]
					report("del %s %d", id, seq)
				case p < 13 && len(live) > 0: // rewrite one of its own
					id := live[rng.IntN(len(live))]
					doc, _, _ := killDoc(id, g, seq)
					write := c.Upsert
					if p%2 == 0 {
						write = c.Replace
					}
					d, err := write(doc)
					if err != nil {
						fail(err)
					}
					report("put %s %d %s %d", id, seq, d.ETag(), d.TS().Unix())
				default: // a new id
					next++
					id := fmt.Sprintf("r%s-g%d-%d", round, g, next)
					doc, _, _ := killDoc(id, g, seq)
					d, err := c.Create(doc)
					if err != nil {
						fail(err)
					}
					live = append(live, id)
					report("put %s %d %s %d", id, seq, d.ETag(), d.TS().Unix())
				}
			}
		}()
	}
	select {} // the parent kills the process
}

// killOp is an acknowledged operation, as the child reported it.
type killOp struct {
	id   string
	put  bool // a put; or a delete
	seq  int
	etag string // a put's _etag
	ts   int64  // and _ts, in Unix seconds
}

// killState is what a reopened directory must hold of the rounds already
// checked: each id's _etag, and the _etags ever acknowledged.
type killState struct {
	docs  map[string]string
	etags map[string]string // _etag -> the id it was acknowledged for
}

// TestKill9KeepsAcknowledgedWrites kills a child writing to a durable
// collection with SIGKILL, round after round on the same directory, and
// checks after each kill that reopening the directory finds every write the
// child had acknowledged (and printed) before it died, and nothing else but
// at most one unacknowledged operation per writing goroutine: the one it
// was in. Rounds after the first also recover logs and snapshots that
// earlier recoveries wrote to. Set TTLSTORE_KILL_ROUNDS for more rounds.
func TestKill9KeepsAcknowledgedWrites(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("needs SIGKILL")
	}
	if os.Getenv(killEnvDir) != "" {
		t.Skip("the child runs only TestKill9Child")
	}
	rounds := 5
	if raceEnabled {
		rounds = 3 // so that -race -count=20 fits go test's default timeout
		if ttlstore.RaceRepeat(t) {
			rounds = 1
		}
	}
	if s := os.Getenv(killEnvRounds); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, killEnvRounds)
		rounds = n
	}
	for _, policy := range []ttlstore.SyncPolicy{ttlstore.SyncNever, ttlstore.SyncAlways} {
		t.Run(policy.String(), func(t *testing.T) {
			dir := t.TempDir()
			st := &killState{docs: map[string]string{}, etags: map[string]string{}}
			var total int
			for round := 1; round <= rounds; round++ {
				ops := runKillChild(t, dir, policy, round)
				total += len(ops)
				checkKilled(t, dir, policy, round, ops, st)
				if t.Failed() {
					return
				}
			}
			t.Logf("%d rounds, %d acknowledged operations, %d documents at the end", rounds, total, len(st.docs))
		})
	}
}

// runKillChild runs TestKill9Child on dir for one round, kills it at a
// random moment after its first acknowledged write, and returns the
// operations it acknowledged, in the order it printed them.
func runKillChild(t *testing.T, dir string, policy ttlstore.SyncPolicy, round int) []killOp {
	cmd := exec.Command(os.Args[0], "-test.run=^TestKill9Child$", "-test.count=1", "-test.timeout=5m")
	cmd.Env = append(os.Environ(),
		killEnvDir+"="+dir,
		killEnvSync+"="+strconv.Itoa(int(policy)),
		killEnvRound+"="+strconv.Itoa(round),
	)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var once sync.Once
	var waitErr error
	stop := func() {
		once.Do(func() {
			cmd.Process.Kill()
			io.Copy(io.Discard, stdout) // Wait must not close the pipe under a reader
			waitErr = cmd.Wait()
		})
	}
	t.Cleanup(stop) // the child must not outlive the test, whatever happens

	// Read the lines on a goroutine, so that the child never blocks on a
	// full pipe; first is closed at the first line.
	var lines []string
	first := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		r := bufio.NewReader(stdout)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				// A line cut short (no '\n') is not counted.
				if err == io.EOF {
					err = nil
				}
				done <- err
				return
			}
			if len(lines) == 0 {
				close(first)
			}
			lines = append(lines, strings.TrimSuffix(line, "\n"))
		}
	}()

	// The delay only picks where the kill lands; nothing waits for an
	// effect of time passing.
	select {
	case <-first:
		<-time.After(time.Duration(20+rand.IntN(181)) * time.Millisecond)
	case err := <-done:
		stop()
		t.Fatalf("round %d: the child exited before writing anything (%v, %v): %s", round, err, waitErr, stderr.Bytes())
	}
	cmd.Process.Kill()         // fails only if it has exited, which Wait reports
	require.NoError(t, <-done) // every line written before the kill
	stop()

	var ops []killOp
	compactions := 0
	for _, line := range lines {
		f := strings.Fields(line)
		switch {
		case len(f) == 5 && f[0] == "put", len(f) == 3 && f[0] == "del":
			seq, err := strconv.Atoi(f[2])
			require.NoError(t, err, line)
			op := killOp{id: f[1], put: f[0] == "put", seq: seq}
			if op.put {
				op.etag = f[3]
				op.ts, err = strconv.ParseInt(f[4], 10, 64)
				require.NoError(t, err, line)
			}
			ops = append(ops, op)
		case line == "compact":
			compactions++
		case len(f) > 0 && f[0] == "fail":
			t.Fatalf("round %d: the child failed: %s", round, line)
		default:
			// The test framework's own output, which a killed child
			// never gets to print.
			t.Errorf("round %d: unexpected line from the child: %q", round, line)
		}
	}
	if raceEnabled && bytes.Contains(stderr.Bytes(), []byte("WARNING: DATA RACE")) {
		// The child is built with the race detector too.
		t.Errorf("round %d: the race detector reported in the child:\n%s", round, stderr.Bytes())
	}
	var exit *exec.ExitError
	if !errors.As(waitErr, &exit) || exit.ExitCode() != -1 {
		t.Fatalf("round %d: the child ended with %v, not by the kill: %s", round, waitErr, stderr.Bytes())
	}
	t.Logf("round %d: killed after %d acknowledged operations and %d compactions", round, len(ops), compactions)
	return ops
}

// killIDGoroutine returns the goroutine of an id of round, or false when
// the id is not one of that round's.
func killIDGoroutine(id string, round int) (int, bool) {
	rest, ok := strings.CutPrefix(id, "r"+strconv.Itoa(round)+"-g")
	if !ok {
		return 0, false
	}
	gs, _, ok := strings.Cut(rest, "-")
	g, err := strconv.Atoi(gs)
	return g, ok && err == nil && g >= 0 && g < killWriters
}

// checkKilled reopens dir after round's kill and checks it against the
// acknowledged ops of the round and st, what earlier rounds left, which it
// then extends with this round's outcome.
func checkKilled(t *testing.T, dir string, policy ttlstore.SyncPolicy, round int, lines []killOp, st *killState) {
	c, err := ttlstore.Open(dir, killOptions(policy))
	require.NoError(t, err, "round %d: reopen", round)
	defer func() { require.NoError(t, c.Close()) }()
	require.NoError(t, c.CheckInvariants())
	// TornBytes is only reported: whether the kill tore a record depends
	// on where it landed.
	t.Logf("round %d: reopened: %d live documents, TornBytes %d", round, c.Len(), c.Stats().TornBytes)

	// What each goroutine acknowledged: it numbers its operations 1, 2,
	// 3... and prints them in that order.
	var acked [killWriters]int
	ops := map[string][]killOp{} // by id, in order
	for _, op := range lines {
		g, ok := killIDGoroutine(op.id, round)
		if !ok {
			t.Fatalf("round %d: the child reported id %q", round, op.id)
		}
		if op.seq != acked[g]+1 {
			t.Fatalf("round %d: goroutine %d acknowledged operation %d after %d", round, g, op.seq, acked[g])
		}
		acked[g] = op.seq
		if op.put {
			if prev, ok := st.etags[op.etag]; ok {
				t.Errorf("round %d: _etag %s of %s was already acknowledged for %s", round, op.etag, op.id, prev)
			}
			st.etags[op.etag] = op.id
		}
		ops[op.id] = append(ops[op.id], op)
	}

	// Earlier rounds' documents are exactly as the last check found them.
	before := len(st.docs)
	found := map[string]ttlstore.Document{}
	for d := range c.All() {
		found[d.ID()] = d
	}
	for id, etag := range st.docs {
		d, ok := found[id]
		switch {
		case !ok:
			t.Errorf("round %d: %s (_etag %s), found by an earlier check, is gone", round, id, etag)
		case d.ETag() != etag:
			t.Errorf("round %d: %s has _etag %s, an earlier check found %s", round, id, d.ETag(), etag)
		}
	}

	// This round's: each id as its last acknowledged operation left it,
	// but for at most one unacknowledged operation per goroutine: a put
	// numbered one past its last acknowledged one, or a delete.
	var extra [killWriters][]string // what the unacknowledged operation explains
	for id, d := range found {
		if _, ok := st.docs[id]; ok {
			continue
		}
		g, ok := killIDGoroutine(id, round)
		if !ok {
			t.Errorf("round %d: unexpected document %.200s", round, d)
			continue
		}
		var body map[string]any
		require.NoError(t, d.Decode(&body), id)
		seq, _ := body["seq"].(float64)
		delete(body, "_ts")
		delete(body, "_etag")
		doc, ttl, hasTTL := killDoc(id, g, int(seq))
		var want map[string]any
		require.NoError(t, json.Unmarshal(doc, &want))
		gotTTL, gotHas := d.TTL()
		if !reflect.DeepEqual(body, want) || gotTTL != ttl || gotHas != hasTTL {
			t.Errorf("round %d: %s is not what operation %v of goroutine %d wrote: %.200s", round, id, seq, g, d)
			continue
		}
		list := ops[id]
		var last killOp
		if len(list) > 0 {
			last = list[len(list)-1]
		}
		switch {
		case last.put && last.seq == int(seq):
			if d.ETag() != last.etag || d.TS().Unix() != last.ts {
				t.Errorf("round %d: %s has _etag %s and _ts %d; operation %d acknowledged %s and %d", round, id, d.ETag(), d.TS().Unix(), last.seq, last.etag, last.ts)
			}
		case int(seq) == acked[g]+1:
			extra[g] = append(extra[g], fmt.Sprintf("%s: put %d", id, acked[g]+1))
		default:
			t.Errorf("round %d: %s holds operation %d (_etag %s) of goroutine %d, whose last operation on it acknowledged is %+v, of %d", round, id, int(seq), d.ETag(), g, last, acked[g])
		}
		st.docs[id] = d.ETag()
	}
	for id, list := range ops {
		g, _ := killIDGoroutine(id, round)
		if _, ok := found[id]; !ok && list[len(list)-1].put {
			extra[g] = append(extra[g], fmt.Sprintf("%s: delete", id))
		}
	}
	survived := 0
	for g, ex := range extra {
		if len(ex) > 1 {
			t.Errorf("round %d: goroutine %d (%d operations acknowledged) shows %d unacknowledged changes, but can have had only one under way: %v", round, g, acked[g], len(ex), ex)
		}
		survived += len(ex)
	}
	t.Logf("round %d: %d documents of the round; %d operations under way at the kill (returned but not yet printed, mostly) took effect", round, len(found)-before, survived)
}
