package ttlstore_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/model"
)

// The bound in TestModel. Half the machines draw Options.MaxDocuments,
// Options.MaxBytes and Options.Eviction, and get a SetLimits action; every
// machine tracks the weight of what its collection holds.
//
// The reference model (internal/model) knows nothing of bounds: the
// machine keeps them beside it, with the weight of every version
// (Document.Weight, which depends only on the document as written: the
// machine learns it before each write from a scratch collection without a
// bound). What the collection removes to make room, it reports: the
// machine checks each report against the model and removes the same
// version from it.
//
// Under NoEviction the machine knows exactly which writes are refused. A
// write that fits as things stand (one that replaces an expired version
// adds no document to memory) goes in, and removes nothing; otherwise one
// that fits once the expired documents are swept goes in; otherwise it is
// refused with ErrFull, changing nothing but the sweep. Which expired
// documents a write sweeps depends on the collection's hash seed, so that
// is learnt from OnExpire. Under the evicting policies the machine checks the
// invariants: a write whose condition holds goes in (EvictColdest never
// refuses; EvictSoonestExpiry only when the write would not fit even once
// every document it may evict were evicted, and then it evicts nothing:
// the machine makes one call at a time); a write that fits once the expired are
// swept evicts nothing; eviction starts only once no expired document is
// left, and evicts live documents only, each reported once, and no more
// than it must; EvictSoonestExpiry evicts the documents that expire soonest
// and never one that cannot expire. SetLimits and Open are held to the
// same. After every call the collection is within its bound, or no further
// over it than it was; and Stats counts the weight, the evictions and the
// refusals as the machine does.

// machinePolicies are the policies a bounded machine draws from.
var machinePolicies = []ttlstore.EvictionPolicy{ttlstore.NoEviction, ttlstore.EvictColdest, ttlstore.EvictSoonestExpiry}

// machineMinBytes and machineMaxBytes are the range of the MaxBytes a
// machine draws: a document of the machines weighs about 140 to 400 bytes,
// so that the bound holds none of the heaviest (ErrTooLarge) to a dozen of
// the lightest.
const machineMinBytes, machineMaxBytes = 150, 1500

// machineBound is what a machine knows of its collection's bound.
type machineBound struct {
	bounded  bool // drawn with a bound, and given SetLimits
	policy   ttlstore.EvictionPolicy
	maxDocs  int   // the MaxDocuments in force, 0 for none
	maxBytes int64 // the MaxBytes in force, 0 for none

	// weight is the weight of each version, by the model's name for it.
	weight map[string]int64
	// scratch is a collection without a bound, where a document is
	// written to learn its weight before it is written for real.
	scratch *ttlstore.Collection

	// evictions are OnEvict's calls not yet compared.
	evictions []machineEviction
	// What Stats should count since the collection was opened.
	evicted, evictedBytes, refused uint64
}

// machineEviction is a call of OnEvict, with how many OnExpire calls came
// before it (len(machine.reported) at the time).
type machineEviction struct {
	doc           ttlstore.Document
	expiresBefore int
}

func (e machineEviction) String() string { return e.doc.String() }

// drawBound draws the machine's bound into mc.opts, before the collection
// is made.
func (mc *machine) drawBound(rt *rapid.T) {
	b := &mc.bound
	b.weight = make(map[string]int64)
	if b.bounded = rapid.Bool().Draw(rt, "bounded"); b.bounded {
		mc.opts.Eviction = rapid.SampledFrom(machinePolicies).Draw(rt, "Eviction")
		mc.opts.MaxDocuments = rapid.IntRange(0, len(machineIDs)).Draw(rt, "MaxDocuments")
		if mc.opts.MaxDocuments == 0 || rapid.Bool().Draw(rt, "with MaxBytes") {
			mc.opts.MaxBytes = rapid.Int64Range(machineMinBytes, machineMaxBytes).Draw(rt, "MaxBytes")
		}
	}
	b.policy = mc.opts.Eviction
	b.maxDocs, b.maxBytes = mc.opts.MaxDocuments, mc.opts.MaxBytes
	// With ManualSweep, evictions happen on the test's goroutine.
	mc.opts.OnEvict = func(d ttlstore.Document) {
		b.evictions = append(b.evictions, machineEviction{d, len(mc.reported)})
	}
	var err error
	b.scratch, err = ttlstore.New(ttlstore.Options{SweepInterval: ttlstore.ManualSweep, MaxDocumentSize: machineMaxSize})
	require.NoError(rt, err)
	rt.Cleanup(func() { require.NoError(rt, b.scratch.Close()) })
}

