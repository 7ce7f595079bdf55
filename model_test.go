package ttlstore_test

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/model"
	"github.com/ttlstore/ttlstore/internal/vfs"
)

// TestModel runs random sequences of operations on a Collection and on the
// reference model (internal/model) side by side, and after every operation
// requires that everything observable agrees: error classes, returned
// documents (id, _ts, _etag, ttl, expiry, JSON, weight), Read, All, Query,
// Len, Stats, DefaultTTL, Sweep counts and what OnExpire reported; and that
// the collection's internal invariants hold. Half the machines have a bound
// (MaxDocuments, MaxBytes, an eviction policy, and SetLimits): see
// model_bound_test.go for what is checked of it.
//
// The collection has no background sweeper and a mock clock that only this
// test moves, so a run is deterministic for a given rapid seed, but for
// what a bounded collection does at its bound, which depends on its random
// hash seed: which expired documents a write sweeps to make room, and
// EvictColdest's victims. A failure there may take a few runs of its seed
// (or fail file) to reproduce. A small id pool makes operations collide;
// clock moves include sub-second steps, jumps to exactly the next expiry
// second or one nanosecond before it, and jumps of years.
//
// By default it checks at least 100,000 operations (10,000 under -race),
// split between parallel parts (one per CPU, at most 4), each running
// rapid's -rapid.checks
// sequences of about TTLSTORE_MODEL_OPS/(parts*checks) operations; set
// TTLSTORE_MODEL_OPS for a longer run, e.g. TTLSTORE_MODEL_OPS=1000000.
// With -rapid.seed every part runs the same sequences.
func TestModel(t *testing.T) {
	target := defaultModelOps
	if raceEnabled {
		// The race detector slows the test about threefold, and durable
		// and bounded machines are slower still; 10 % of the operations
		// keep a -race -count=20 run of the package within go test's
		// default ten minutes (549 s at 30 %; at 20 % it passed 600 s
		// once the speed round's tests were added). Without -race it
		// checks them all.
		target = target / 10
		if ttlstore.RaceRepeat(t) {
			target /= 10 // the repeats of -count (see RaceRepeat)
		}
	}
	if s := os.Getenv(modelOpsEnv); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, modelOpsEnv)
		target = n
	}
	checks, steps := rapidFlag(t, "rapid.checks"), rapidFlag(t, "rapid.steps")
	if testing.Short() { // what rapid does in short mode
		checks, steps, target = max(checks/5, 1), max(steps/2, 1), target/10
	}
	parts := min(runtime.GOMAXPROCS(0), 4)
	perRun := (target + parts*checks - 1) / (parts * checks)
	// A run repeats rapid's state machine, whose length averages steps
	// actions, until it has its share of operations. The bound on rounds
	// only matters while rapid shrinks a failure, when runs grow short.
	maxRounds := 4 * max(1, perRun/steps)

	var total atomic.Int64
	began := time.Now()
	t.Run("parts", func(t *testing.T) {
		for part := range parts {
			t.Run(strconv.Itoa(part+1), func(t *testing.T) {
				t.Parallel()
				rapid.Check(t, func(rt *rapid.T) {
					ops := 0
					mc := newMachine(rt, &ops)
					actions := mc.actions()
					for round := 0; ops < perRun && round < maxRounds; round++ {
						rt.Repeat(actions)
					}
					if rapid.Bool().Draw(rt, "close") {
						mc.close()
						rt.Repeat(actions)
					}
					total.Add(int64(ops))
				})
			})
		}
	})
	t.Logf("checked %d operations against the model in %v (%d parts × %d runs)",
		total.Load(), time.Since(began).Round(time.Millisecond), parts, checks)
}

const (
	modelOpsEnv     = "TTLSTORE_MODEL_OPS"
	defaultModelOps = 100_000
	machineMaxSize  = 1024 // small, so that a too-large document is cheap
)

// machineIDs is the id pool. Escaped forms of the last two exercise ids
// that the collection must unescape.
var machineIDs = []string{"a", "b", "c", "d", "café", "tab\tid"}

