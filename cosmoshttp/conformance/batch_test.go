package conformance

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/ttlstore/ttlstore/cosmoshttp"
)

func TestBatch(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.container("c", nil)
	seed := func(t *testing.T, ids ...string) map[string]azcore.ETag {
		t.Helper()
		et := map[string]azcore.ETag{}
		for _, id := range ids {
			r, err := c.UpsertItem(ctx, pkP, jsonDoc(t, doc{"id": id, "pk": "p", "v": 0}), nil)
			if err != nil {
				t.Fatal(err)
			}
			et[id] = r.ETag
		}
		return et
	}
	patch := azcosmos.PatchOperations{}
	patch.AppendIncrement("/v", 1)

	t.Run("success", func(t *testing.T) {
		et := seed(t, "up", "rep", "pat", "rd", "del")
		b := c.NewTransactionalBatch(pkP)
		b.CreateItem([]byte(`{"id":"new","pk":"p","v":1}`), nil)
		b.UpsertItem([]byte(`{"id":"new2","pk":"p","v":1}`), nil)
		b.UpsertItem([]byte(`{"id":"up","pk":"p","v":1}`), nil)
		b.ReplaceItem("rep", []byte(`{"id":"rep","pk":"p","v":1}`), &azcosmos.TransactionalBatchItemOptions{IfMatchETag: ptr(et["rep"])})
		b.PatchItem("pat", patch, nil)
		b.ReadItem("rd", nil)
		b.DeleteItem("del", nil)
		r, err := c.ExecuteTransactionalBatch(ctx, b, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := []int32{201, 201, 200, 200, 200, 200, 204}
		if !r.Success || r.RawResponse.StatusCode != 200 {
			t.Errorf("Success %v, status %d, want true 200", r.Success, r.RawResponse.StatusCode)
		}
		if len(r.OperationResults) != len(want) {
			t.Fatalf("%d results, want %d", len(r.OperationResults), len(want))
		}
		for i, res := range r.OperationResults {
			if res.StatusCode != want[i] {
				t.Errorf("op %d: status %d, want %d", i, res.StatusCode, want[i])
			}
			if i < 6 && res.ETag == "" {
				t.Errorf("op %d: no eTag", i)
			}
		}
		if d := parse(t, r.OperationResults[5].ResourceBody); d["id"] != "rd" || d["_etag"] != string(r.OperationResults[5].ETag) {
			t.Errorf("read op body %s", r.OperationResults[5].ResourceBody)
		}
		for id, v := range map[string]float64{"new": 1, "new2": 1, "up": 1, "rep": 1, "pat": 1, "rd": 0} {
			if d, st := read(t, c, pkP, id); st != 200 || d["v"] != v {
				t.Errorf("%s after batch: %d %v, want v %v", id, st, d, v)
			}
		}
		if _, st := read(t, c, pkP, "del"); st != 404 {
			t.Errorf("del after batch: %d", st)
		}
		if d, _ := read(t, c, pkP, "new"); azcore.ETag(d["_etag"].(string)) != r.OperationResults[0].ETag {
			t.Errorf("create op eTag %q, stored _etag %v", r.OperationResults[0].ETag, d["_etag"])
		}
	})

	failures := []struct {
		name    string
		failing func(b *azcosmos.TransactionalBatch)
		status  int32
	}{
		{"create conflict 409", func(b *azcosmos.TransactionalBatch) { b.CreateItem([]byte(`{"id":"exists","pk":"p"}`), nil) }, 409},
		{"replace missing 404", func(b *azcosmos.TransactionalBatch) { b.ReplaceItem("nope", []byte(`{"id":"nope","pk":"p"}`), nil) }, 404},
		{"delete missing 404", func(b *azcosmos.TransactionalBatch) { b.DeleteItem("nope", nil) }, 404},
		{"read missing 404", func(b *azcosmos.TransactionalBatch) { b.ReadItem("nope", nil) }, 404},
		{"replace stale etag 412", func(b *azcosmos.TransactionalBatch) {
			b.ReplaceItem("exists", []byte(`{"id":"exists","pk":"p"}`), &azcosmos.TransactionalBatchItemOptions{IfMatchETag: ptr(azcore.ETag(`"stale"`))})
		}, 412},
		{"patch condition false 412", func(b *azcosmos.TransactionalBatch) {
			p := azcosmos.PatchOperations{}
			p.SetCondition("from c where c.v = 42")
			p.AppendSet("/v", 1)
			b.PatchItem("exists", p, nil)
		}, 412},
		{"pk mismatch 400", func(b *azcosmos.TransactionalBatch) { b.CreateItem([]byte(`{"id":"other","pk":"q"}`), nil) }, 400},
		{"invalid ttl 400", func(b *azcosmos.TransactionalBatch) { b.CreateItem([]byte(`{"id":"bad","pk":"p","ttl":0}`), nil) }, 400},
	}
	for _, f := range failures {
		t.Run("failure/"+f.name, func(t *testing.T) {
			seed(t, "exists", "rep2", "del2")
			b := c.NewTransactionalBatch(pkP)
			b.CreateItem([]byte(`{"id":"fresh","pk":"p","v":1}`), nil)
			b.ReplaceItem("rep2", []byte(`{"id":"rep2","pk":"p","v":1}`), nil)
			b.DeleteItem("del2", nil)
			f.failing(&b)
			b.UpsertItem([]byte(`{"id":"after","pk":"p","v":1}`), nil)
			r, err := c.ExecuteTransactionalBatch(ctx, b, nil)
			if err != nil {
				t.Fatalf("a failed batch is an answer, not an error: %v", err)
			}
			if r.Success || r.RawResponse.StatusCode != http.StatusMultiStatus {
				t.Errorf("Success %v status %d, want false 207", r.Success, r.RawResponse.StatusCode)
			}
			want := []int32{424, 424, 424, f.status, 424}
			if len(r.OperationResults) != len(want) {
				t.Fatalf("%d results, want %d", len(r.OperationResults), len(want))
			}
			for i, res := range r.OperationResults {
				if res.StatusCode != want[i] {
					t.Errorf("op %d: status %d, want %d", i, res.StatusCode, want[i])
				}
			}
			for _, id := range []string{"fresh", "after"} {
				if _, st := read(t, c, pkP, id); st != 404 {
					t.Errorf("%s exists after a failed batch: %d", id, st)
				}
			}
			for _, id := range []string{"rep2", "del2", "exists"} {
				if d, st := read(t, c, pkP, id); st != 200 || d["v"] != 0.0 {
					t.Errorf("%s after a failed batch: %d %v, want unchanged", id, st, d)
				}
			}
		})
	}
	t.Run("patch condition true", func(t *testing.T) {
		seed(t, "cond")
		b := c.NewTransactionalBatch(pkP)
		p := azcosmos.PatchOperations{}
		p.SetCondition("from c where c.v = 0")
		p.AppendSet("/v", 7)
		b.PatchItem("cond", p, nil)
		r, err := c.ExecuteTransactionalBatch(ctx, b, nil)
		if err != nil || !r.Success || r.OperationResults[0].StatusCode != 200 {
			t.Fatalf("%v %+v", err, r)
		}
		if d, _ := read(t, c, pkP, "cond"); d["v"] != 7.0 {
			t.Errorf("cond: %v", d)
		}
	})
	t.Run("ops on the same id see each other", func(t *testing.T) {
		b := c.NewTransactionalBatch(pkP)
		b.CreateItem([]byte(`{"id":"seq","pk":"p","v":1}`), nil)
		b.ReplaceItem("seq", []byte(`{"id":"seq","pk":"p","v":2}`), nil)
		p := azcosmos.PatchOperations{}
		p.AppendIncrement("/v", 10)
		b.PatchItem("seq", p, nil)
		b.ReadItem("seq", nil)
		b.DeleteItem("seq", nil)
		b.CreateItem([]byte(`{"id":"seq","pk":"p","v":100}`), nil)
		r, err := c.ExecuteTransactionalBatch(ctx, b, nil)
		if err != nil || !r.Success {
			t.Fatalf("%v %+v", err, r)
		}
		if d := parse(t, r.OperationResults[3].ResourceBody); d["v"] != 12.0 {
			t.Errorf("read inside the batch: %s, want v 12", r.OperationResults[3].ResourceBody)
		}
		if d, _ := read(t, c, pkP, "seq"); d["v"] != 100.0 {
			t.Errorf("after: %v", d)
		}
	})
	t.Run("conditional patch after a write in the same batch", func(t *testing.T) {
		// Cosmos DB judges the condition on the item as the batch's
		// earlier operations left it.
		seed(t, "cw2")
		b := c.NewTransactionalBatch(pkP)
		b.ReplaceItem("cw2", []byte(`{"id":"cw2","pk":"p","v":5}`), nil)
		p := azcosmos.PatchOperations{}
		p.SetCondition("from c where c.v = 5")
		p.AppendIncrement("/v", 1)
		b.PatchItem("cw2", p, nil)
		r, err := c.ExecuteTransactionalBatch(ctx, b, nil)
		if err != nil {
			t.Fatalf("%v", shortErr(err))
		}
		if !r.Success {
			t.Fatalf("results %+v", r.OperationResults)
		}
		if d, _ := read(t, c, pkP, "cw2"); d["v"] != 6.0 {
			t.Errorf("cw2: %v, want v 6", d)
		}
	})
	t.Run("second create of the same id 409", func(t *testing.T) {
		b := c.NewTransactionalBatch(pkP)
		b.CreateItem([]byte(`{"id":"twice","pk":"p"}`), nil)
		b.CreateItem([]byte(`{"id":"twice","pk":"p"}`), nil)
		r, err := c.ExecuteTransactionalBatch(ctx, b, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Success || len(r.OperationResults) != 2 || r.OperationResults[0].StatusCode != 424 || r.OperationResults[1].StatusCode != 409 {
			t.Errorf("%+v", r.OperationResults)
		}
		if _, st := read(t, c, pkP, "twice"); st != 404 {
			t.Errorf("twice stored: %d", st)
		}
	})
	t.Run("content response on write", func(t *testing.T) {
		b := c.NewTransactionalBatch(pkP)
		b.CreateItem([]byte(`{"id":"cw","pk":"p"}`), nil)
		r, err := c.ExecuteTransactionalBatch(ctx, b, &azcosmos.TransactionalBatchOptions{EnableContentResponseOnWrite: true})
		if err != nil || !r.Success {
			t.Fatalf("%v %+v", err, r)
		}
		if d := parse(t, r.OperationResults[0].ResourceBody); d["id"] != "cw" || d["_ts"] == nil {
			t.Errorf("body %s", r.OperationResults[0].ResourceBody)
		}
	})
	t.Run("more than 100 operations 400", func(t *testing.T) {
		b := c.NewTransactionalBatch(pkP)
		for i := 0; i < 101; i++ {
			b.CreateItem([]byte(fmt.Sprintf(`{"id":"many%d","pk":"p"}`, i)), nil)
		}
		_, err := c.ExecuteTransactionalBatch(ctx, b, nil)
		wantStatus(t, "101 ops", err, http.StatusBadRequest)
		if _, st := read(t, c, pkP, "many0"); st != 404 {
			t.Errorf("refused batch stored many0: %d", st)
		}
	})
	t.Run("missing container 404", func(t *testing.T) {
		nc, _ := e.database().NewContainer("nope")
		b := nc.NewTransactionalBatch(pkP)
		b.CreateItem([]byte(`{"id":"x","pk":"p"}`), nil)
		_, err := nc.ExecuteTransactionalBatch(ctx, b, nil)
		wantStatus(t, "batch in missing container", err, http.StatusNotFound)
	})
	t.Run("R1 batch writes follow ttl", func(t *testing.T) {
		tc := e.container("ttl", ttlp(10))
		b := tc.NewTransactionalBatch(pkP)
		b.CreateItem([]byte(`{"id":"a","pk":"p"}`), nil)
		b.CreateItem([]byte(`{"id":"b","pk":"p","ttl":3}`), nil)
		b.CreateItem([]byte(`{"id":"c","pk":"p","ttl":-1}`), nil)
		if r, err := tc.ExecuteTransactionalBatch(ctx, b, nil); err != nil || !r.Success {
			t.Fatalf("%v %+v", err, r)
		}
		e.at(2.999)
		expectAlive(t, tc, "b", true, "base+2.999")
		e.at(3)
		expectAlive(t, tc, "b", false, "base+3")
		e.at(9.999)
		expectAlive(t, tc, "a", true, "base+9.999")
		e.at(10)
		expectAlive(t, tc, "a", false, "base+10")
		expectAlive(t, tc, "c", true, "base+10")
	})
}

// TestBatchExpired: in a batch too, an expired item is gone (R9).
func TestBatchExpired(t *testing.T) {
	e := newEnv(t, cosmoshttp.Options{})
	c := e.container("c", ttlp(10))
	var et = map[string]azcore.ETag{}
	for _, id := range []string{"cr", "up", "rep", "del", "pat", "rd"} {
		et[id] = create(t, c, pkP, doc{"id": id, "pk": "p", "v": 0}).ETag
	}
	e.at(10)
	patch := azcosmos.PatchOperations{}
	patch.AppendSet("/v", 1)
	cases := []struct {
		name string
		op   func(b *azcosmos.TransactionalBatch)
		want int32
	}{
		{"create 201", func(b *azcosmos.TransactionalBatch) { b.CreateItem([]byte(`{"id":"cr","pk":"p","v":1}`), nil) }, 201},
		{"upsert 201", func(b *azcosmos.TransactionalBatch) { b.UpsertItem([]byte(`{"id":"up","pk":"p","v":1}`), nil) }, 201},
		{"replace with its old etag 404", func(b *azcosmos.TransactionalBatch) {
			b.ReplaceItem("rep", []byte(`{"id":"rep","pk":"p","v":1}`), &azcosmos.TransactionalBatchItemOptions{IfMatchETag: ptr(et["rep"])})
		}, 404},
		{"delete 404", func(b *azcosmos.TransactionalBatch) { b.DeleteItem("del", nil) }, 404},
		{"patch 404", func(b *azcosmos.TransactionalBatch) { b.PatchItem("pat", patch, nil) }, 404},
		{"read 404", func(b *azcosmos.TransactionalBatch) { b.ReadItem("rd", nil) }, 404},
	}
	for _, tc := range cases {
		t.Run("R9 "+tc.name, func(t *testing.T) {
			b := c.NewTransactionalBatch(pkP)
			tc.op(&b)
			r, err := c.ExecuteTransactionalBatch(ctx, b, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.OperationResults) != 1 || r.OperationResults[0].StatusCode != tc.want || r.Success != (tc.want < 300) {
				t.Errorf("success %v results %+v, want one %d", r.Success, r.OperationResults, tc.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