// errModelFull stands for ErrFull, which the model does not know, in
// requireSameErr.
var errModelFull = errors.New("model: full")

// machineUsage is what a collection holds against its bound: every
// document in memory, expired ones not yet swept included, and the live
// ones.
type machineUsage struct {
	docs, liveDocs   int
	bytes, liveBytes int64
}

// usage is what the model says the collection holds.
func (mc *machine) usage() machineUsage {
	var u machineUsage
	for _, id := range machineIDs {
		d, ok := mc.m.Stored(id)
		if !ok {
			continue
		}
		w := mc.bound.weight[d.ETag]
		u.docs++
		u.bytes += w
		if !mc.expired(d) {
			u.liveDocs++
			u.liveBytes += w
		}
	}
	return u
}

// expired reports whether the model's version d has expired.
func (mc *machine) expired(d model.Doc) bool {
	exp, ok := mc.m.Expiry(d)
	return ok && mc.m.Now().Unix() >= exp
}

// fits reports whether a change of dDocs documents and dBytes of weight
// may be made to a collection holding docs and bytes: a bound only stands
// in the way of a change that adds to what it bounds.
func (b *machineBound) fits(dDocs int, dBytes int64, docs int, bytes int64) bool {
	return (dDocs <= 0 || b.maxDocs == 0 || docs+dDocs <= b.maxDocs) &&
		(dBytes <= 0 || b.maxBytes == 0 || bytes+dBytes <= b.maxBytes)
}

// within reports whether a collection holding docs and bytes is within
// the bound.
func (b *machineBound) within(docs int, bytes int64) bool {
	return (b.maxDocs == 0 || docs <= b.maxDocs) && (b.maxBytes == 0 || bytes <= b.maxBytes)
}

// need is what a write of a document weighing w with the id adds to the
// collection: nothing more than the weight difference when it replaces the
// id's version in memory, one document and w otherwise. With sweptFirst,
// an expired version is taken as swept already.
func (mc *machine) need(id string, w int64, sweptFirst bool) (int, int64) {
	if old, ok := mc.m.Stored(id); ok && !(sweptFirst && mc.expired(old)) {
		return 0, w - mc.bound.weight[old.ETag]
	}
	return 1, w
}

// machineWritePlan is what the machine expects of a write, worked out before it
// is made.
type machineWritePlan struct {
	id string
	w  int64 // the document's weight
	// tooLarge: the document is valid but weighs more than MaxBytes.
	tooLarge bool
	// counts: the write gets as far as the bound (the collection is open,
	// the document valid, and the write's condition is met).
	counts bool
	// fitsNow: it fits as things stand, so nothing is swept or evicted.
	fitsNow bool
	// fitsSwept: it fits once the expired documents are swept, so nothing
	// is evicted.
	fitsSwept bool
	// dDocs and dBytes are what it adds: to the documents in memory when
	// it fits now (replacing an expired version adds no document), and to
	// the live ones otherwise.
	dDocs  int
	dBytes int64
	// inDocs and inBytes are what it adds to the documents in memory,
	// where a version of its id that has expired but was not swept is
	// replaced in place (it adds no document): the write may leave the
	// collection over a bound that SetLimits lowered only if these are not
	// positive (it is no further over than before).
	inDocs  int
	inBytes int64
}