// machine holds a Collection and the model it is compared with.
type machine struct {
	c   *ttlstore.Collection
	clk *clock.Mock
	m   *model.Model
	ops *int

	// A durable machine keeps its collection on fs, opened with opts
	// and minCompact, and can restart or crash it. sweptOffset is what
	// the model counted in Stats.Swept before the last restart, which the
	// new collection's count starts again from 0 after.
	fs          *vfs.MemFS
	opts        ttlstore.Options
	minCompact  int64
	sweptOffset uint64
	closed      bool

	// The model names each version "m1", "m2", ...; these map its names to
	// the _etags the collection gave the same writes, and back.
	realETag  map[string]string
	modelETag map[string]string
	json      map[string]string            // the stored JSON of each version
	history   map[string][]string          // model ETags of each id's versions
	last      map[string]ttlstore.Document // the last Document returned per id
	reported  []ttlstore.Document          // OnExpire calls not yet compared

	// bound is what the machine knows of the bound and the weights
	// (model_bound_test.go).
	bound machineBound

	// The change feed as read so far (model_feed_test.go): the token to
	// go on from, and each id's _etag by the feed.
	feedToken string
	feedState map[string]string
}

func newMachine(rt *rapid.T, ops *int) *machine {
	def := parseTTL(rapid.SampledFrom(validDefaults).Draw(rt, "DefaultTTL"))
	clk := newMock()
	clk.Add(time.Duration(rapid.Int64Range(0, int64(time.Second)-1).Draw(rt, "start ns")))
	mc := &machine{
		clk:       clk,
		ops:       ops,
		realETag:  make(map[string]string),
		modelETag: make(map[string]string),
		json:      make(map[string]string),
		history:   make(map[string][]string),
		last:      make(map[string]ttlstore.Document),
		feedState: make(map[string]string),
	}
	mc.opts = ttlstore.Options{
		DefaultTTL:      def,
		Clock:           clk,
		SweepInterval:   ttlstore.ManualSweep,
		SweepBatch:      rapid.IntRange(0, 3).Draw(rt, "SweepBatch"),
		MaxDocumentSize: machineMaxSize,
		// With ManualSweep, removals happen on the test's goroutine.
		OnExpire: func(d ttlstore.Document) { mc.reported = append(mc.reported, d) },
		// Every machine reads its change feed after every operation
		// (model_feed_test.go).
		ChangeFeed: ttlstore.ChangeFeedOptions{RetainBytes: 64 << 20},
	}
	mc.drawBound(rt)
	var c *ttlstore.Collection
	var err error
	if rapid.Bool().Draw(rt, "durable") {
		mc.fs = vfs.NewMemFS()
		// A small bound makes the background compactor run often.
		mc.minCompact = rapid.SampledFrom([]int64{300, 1 << 30}).Draw(rt, "compact at")
		c, err = ttlstore.OpenFS(mc.fs, "db", mc.opts, mc.minCompact, false)
	} else {
		c, err = ttlstore.New(mc.opts)
	}
	require.NoError(rt, err)
	rt.Cleanup(func() { require.NoError(rt, mc.c.Close()) })
	mc.c = c
	mc.m, err = model.New(clk.Now(), def, machineMaxSize)
	require.NoError(rt, err)
	if mc.fs != nil {
		mc.m.SetDurable()
	}
	return mc
}

// actions returns the operations for rapid's state machine, each counted
// in mc.ops, and the check to run after each.
func (mc *machine) actions() map[string]func(*rapid.T) {
	actions := map[string]func(*rapid.T){
		"Create":         func(rt *rapid.T) { mc.write(rt, "Create", validDoc(rt)) },
		"Upsert":         func(rt *rapid.T) { mc.write(rt, "Upsert", validDoc(rt)) },
		"Replace":        func(rt *rapid.T) { mc.write(rt, "Replace", validDoc(rt)) },
		"ReplaceIfMatch": func(rt *rapid.T) { mc.write(rt, "ReplaceIfMatch", validDoc(rt)) },
		"WriteInvalid":   mc.writeInvalid,
		"WriteBack":      mc.writeBack,
		"WriteStruct":    mc.writeStruct,
		"Touch":          mc.touch,
		"Read":           mc.read,
		"Delete":         mc.delete,
		"DeleteIfMatch":  mc.deleteIfMatch,
		"Query":          mc.query,
		"SetDefaultTTL":  mc.setDefaultTTL,
		"Sweep":          mc.sweep,
		"MoveClock":      mc.moveClock,
	}
	if mc.bound.bounded {
		actions["SetLimits"] = mc.setLimits
	} else {
		actions["Batch"] = mc.batch
	}
	actions["Patch"] = mc.patch
	if mc.fs != nil {
		actions["Restart"] = func(rt *rapid.T) { mc.restart(rt, false) }
		actions["Crash"] = func(rt *rapid.T) { mc.restart(rt, true) }
	}
	for name, action := range actions {
		actions[name] = func(rt *rapid.T) {
			action(rt)
			*mc.ops++
		}
	}
	actions[""] = mc.check
	return actions
}

