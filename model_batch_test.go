package ttlstore_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/model"
)

// batch is the model machine's transactional batch: up to six operations
// of any kind on the pool's ids, sometimes with an invalid document, run
// with ExecuteBatch and the model's Batch, which must agree on every
// result, or on which operation failed and why, with nothing changed then.
// Unbounded machines only: the bound's plans are for single writes.
func (mc *machine) batch(rt *rapid.T) {
	kinds := []string{"Create", "Upsert", "Replace", "ReplaceIfMatch", "Read", "Delete", "DeleteIfMatch", "Touch"}
	n := rapid.IntRange(1, 6).Draw(rt, "batch size")
	var b ttlstore.Batch
	ops := make([]model.BatchOp, n)
	var names []string
	for i := range ops {
		kind := rapid.SampledFrom(kinds).Draw(rt, "batch op")
		op := model.BatchOp{Kind: kind}
		var realTag string
		switch kind {
		case "Create", "Upsert", "Replace", "ReplaceIfMatch":
			op.Doc = validDoc(rt)
			if rapid.IntRange(0, 9).Draw(rt, "invalid in batch") == 0 {
				op.Doc = []byte(strings.ReplaceAll(rapid.SampledFrom(invalidDocs).Draw(rt, "invalid doc"), "%s", idJSON(rt)))
			}
			if kind == "ReplaceIfMatch" {
				op.ETag, realTag = mc.pickETag(rt, mc.idOf(op.Doc))
			}
		default:
			op.ID = rapid.SampledFrom(machineIDs).Draw(rt, "id")
			if kind == "DeleteIfMatch" {
				op.ETag, realTag = mc.pickETag(rt, op.ID)
			}
		}
		switch kind {
		case "Create":
			b.Create(op.Doc)
		case "Upsert":
			b.Upsert(op.Doc)
		case "Replace":
			b.Replace(op.Doc)
		case "ReplaceIfMatch":
			b.ReplaceIfMatch(op.Doc, realTag)
		case "Read":
			b.Read(op.ID)
		case "Delete":
			b.Delete(op.ID)
		case "DeleteIfMatch":
			b.DeleteIfMatch(op.ID, realTag)
		case "Touch":
			b.Touch(op.ID)
		}
		ops[i] = op
		names = append(names, fmt.Sprintf("%s(%s%s %s)", kind, op.Doc, op.ID, op.ETag))
	}
	what := msgf("ExecuteBatch%v", names)

	// The weight of each id's version before the batch, which a Touch in
	// it may copy.
	last := map[string]int64{}
	for _, id := range machineIDs {
		if d, ok := mc.m.Stored(id); ok {
			last[id] = mc.bound.weight[d.ETag]
		}
	}
	got, err := mc.c.ExecuteBatch(&b)
	want, index, wantErr := mc.m.Batch(ops)
	requireSameErr(rt, err, wantErr, what)
	if wantErr != nil {
		var be *ttlstore.BatchError
		require.True(rt, errors.As(err, &be), "%v: %v is not a BatchError", what, err)
		require.Equal(rt, index, be.Index, "%v: the failing operation", what)
		require.Nil(rt, got, what)
		return
	}
	require.Len(rt, got, n, what)
	// The weight of each version the batch makes: a written document's
	// as the scratch collection weighs it, a touched one's as the version
	// it touched.
	for i, op := range ops {
		what := msgf("%v, operation %d", what, i)
		switch op.Kind {
		case "Read":
			mc.requireSameDoc(rt, got[i], want[i], what)
		case "Delete", "DeleteIfMatch":
			require.Equal(rt, ttlstore.Document{}, got[i], what)
		case "Touch":
			mc.bound.weight[want[i].ETag] = last[op.ID]
			mc.requireNewVersion(rt, got[i], want[i], what)
		default:
			d, err := mc.bound.scratch.Upsert(op.Doc)
			require.NoError(rt, err, what)
			mc.bound.weight[want[i].ETag] = d.Weight()
			last[want[i].ID] = d.Weight()
			mc.requireNewVersion(rt, got[i], want[i], what)
		}
	}
}