// planWrite works out what op (a write of doc) should do with the bound;
// modelTag is ReplaceIfMatch's _etag, in the model's names.
func (mc *machine) planWrite(rt *rapid.T, op string, doc any, modelTag string) machineWritePlan {
	// The scratch collection has no bound and TTL off, so it accepts
	// exactly the valid documents.
	d, err := mc.bound.scratch.Upsert(doc)
	if err != nil || mc.closed {
		return machineWritePlan{}
	}
	p := machineWritePlan{id: d.ID(), w: d.Weight()}
	if p.w <= int64(len(d.JSON())) {
		rt.Fatalf("%s weighs %d bytes, less than its JSON", d, p.w)
	}
	b := &mc.bound
	if b.maxBytes > 0 && p.w > b.maxBytes {
		p.tooLarge = true
		return p
	}
	old, ok := mc.m.Stored(p.id)
	live := ok && !mc.expired(old)
	switch op {
	case "Create":
		p.counts = !live
	case "Upsert":
		p.counts = true
	case "Replace":
		p.counts = live
	case "ReplaceIfMatch":
		p.counts = live && old.ETag == modelTag
	default:
		panic(op)
	}
	if !p.counts {
		return p
	}
	u := mc.usage()
	p.dDocs, p.dBytes = mc.need(p.id, p.w, false)
	p.inDocs, p.inBytes = p.dDocs, p.dBytes
	if p.fitsNow = b.fits(p.dDocs, p.dBytes, u.docs, u.bytes); p.fitsNow {
		// Whatever it would take once the expired are swept: a write
		// that adds nothing to what is in memory always goes in.
		p.fitsSwept = true
		return p
	}
	p.dDocs, p.dBytes = mc.need(p.id, p.w, true)
	p.fitsSwept = b.fits(p.dDocs, p.dBytes, u.liveDocs, u.liveBytes)
	return p
}

// machineMark is where OnExpire's and OnEvict's reports stood, and what the
// model said the collection held, before a call.
type machineMark struct {
	reported, evictions int
	usage               machineUsage
}

func (mc *machine) mark() machineMark {
	return machineMark{reported: len(mc.reported), evictions: len(mc.bound.evictions), usage: mc.usage()}
}

// takeRemovals checks what the call since mark removed to make room, and
// removes the same versions from the model: each version reported to
// OnExpire that the model has stored and expired (the rest are left for
// check to find), and each version reported to OnEvict, which must be
// the model's live version of its id and one the policy may evict. The
// call is a write of the document with the id written ("" for none), which
// is never evicted to make room for itself. It returns the model's versions
// evicted, in the order they were.
func (mc *machine) takeRemovals(rt *rapid.T, mark machineMark, written string, what any) []model.Doc {
	for _, d := range mc.reported[mark.reported:] {
		if v, ok := mc.m.Stored(d.ID()); ok && v.ETag == mc.modelETag[d.ETag()] && mc.expired(v) {
			mc.dropExpired(rt, v)
		}
	}
	b := &mc.bound
	evs := b.evictions[mark.evictions:]
	if len(evs) == 0 {
		return nil
	}
	if b.policy == ttlstore.NoEviction {
		rt.Fatalf("%v: OnEvict%v under NoEviction", what, evs)
	}
	// Expired documents go first: none is left once eviction starts.
	for _, ev := range evs {
		if ev.expiresBefore != len(mc.reported) {
			rt.Fatalf("%v: OnExpire(%s) after OnEvict(%s)", what, mc.reported[len(mc.reported)-1], ev)
		}
	}
	if n := mc.m.Stats().Expired; n > 0 {
		rt.Fatalf("%v: OnEvict%v while %d expired documents were left in memory", what, evs, n)
	}
	var evicted []model.Doc
	for _, ev := range evs {
		d := ev.doc
		v, ok := mc.m.Stored(d.ID())
		if !ok || v.ETag != mc.modelETag[d.ETag()] || mc.expired(v) {
			rt.Fatalf("%v: OnEvict(%s): not the live version of %q (the model has %+v)", what, d, d.ID(), v)
		}
		if v.ID == written {
			rt.Fatalf("%v: OnEvict(%s): the document written, evicted to make room for itself", what, d)
		}
		mc.requireSameDoc(rt, d, v, msgf("%v: OnEvict", what))
		if b.policy == ttlstore.EvictSoonestExpiry {
			exp, ok := mc.m.Expiry(v)
			if !ok {
				rt.Fatalf("%v: EvictSoonestExpiry evicted %s, which cannot expire", what, d)
			}
			for _, u := range mc.m.Live() {
				if e, ok := mc.m.Expiry(u); ok && e < exp && u.ID != written {
					rt.Fatalf("%v: EvictSoonestExpiry evicted %s, expiring at %d, before %q, expiring at %d", what, d, exp, u.ID, e)
				}
			}
		}
		require.NoError(rt, mc.m.Delete(v.ID), "%v: the model's Delete of the evicted %s", what, v.ID)
		b.evicted++
		b.evictedBytes += uint64(b.weight[v.ETag])
		evicted = append(evicted, v)
	}
	b.evictions = b.evictions[:mark.evictions]
	return evicted
}

