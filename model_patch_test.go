package ttlstore_test

import (
	"encoding/json"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/jsonscan"
	"github.com/ttlstore/ttlstore/internal/model"
	"github.com/ttlstore/ttlstore/internal/patch"
)

// machinePatchOps are the patch operations the machine draws from: on
// members the pool's documents may or may not have, some of which fail on
// a document without them ("v", which a document may hold twice, too), and
// ttls valid and not.
var machinePatchOps = []string{
	`{"op":"set","path":"/w","value":3}`,
	`{"op":"incr","path":"/n","value":2}`,
	`{"op":"incr","path":"/n","value":-1.5}`,
	`{"op":"set","path":"/ttl","value":1}`,
	`{"op":"set","path":"/ttl","value":5}`,
	`{"op":"set","path":"/ttl","value":-1}`,
	`{"op":"set","path":"/ttl","value":0}`,
	`{"op":"replace","path":"/ttl","value":60}`,
	`{"op":"set","path":"/ttl","value":"10"}`,
	`{"op":"remove","path":"/ttl"}`,
	`{"op":"remove","path":"/w"}`,
	`{"op":"add","path":"/tags/-","value":"y"}`,
	`{"op":"move","from":"/w","path":"/x"}`,
	`{"op":"set","path":"/meta/ttl","value":3}`,
	`{"op":"set","path":"/v","value":"x"}`,
	`{"op":"remove","path":"/v"}`,
}

// patch is the model machine's Patch: one to three operations on a
// document of the pool. The model applies them as the Replace of the
// document that internal/patch makes of the stored version (the engine is
// tested against its own reference); this checks the collection's part: a
// patch is one write, re-resolves the expiry as a Replace does (R5), is
// refused whole, logs, restarts, and counts against the bound, evicting or
// refused, like any write.
func (mc *machine) patch(rt *rapid.T) {
	id := rapid.SampledFrom(machineIDs).Draw(rt, "id")
	var ops []ttlstore.PatchOp
	var wire []json.RawMessage
	for range rapid.IntRange(1, 3).Draw(rt, "patch size") {
		wire = append(wire, json.RawMessage(rapid.SampledFrom(machinePatchOps).Draw(rt, "patch op")))
	}
	list, err := json.Marshal(wire)
	require.NoError(rt, err)
	ops, err = ttlstore.ParsePatch(list)
	require.NoError(rt, err)
	what := msgf("Patch(%q, %s)", id, list)

	cur, merr := mc.m.Read(id)
	if merr != nil {
		_, err := mc.c.Patch(id, ops)
		requireSameErr(rt, err, merr, what)
		return
	}
	// The stored bytes of the current version, which the machine kept
	// (mc.json), without their stamp: the engine then makes of them what
	// the collection's Patch makes, byte for byte, weight included.
	js, ok := mc.json[cur.ETag]
	require.True(rt, ok, "%v: no JSON kept for version %s", what, cur.ETag)
	stored, _, err := jsonscan.Strip(nil, []byte(js), ttlstore.MaxDepth)
	require.NoError(rt, err, what)
	out, perr := patch.Apply(stored, ops)
	if perr != nil {
		_, err := mc.c.Patch(id, ops)
		requireErrClass(rt, err, ttlstore.ErrInvalidPatch, msgf("%v: the engine says %v", what, perr))
		return
	}
	plan := mc.planWrite(rt, "Replace", out, "")
	mc.writeBounded(rt, plan, func() (ttlstore.Document, error) { return mc.c.Patch(id, ops) },
		func() (model.Doc, error) { return mc.m.Replace(out) }, what)
}