// validDefaults are the DefaultTTL values a collection may have, as
// showTTL writes them (so that rapid's logs show values, not pointers).
var validDefaults = []string{"nil", "-1", "1", "2", "3", "5", "60", "3600", "2147483647"}

// parseTTL is the inverse of showTTL.
func parseTTL(s string) *int32 {
	if s == "nil" {
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		panic(err)
	}
	return ttlstore.TTL(int32(n))
}

// Generators.

// idJSON draws an id from the pool and returns it as a JSON string,
// sometimes with every character escaped.
func idJSON(rt *rapid.T) string {
	id := rapid.SampledFrom(machineIDs).Draw(rt, "id")
	if !rapid.Bool().Draw(rt, "escape id") {
		b, _ := json.Marshal(id)
		return string(b)
	}
	var sb strings.Builder
	sb.WriteByte('"')
	for _, u := range utf16.Encode([]rune(id)) {
		fmt.Fprintf(&sb, `\u%04x`, u)
	}
	sb.WriteByte('"')
	return sb.String()
}

// validDoc draws a valid document about an id of the pool, with or without a
// ttl, with members in any order, sometimes with forged stamps and members
// that look like a ttl but are not one (R3, R4).
func validDoc(rt *rapid.T) []byte {
	members := []string{`"id":` + idJSON(rt), `"v":` + strconv.Itoa(rapid.IntRange(0, 99).Draw(rt, "v"))}
	if ttl := rapid.SampledFrom([]string{"", "-1", "1", "2", "3", "5", "10", "60", "200", "3600", "2147483647"}).Draw(rt, "ttl"); ttl != "" {
		members = append(members, `"ttl":`+ttl)
	}
	for _, extra := range []string{`"_ts":12`, `"_etag":"forged"`, `"\u005fts":"x"`, `"TTL":5`, `"meta": {"ttl": 1}`, `"v":"dup"`} {
		if rapid.IntRange(0, 4).Draw(rt, "extra") == 0 {
			members = append(members, extra)
		}
	}
	sep := rapid.SampledFrom([]string{",", ", ", " ,\n"}).Draw(rt, "separator")
	return []byte("{" + strings.Join(rapid.Permutation(members).Draw(rt, "members"), sep) + "}")
}

// invalidDocs are templates of rejected documents; %s is an id's JSON.
var invalidDocs = []string{
	`{"id":%s,"ttl":0}`, `{"id":%s,"ttl":null}`, `{"id":%s,"ttl":-2}`, `{"id":%s,"ttl":1.5}`,
	`{"id":%s,"ttl":"10"}`, `{"id":%s,"ttl":10.0}`, `{"id":%s,"ttl":1e1}`, `{"id":%s,"ttl":2147483648}`,
	`{"id":%s,"ttl":true}`, `{"id":%s,"ttl":[]}`, `{"id":%s,"ttl":1,"ttl":1}`, `{"id":%s,"t\u0074l":1,"ttl":2}`,
	`{"id":%s,"id":%s}`, `{"id":%s,"\u0069d":"z"}`, `{"v":%s}`, `{"id":"","v":%s}`, `{"id":7,"v":%s}`,
	`{"id":"a/b","v":%s}`, `{"id":"a\\b","v":%s}`, `[{"id":%s}]`, `{"id":%s,}`, `{"id":%s} x`,
	"{\"id\":%s,\"v\":\"\xff\"}", `{"id":%s,"v":` + strings.Repeat("[", ttlstore.MaxDepth) + strings.Repeat("]", ttlstore.MaxDepth) + `}`,
	`{"id":%s,"pad":"` + strings.Repeat("x", machineMaxSize) + `"}`, `{"id":1,"ttl":0,"v":%s}`,
}

func (mc *machine) writeInvalid(rt *rapid.T) {
	tmpl := rapid.SampledFrom(invalidDocs).Draw(rt, "invalid doc")
	doc := []byte(strings.ReplaceAll(tmpl, "%s", idJSON(rt)))
	mc.write(rt, rapid.SampledFrom([]string{"Create", "Upsert", "Replace", "ReplaceIfMatch"}).Draw(rt, "op"), doc)
}