// dropExpired removes the model's expired version v, as a sweep would,
// with the model's own calls: a write of the id replaces (and reports) the
// expired version, and a delete removes the write without reporting it.
func (mc *machine) dropExpired(rt *rapid.T, v model.Doc) {
	body, err := json.Marshal(map[string]string{"id": v.ID})
	require.NoError(rt, err)
	_, err = mc.m.Create(body)
	require.NoError(rt, err)
	require.NoError(rt, mc.m.Delete(v.ID))
}

// requireNoRemovals requires that the call since mark swept and evicted
// nothing, but for the expired version of id, which a write of id
// replaces.
func (mc *machine) requireNoRemovals(rt *rapid.T, mark machineMark, id string, what any) {
	for _, d := range mc.reported[mark.reported:] {
		if d.ID() != id {
			rt.Fatalf("%v: OnExpire(%s) from a call that needed no room", what, d)
		}
	}
	if evs := mc.bound.evictions[mark.evictions:]; len(evs) > 0 {
		rt.Fatalf("%v: OnEvict%v from a call that needed no eviction", what, evs)
	}
}

// writeBounded runs op, a write of doc (whose JSON is body) that plan
// expects to get as far as the bound, on the collection and the model,
// and compares the outcomes. call makes the collection's write and apply
// the model's.
func (mc *machine) writeBounded(rt *rapid.T, plan machineWritePlan, call func() (ttlstore.Document, error), apply func() (model.Doc, error), what any) {
	b := &mc.bound
	mark := mc.mark()
	got, err := call()
	if !plan.counts {
		// Rejected before the bound counts, or too heavy for it.
		mc.requireNoRemovals(rt, mark, "", what)
		if plan.tooLarge {
			requireErrClass(rt, err, ttlstore.ErrTooLarge, msgf("%v: weighs %d, MaxBytes is %d", what, plan.w, b.maxBytes))
			return
		}
		want, wantErr := apply()
		requireSameErr(rt, err, wantErr, what)
		if wantErr == nil {
			b.weight[want.ETag] = plan.w
			mc.requireNewVersion(rt, got, want, what)
		}
		return
	}
	if plan.fitsNow {
		mc.requireNoRemovals(rt, mark, plan.id, what)
	} else if plan.fitsSwept {
		if evs := b.evictions[mark.evictions:]; len(evs) > 0 {
			rt.Fatalf("%v: OnEvict%v, though sweeping the expired documents made room", what, evs)
		}
	}
	evicted := mc.takeRemovals(rt, mark, plan.id, what)
	refuse := false
	switch b.policy {
	case ttlstore.NoEviction:
		refuse = !plan.fitsSwept
	case ttlstore.EvictSoonestExpiry:
		refuse = !plan.fitsSwept && errors.Is(err, ttlstore.ErrFull)
	}
	if refuse {
		requireSameErr(rt, err, errModelFull, msgf("%v (usage before %+v, bound %d documents, %d bytes)", what, mark.usage, b.maxDocs, b.maxBytes))
		if len(evicted) > 0 {
			// The machine makes one call at a time: a write alone is
			// refused before it evicts (issue 23).
			rt.Fatalf("%v: refused with ErrFull after evicting %v", what, machineDocIDs(evicted))
		}
		b.refused++
		mc.requireRefusalRight(rt, plan, what)
		return
	}
	if err != nil {
		rt.Fatalf("%v: %v, but the write's condition held and the bound (%d documents, %d bytes, %v) has room once the expired documents are swept and as the policy evicts; usage before %+v; evicted %v",
			what, err, b.maxDocs, b.maxBytes, b.policy, mark.usage, machineDocIDs(evicted))
	}
	want, wantErr := apply()
	require.NoError(rt, wantErr, "%v: the model's write, after the evictions %v", what, machineDocIDs(evicted))
	b.weight[want.ETag] = plan.w
	mc.requireNewVersion(rt, got, want, what)

	// Within the bound, or no further over it than before; and no more
	// evicted than needed: without the last eviction, it would not fit.
	u := mc.usage()
	if (b.maxDocs > 0 && u.docs > b.maxDocs && (u.docs > mark.usage.docs || mark.usage.docs <= b.maxDocs || plan.inDocs > 0)) ||
		(b.maxBytes > 0 && u.bytes > b.maxBytes && (u.bytes > mark.usage.bytes || mark.usage.bytes <= b.maxBytes || plan.inBytes > 0)) {
		rt.Fatalf("%v: holds %d documents, %d bytes, over the bound of %d documents, %d bytes (before: %+v)", what, u.docs, u.bytes, b.maxDocs, b.maxBytes, mark.usage)
	}
	if n := len(evicted); n > 0 {
		last := evicted[n-1]
		if !(b.maxDocs > 0 && u.docs+1 > b.maxDocs) && !(b.maxBytes > 0 && u.bytes+b.weight[last.ETag] > b.maxBytes) {
			rt.Fatalf("%v: evicted %v; %s (%d bytes) would still fit, with %d documents and %d bytes held, in the bound of %d documents, %d bytes",
				what, machineDocIDs(evicted), last.ID, b.weight[last.ETag], u.docs, u.bytes, b.maxDocs, b.maxBytes)
		}
	}
}