// writeBack writes a Document that an earlier call returned, as the
// package documentation allows: its _ts and _etag are replaced.
func (mc *machine) writeBack(rt *rapid.T) {
	if len(mc.last) == 0 {
		rt.Skip("no document returned yet")
	}
	d := mc.last[rapid.SampledFrom(sortedKeys(mc.last)).Draw(rt, "id")]
	var doc any = d
	if rapid.Bool().Draw(rt, "pointer") {
		doc = &d
	}
	mc.writeAny(rt, rapid.SampledFrom([]string{"Create", "Upsert", "Replace"}).Draw(rt, "op"), doc, d.JSON())
}

// machineStruct is a Go value written through encoding/json.
type machineStruct struct {
	ID   string   `json:"id"`
	TTL  int32    `json:"ttl,omitempty"`
	V    int      `json:"v"`
	Tags []string `json:"tags,omitempty"`
}

func (mc *machine) writeStruct(rt *rapid.T) {
	v := machineStruct{
		ID:   rapid.SampledFrom(machineIDs).Draw(rt, "id"),
		TTL:  rapid.SampledFrom([]int32{0, -1, 1, 2, 5, 60}).Draw(rt, "ttl"),
		V:    rapid.IntRange(0, 99).Draw(rt, "v"),
		Tags: rapid.SliceOfN(rapid.SampledFrom([]string{"x", "<&>"}), 0, 2).Draw(rt, "tags"),
	}
	body, err := json.Marshal(v)
	require.NoError(rt, err)
	var doc any = v
	if rapid.Bool().Draw(rt, "pointer") {
		doc = &v
	}
	mc.writeAny(rt, rapid.SampledFrom([]string{"Create", "Upsert", "Replace"}).Draw(rt, "op"), doc, body)
}

// Operations.

// write runs one whole-document write of JSON bytes, passed as []byte or
// json.RawMessage.
func (mc *machine) write(rt *rapid.T, op string, body []byte) {
	var doc any = body
	if rapid.Bool().Draw(rt, "RawMessage") {
		doc = json.RawMessage(body)
	}
	mc.writeAny(rt, op, doc, body)
}

// writeAny runs op with doc on the collection and with body, the JSON that
// doc stands for, on the model, and compares the outcomes, the bound's
// included (writeBounded).
func (mc *machine) writeAny(rt *rapid.T, op string, doc any, body []byte) {
	var modelTag, realTag string
	if op == "ReplaceIfMatch" {
		modelTag, realTag = mc.pickETag(rt, mc.idOf(body))
	}
	plan := mc.planWrite(rt, op, doc, modelTag)
	call := func() (ttlstore.Document, error) {
		switch op {
		case "Create":
			return mc.c.Create(doc)
		case "Upsert":
			return mc.c.Upsert(doc)
		case "Replace":
			return mc.c.Replace(doc)
		case "ReplaceIfMatch":
			return mc.c.ReplaceIfMatch(doc, realTag)
		}
		panic(op)
	}
	apply := func() (model.Doc, error) {
		switch op {
		case "Create":
			return mc.m.Create(body)
		case "Upsert":
			return mc.m.Upsert(body)
		case "Replace":
			return mc.m.Replace(body)
		case "ReplaceIfMatch":
			return mc.m.ReplaceIfMatch(body, modelTag)
		}
		panic(op)
	}
	mc.writeBounded(rt, plan, call, apply, msgf("%s(%s)", op, body))
}

// idOf returns the id a document's JSON names, or "" when it names none
// (any etag is as good as another for a document that will be rejected).
func (mc *machine) idOf(body []byte) string {
	var v struct {
		ID json.RawMessage `json:"id"`
	}
	var id string
	if json.Unmarshal(body, &v) == nil && json.Unmarshal(v.ID, &id) == nil {
		return id
	}
	return ""
}

func (mc *machine) touch(rt *rapid.T) {
	id := rapid.SampledFrom(machineIDs).Draw(rt, "id")
	old, _ := mc.m.Stored(id)
	got, err := mc.c.Touch(id)
	want, wantErr := mc.m.Touch(id)
	requireSameErr(rt, err, wantErr, msgf("Touch(%q)", id))
	if wantErr == nil {
		// The same JSON: the same weight, and no room needed.
		mc.bound.weight[want.ETag] = mc.bound.weight[old.ETag]
		mc.requireNewVersion(rt, got, want, msgf("Touch(%q)", id))
	}
}

func (mc *machine) read(rt *rapid.T) {
	id := rapid.SampledFrom(append(machineIDs, "never")).Draw(rt, "id")
	got, err := mc.c.Read(id)
	want, wantErr := mc.m.Read(id)
	requireSameErr(rt, err, wantErr, msgf("Read(%q)", id))
	if wantErr == nil {
		mc.requireSameDoc(rt, got, want, msgf("Read(%q)", id))
		mc.last[id] = got
	}
}

func (mc *machine) delete(rt *rapid.T) {
	id := rapid.SampledFrom(machineIDs).Draw(rt, "id")
	requireSameErr(rt, mc.c.Delete(id), mc.m.Delete(id), msgf("Delete(%q)", id))
}

func (mc *machine) deleteIfMatch(rt *rapid.T) {
	id := rapid.SampledFrom(machineIDs).Draw(rt, "id")
	modelTag, realTag := mc.pickETag(rt, id)
	requireSameErr(rt, mc.c.DeleteIfMatch(id, realTag), mc.m.DeleteIfMatch(id, modelTag),
		msgf("DeleteIfMatch(%q, %q)", id, modelTag))
}

// pickETag draws an If-Match value for a document with the id: the _etag
// of its stored version (expired or not), of an older version, of another
// document, or one never issued. It returns the model's name for it and the
// real _etag.
func (mc *machine) pickETag(rt *rapid.T, id string) (string, string) {
	var tag string
	switch rapid.IntRange(0, 4).Draw(rt, "etag kind") {
	case 0, 1: // the stored version's: right unless it expired
		if d, ok := mc.m.Stored(id); ok {
			tag = d.ETag
		}
	case 2: // an older version's
		if h := mc.history[id]; len(h) > 0 {
			tag = rapid.SampledFrom(h).Draw(rt, "old etag")
		}
	case 3: // any version of any document
		if all := sortedKeys(mc.realETag); len(all) > 0 {
			tag = rapid.SampledFrom(all).Draw(rt, "any etag")
		}
	}
	if tag == "" {
		tag = rapid.SampledFrom([]string{"", "bogus", "0000000000000000"}).Draw(rt, "wrong etag")
		return tag, tag
	}
	return tag, mc.realETag[tag]
}

// query compares Query with a predicate on ids, and early exit.
func (mc *machine) query(rt *rapid.T) {
	pick := rapid.SliceOfDistinct(rapid.SampledFrom(machineIDs), rapid.ID[string]).Draw(rt, "ids")
	var got []ttlstore.Document
	for d := range mc.c.Query(func(d ttlstore.Document) bool { return slices.Contains(pick, d.ID()) }) {
		got = append(got, d)
	}
	var want []model.Doc
	for _, d := range mc.m.Live() {
		if slices.Contains(pick, d.ID) {
			want = append(want, d)
		}
	}
	mc.requireSameDocs(rt, got, want, msgf("Query(%q)", pick))

	stop := rapid.IntRange(1, 3).Draw(rt, "stop after")
	n := 0
	for range mc.c.All() {
		n++
		if n == stop {
			break
		}
	}
	requireEqual(rt, min(stop, mc.m.Len()), n, "All with a break")
}

func (mc *machine) setDefaultTTL(rt *rapid.T) {
	bad := []string{"0", "-2", strconv.Itoa(math.MinInt32)}
	v := parseTTL(rapid.SampledFrom(append(slices.Clone(validDefaults), bad...)).Draw(rt, "DefaultTTL"))
	requireSameErr(rt, mc.c.SetDefaultTTL(v), mc.m.SetDefaultTTL(v), msgf("SetDefaultTTL(%s)", showTTL(v)))
}

func (mc *machine) sweep(rt *rapid.T) {
	requireEqual(rt, mc.m.Sweep(), mc.c.Sweep(), "Sweep count")
}