// requireRefusalRight requires, after a write was refused with ErrFull,
// that nothing more could be removed to make its room (no expired
// document is left) and that the write still does not fit, nor, under
// EvictSoonestExpiry, would it once every document that can expire but
// the one written were evicted (issue 23: such a write is refused before
// it evicts anything).
func (mc *machine) requireRefusalRight(rt *rapid.T, plan machineWritePlan, what any) {
	b := &mc.bound
	u := mc.usage()
	var evictable []string
	for _, id := range machineIDs {
		d, ok := mc.m.Stored(id)
		if !ok {
			continue
		}
		if mc.expired(d) {
			rt.Fatalf("%v: refused with %q expired and still in memory", what, id)
		}
		if _, ok := mc.m.Expiry(d); ok && b.policy == ttlstore.EvictSoonestExpiry && id != plan.id {
			evictable = append(evictable, id)
			u.docs--
			u.bytes -= b.weight[d.ETag]
		}
	}
	if dDocs, dBytes := mc.need(plan.id, plan.w, true); b.fits(dDocs, dBytes, u.docs, u.bytes) {
		rt.Fatalf("%v: refused, but it fits once %v (which can expire) are evicted: it adds %d documents, %d bytes to %d, %d, in the bound of %d documents, %d bytes",
			what, evictable, dDocs, dBytes, u.docs, u.bytes, b.maxDocs, b.maxBytes)
	}
}

// setLimits changes the bound: to any, to one just under what the
// collection holds (so that it has to shrink, or, where it cannot, stays
// over the bound for a while), or to an invalid one.
func (mc *machine) setLimits(rt *rapid.T) {
	mark := mc.mark()
	var maxDocs int
	var maxBytes int64
	switch rapid.SampledFrom([]string{"any", "under", "invalid"}).Draw(rt, "limits") {
	case "any":
		maxDocs = rapid.IntRange(0, len(machineIDs)).Draw(rt, "MaxDocuments")
		if rapid.Bool().Draw(rt, "with MaxBytes") {
			maxBytes = rapid.Int64Range(machineMinBytes, machineMaxBytes).Draw(rt, "MaxBytes")
		}
	case "under":
		u := mark.usage
		maxDocs = rapid.IntRange(1, max(1, u.docs-1)).Draw(rt, "MaxDocuments")
		if rapid.Bool().Draw(rt, "with MaxBytes") {
			// Under what it holds, or a little over.
			maxBytes = rapid.Int64Range(machineMinBytes, max(machineMinBytes, u.bytes+150)).Draw(rt, "MaxBytes")
		}
	case "invalid":
		maxDocs = rapid.IntRange(-1, len(machineIDs)).Draw(rt, "MaxDocuments")
		if maxDocs >= 0 {
			maxBytes = -1
		}
	}
	what := msgf("SetLimits(%d, %d)", maxDocs, maxBytes)
	err := mc.c.SetLimits(maxDocs, maxBytes)
	switch {
	case maxDocs < 0 || maxBytes < 0:
		requireErrClass(rt, err, ttlstore.ErrInvalidOptions, what)
		mc.requireNoRemovals(rt, mark, "", what)
		return
	case mc.closed:
		requireErrClass(rt, err, ttlstore.ErrClosed, what)
		mc.requireNoRemovals(rt, mark, "", what)
		return
	}
	require.NoError(rt, err, what)
	mc.bound.maxDocs, mc.bound.maxBytes = maxDocs, maxBytes
	if mc.bound.within(mark.usage.docs, mark.usage.bytes) {
		mc.requireNoRemovals(rt, mark, "", what)
	}
	mc.requireShrunk(rt, mark, mc.c.Stats(), what)
}

// requireShrunk checks what SetLimits or Open, since mark, did to bring the
// collection within its bound, and takes it from the model: st is the
// collection's Stats once it returned.
func (mc *machine) requireShrunk(rt *rapid.T, mark machineMark, st ttlstore.Stats, what any) {
	b := &mc.bound
	if b.within(mark.usage.liveDocs, mark.usage.liveBytes) {
		if evs := b.evictions[mark.evictions:]; len(evs) > 0 {
			rt.Fatalf("%v: OnEvict%v, though sweeping the expired documents made room", what, evs)
		}
	}
	evicted := mc.takeRemovals(rt, mark, "", what)
	if !b.within(st.Live+st.Expired, st.Bytes) {
		// Over the bound: only when nothing more may be removed.
		if st.Expired > 0 || b.policy == ttlstore.EvictColdest {
			rt.Fatalf("%v: over the bound of %d documents, %d bytes: %+v", what, b.maxDocs, b.maxBytes, st)
		}
		if b.policy == ttlstore.EvictSoonestExpiry {
			for _, d := range mc.m.Live() {
				if _, ok := mc.m.Expiry(d); ok {
					rt.Fatalf("%v: over the bound of %d documents, %d bytes (%+v) with %q, which can expire, still stored", what, b.maxDocs, b.maxBytes, st, d.ID)
				}
			}
		}
	}
	if n := len(evicted); n > 0 {
		last := evicted[n-1]
		if b.within(st.Live+st.Expired+1, st.Bytes+b.weight[last.ETag]) {
			rt.Fatalf("%v: evicted %v, but %s (%d bytes) would still be within the bound of %d documents, %d bytes: %+v",
				what, machineDocIDs(evicted), last.ID, b.weight[last.ETag], b.maxDocs, b.maxBytes, st)
		}
	}
}

// reopened resets what the machine knows of the bound for a collection
// just opened with mc.opts, and checks what Open evicted, since mark; st is
// its Stats before anything else was called.
func (mc *machine) reopened(rt *rapid.T, mark machineMark, st ttlstore.Stats) {
	b := &mc.bound
	b.maxDocs, b.maxBytes = mc.opts.MaxDocuments, mc.opts.MaxBytes
	b.evicted, b.evictedBytes, b.refused = 0, 0, 0
	// Open's OnExpire calls are of documents the old collection swept,
	// which come back from the log: restart checks them.
	if len(b.evictions) > mark.evictions && st.Expired > 0 {
		rt.Fatalf("Open: evicted %v with %d expired documents left in memory", b.evictions[mark.evictions:], st.Expired)
	}
	mc.requireShrunk(rt, mark, st, "Open")
}

// checkBound compares what the machine knows of the bound with the
// collection's Stats.
func (mc *machine) checkBound(rt *rapid.T, st ttlstore.Stats) {
	b := &mc.bound
	if len(b.evictions) > 0 {
		rt.Fatalf("OnEvict%v from a call that makes no room", b.evictions)
	}
	u := mc.usage()
	if ms := mc.m.Stats(); u.docs != ms.Live+ms.Expired {
		rt.Fatalf("the machine counts %d documents, the model %+v", u.docs, ms)
	}
	type counts struct {
		Bytes                 int64
		Evicted, EvictedBytes uint64
		Refused               uint64
		MaxDocuments          int
		MaxBytes              int64
	}
	want := counts{u.bytes, b.evicted, b.evictedBytes, b.refused, b.maxDocs, b.maxBytes}
	got := counts{st.Bytes, st.Evicted, st.EvictedBytes, st.Refused, st.MaxDocuments, st.MaxBytes}
	requireEqual(rt, want, got, "Stats of the bound")
}

// machineDocIDs lists the ids and model _etags of versions, for messages.
func machineDocIDs(ds []model.Doc) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = fmt.Sprintf("%s@%s", d.ID, d.ETag)
	}
	return "[" + strings.Join(s, " ") + "]"
}