// moveClock moves the clock forward: by a fraction of a second, a few
// seconds, years, nothing, or to exactly the next expiry second of a stored
// document or one nanosecond before it.
func (mc *machine) moveClock(rt *rapid.T) {
	now := mc.m.Now()
	var to time.Time
	switch kind := rapid.SampledFrom([]string{"sub-second", "seconds", "expiry", "before expiry", "years", "zero"}).Draw(rt, "move"); kind {
	case "sub-second":
		to = now.Add(time.Duration(rapid.Int64Range(1, int64(time.Second)-1).Draw(rt, "ns")))
	case "seconds":
		to = now.Add(time.Duration(rapid.IntRange(1, 10).Draw(rt, "s")) * time.Second)
	case "years":
		to = now.Add(time.Duration(rapid.Int64Range(1, 20*365*24).Draw(rt, "hours")) * time.Hour)
	case "zero":
		to = now
	default:
		exp, ok := mc.m.NextExpiry()
		if !ok {
			rt.Skip("nothing will expire")
		}
		to = time.Unix(exp, 0)
		if kind == "before expiry" {
			to = to.Add(-time.Nanosecond)
		}
		if to.Before(now) {
			to = now
		}
	}
	mc.clk.Set(to)
	mc.m.Set(to)
}

func (mc *machine) close() {
	_ = mc.c.Close()
	mc.m.Close()
	mc.closed = true
}

// restart closes the durable collection, or crashes the machine under it
// (every write was acknowledged under SyncAlways, so a power loss may lose
// nothing), and opens the directory again, with the DefaultTTL it has: it
// must show what it showed before (R17, R18). Sweeps are logged (and
// synced before they are reported), so nothing the old collection swept
// comes back or is reported again; everything else must be as the model
// says. The bound is the one mc.opts has, whatever SetLimits set: Open
// evicts what is over it (reopened).
func (mc *machine) restart(rt *rapid.T, crash bool) {
	if mc.closed {
		rt.Skip("closed")
	}
	requireEqual(rt, mc.m.Sweep(), mc.c.Sweep(), "Sweep before the restart")
	mc.check(rt)
	mark := mc.mark()
	swept := mc.m.Stats().Swept
	fs := mc.fs
	if crash {
		fs = mc.fs.Crash(nil, false)
		_ = mc.c.Close() // the dead machine's collection
	} else {
		require.NoError(rt, mc.c.Close())
	}
	opts := mc.opts
	opts.DefaultTTL = mc.m.DefaultTTL()
	c, err := ttlstore.OpenFS(fs, "db", opts, mc.minCompact, false)
	require.NoError(rt, err, "reopen")
	mc.c, mc.fs = c, fs
	st := c.Stats()
	requireEqual(rt, int64(0), st.TornBytes, "torn bytes after acknowledged writes only")
	mc.reopened(rt, mark, st)
	requireEqual(rt, 0, c.Sweep(), "documents swept again after the restart")
	if len(mc.reported) > 0 {
		rt.Fatalf("after the restart, OnExpire(%s) again", mc.reported[0])
	}
	mc.reported = nil
	mc.sweptOffset = swept - c.Stats().Swept
}

// check runs after every operation.
func (mc *machine) check(rt *rapid.T) {
	requireEqual(rt, mc.m.Now(), mc.clk.Now(), "clock")
	requireEqual(rt, showTTL(mc.m.DefaultTTL()), showTTL(mc.c.DefaultTTL()), "DefaultTTL")

	var got []ttlstore.Document
	for d := range mc.c.All() {
		got = append(got, d)
	}
	mc.requireSameDocs(rt, got, mc.m.Live(), "All")
	requireEqual(rt, mc.m.Len(), mc.c.Len(), "Len")
	st := mc.m.Stats()
	gotSt := mc.c.Stats()
	mc.checkBound(rt, gotSt)
	gotSt.Swept += mc.sweptOffset
	gotSt.TornBytes, gotSt.LogSyncs = 0, 0 // the durable mode's own counts
	requireEqual(rt, ttlstore.Stats{Live: st.Live, Expired: st.Expired, Swept: st.Swept}, ttlstore.CoreStats(gotSt), "Stats")

	// OnExpire was called once for each version the model removed because
	// it expired, and each was expired.
	var gotGone, wantGone []string
	for _, d := range mc.reported {
		if exp, ok := d.ExpiresAt(); !ok || exp.After(mc.clk.Now()) {
			rt.Fatalf("OnExpire(%s): not expired at %v", d, mc.clk.Now())
		}
		gotGone = append(gotGone, mc.modelETag[d.ETag()]+" "+d.ID())
	}
	for _, d := range mc.m.TakeExpired() {
		wantGone = append(wantGone, d.ETag+" "+d.ID)
	}
	slices.Sort(gotGone)
	slices.Sort(wantGone)
	if !slices.Equal(wantGone, gotGone) {
		require.Equal(rt, wantGone, gotGone, "documents reported to OnExpire (model etag, id)")
	}
	mc.checkFeed(rt, st)
	mc.reported = nil

	if err := mc.c.CheckInvariants(); err != nil {
		rt.Fatalf("invariants: %v", err)
	}
}

// requireNewVersion checks a document a successful write returned and
// records its _etag, which must be new, as the real name of the model's
// version. The version's JSON is checked member by member here, once: it
// cannot change, so later looks compare it byte for byte.
func (mc *machine) requireNewVersion(rt *rapid.T, got ttlstore.Document, want model.Doc, what any) {
	tag := got.ETag()
	prev, seen := mc.modelETag[tag]
	require.False(rt, seen, "%v: _etag %q was already given to version %s", what, tag, prev)
	requireStoredJSON(rt, got, want.Members, want.TS, what)
	mc.realETag[want.ETag] = tag
	mc.modelETag[tag] = want.ETag
	mc.json[want.ETag] = got.String()
	mc.history[want.ID] = append(mc.history[want.ID], want.ETag)
	mc.requireSameDoc(rt, got, want, what)
	mc.last[want.ID] = got
}

// docView is everything a Document shows, in a comparable form.
type docView struct {
	ID      string
	TS      time.Time
	ETag    string
	TTL     int32
	HasTTL  bool
	Expires time.Time // zero when the document does not expire
	JSON    string
	Weight  int64
}

func viewOf(d ttlstore.Document) docView {
	v := docView{ID: d.ID(), TS: d.TS(), ETag: d.ETag(), JSON: d.String(), Weight: d.Weight()}
	v.TTL, v.HasTTL = d.TTL()
	v.Expires, _ = d.ExpiresAt()
	return v
}

// view is what the collection should show for the model's version d.
func (mc *machine) view(d model.Doc) docView {
	v := docView{ID: d.ID, TS: time.Unix(d.TS, 0).UTC(), ETag: mc.realETag[d.ETag], TTL: d.TTL, HasTTL: d.TTL != 0, JSON: mc.json[d.ETag], Weight: mc.bound.weight[d.ETag]}
	if exp, ok := mc.m.Expiry(d); ok {
		v.Expires = time.Unix(exp, 0).UTC()
	}
	return v
}

// requireSameDocs compares documents, in any order, with the model's.
func (mc *machine) requireSameDocs(rt *rapid.T, got []ttlstore.Document, want []model.Doc, what any) {
	gotViews := make([]docView, len(got))
	for i, d := range got {
		gotViews[i] = viewOf(d)
	}
	slices.SortFunc(gotViews, func(a, b docView) int { return strings.Compare(a.ID, b.ID) })
	wantViews := make([]docView, len(want))
	for i, d := range want {
		wantViews[i] = mc.view(d)
	}
	if !slices.Equal(wantViews, gotViews) {
		require.Equal(rt, wantViews, gotViews, msgf("%v, clock %v", what, mc.clk.Now()))
	}
}

// requireSameDoc compares everything a Document shows with the model's
// version: id, _ts, _etag, ttl, expiry and JSON.
func (mc *machine) requireSameDoc(rt *rapid.T, got ttlstore.Document, want model.Doc, what any) {
	if g, w := viewOf(got), mc.view(want); g != w {
		require.Equal(rt, w, g, msgf("%v, clock %v", what, mc.clk.Now()))
	}
}

// Helpers shared by the tests of this package's model, fuzz, bad-input,
// stress and leak test files.

// errClasses are the sentinels every error of a Collection wraps one of.
var errClasses = []error{
	ttlstore.ErrNotFound, ttlstore.ErrConflict, ttlstore.ErrPreconditionFailed, ttlstore.ErrInvalidTTL,
	ttlstore.ErrInvalidDocument, ttlstore.ErrTooLarge, ttlstore.ErrInvalidOptions, ttlstore.ErrClosed,
	ttlstore.ErrFull, ttlstore.ErrInvalidPatch,
}

// requireErrClass requires that err matches want and no other class.
func requireErrClass(t require.TestingT, err, want error, msgAndArgs ...any) {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	for _, class := range errClasses {
		if errors.Is(err, class) != (class == want) {
			require.ErrorIs(t, err, want, msgAndArgs...)
			require.NotErrorIs(t, err, class, msgAndArgs...)
		}
	}
}

// requireEqual is require.Equal for comparable values, cheap when they are
// equal, for checks that run after every operation.
func requireEqual[T comparable](t require.TestingT, want, got T, what any) {
	if want != got {
		if h, ok := t.(interface{ Helper() }); ok {
			h.Helper()
		}
		require.Equal(t, want, got, what)
	}
}

// modelErrClasses maps the model's error classes to the collection's.
var modelErrClasses = map[error]error{
	model.ErrNotFound:           ttlstore.ErrNotFound,
	model.ErrConflict:           ttlstore.ErrConflict,
	model.ErrPreconditionFailed: ttlstore.ErrPreconditionFailed,
	model.ErrInvalidTTL:         ttlstore.ErrInvalidTTL,
	model.ErrInvalidDocument:    ttlstore.ErrInvalidDocument,
	model.ErrTooLarge:           ttlstore.ErrTooLarge,
	model.ErrClosed:             ttlstore.ErrClosed,
	errModelFull:                ttlstore.ErrFull, // model_bound_test.go
}

// requireSameErr requires that err is nil when the model's error modelErr
// is, and otherwise of the same class and no other.
func requireSameErr(t require.TestingT, err, modelErr error, what any) {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	if modelErr == nil {
		if err != nil {
			require.NoError(t, err, what)
		}
		return
	}
	for class, want := range modelErrClasses {
		if errors.Is(modelErr, class) {
			requireErrClass(t, err, want, msgf("%v: the model says %v", what, modelErr))
			return
		}
	}
	panic("unknown model error: " + modelErr.Error())
}

// requireStoredJSON requires that d's JSON decodes to wantMembers plus the
// stamps: "_ts" equal to ts and "_etag" equal to d.ETag().
func requireStoredJSON(t require.TestingT, d ttlstore.Document, wantMembers map[string]json.RawMessage, ts int64, what any) {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	require.Equal(t, string(d.JSON()), d.String(), what)
	var got map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(d.JSON(), &got), what)
	require.Equal(t, strconv.FormatInt(ts, 10), string(got["_ts"]), what)
	require.Equal(t, strconv.Quote(d.ETag()), string(got["_etag"]), what)
	delete(got, "_ts")
	delete(got, "_etag")
	if len(wantMembers) == 0 {
		wantMembers = map[string]json.RawMessage{}
	}
	require.Equal(t, wantMembers, got, what)
}

// collectionState is everything about a collection that a rejected call
// must leave as it was: each live document's stored JSON (with its _ts and
// _etag), the DefaultTTL and the Stats.
type collectionState struct {
	Docs       map[string]string
	DefaultTTL *int32
	Stats      ttlstore.Stats
}

func stateOf(c *ttlstore.Collection) collectionState {
	stats := c.Stats()
	stats.Hits, stats.Misses = 0, 0 // reads change nothing
	st := collectionState{Docs: make(map[string]string), DefaultTTL: c.DefaultTTL(), Stats: stats}
	for d := range c.All() {
		st.Docs[d.ID()] = d.String()
	}
	return st
}

// awaitSignal waits for ch to deliver or close. The deadline only guards
// against a hang; no outcome depends on how soon the signal comes.
func awaitSignal[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// msg is a failure message, formatted only if it is shown: testify formats
// a single non-string message argument with %+v, which calls String.
type msg struct {
	format string
	args   []any
}

func msgf(format string, args ...any) msg { return msg{format, args} }

func (m msg) String() string { return fmt.Sprintf(m.format, m.args...) }

// settableClock is a clock for a collection without a background sweeper,
// which reads only Now: Set moves it at once, without the millisecond
// clock.Mock sleeps on every move, for tests that build thousands of
// collections. The embedded mock's timers never fire.
type settableClock struct {
	*clock.Mock
	now atomic.Int64 // Unix nanoseconds
}

func (c *settableClock) Set(t time.Time) { c.now.Store(t.UnixNano()) }

func (c *settableClock) Now() time.Time { return time.Unix(0, c.now.Load()).UTC() }

// rapidFlag returns the value of one of rapid's integer flags.
func rapidFlag(t testing.TB, name string) int {
	t.Helper()
	f := flag.Lookup(name)
	require.NotNil(t, f, "rapid registers -%s", name)
	n, err := strconv.Atoi(f.Value.String())
	require.NoError(t, err)
	return n
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func showTTL(p *int32) string {
	if p == nil {
		return "nil"
	}
	return strconv.Itoa(int(*p))
}
