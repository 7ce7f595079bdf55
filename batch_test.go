package ttlstore_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/vfs"
)

func TestBatchAppliesInOrder(t *testing.T) {
	c, clk := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(60)})
	a := upsert(t, c, `{"id":"a","v":0}`)
	clk.Add(time.Second)

	var b ttlstore.Batch
	b.Replace([]byte(`{"id":"a","v":1}`)).
		Create([]byte(`{"id":"b","ttl":10}`)).
		Read("a").
		Touch("b").
		Upsert([]byte(`{"id":"c"}`)).
		Delete("c").
		Create([]byte(`{"id":"c","v":"again"}`)).
		ReplaceIfMatch([]byte(`{"id":"a","v":2}`), a.ETag()) // a's _etag from before the batch: but the Replace above changed it
	_, err := c.ExecuteBatch(&b)
	var be *ttlstore.BatchError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, 7, be.Index)
	assert.ErrorIs(t, err, ttlstore.ErrPreconditionFailed)
	assert.Contains(t, err.Error(), "batch operation 7: replace \"a\"")
	assert.Contains(t, err.Error(), "no operation applied")
	d, err := c.Read("a")
	require.NoError(t, err)
	assert.Equal(t, a.String(), d.String(), "a failed batch changed a")
	assert.Equal(t, 1, c.Len())

	b = ttlstore.Batch{}
	b.Replace([]byte(`{"id":"a","v":1}`)).
		Create([]byte(`{"id":"b","ttl":10}`)).
		Read("a").
		Touch("b").
		Upsert([]byte(`{"id":"c"}`)).
		Delete("c").
		Create([]byte(`{"id":"c","v":"again"}`))
	docs, err := c.ExecuteBatch(&b)
	require.NoError(t, err)
	require.Len(t, docs, 7)
	assert.Contains(t, docs[2].String(), `"v":1`, "the read sees the replace before it")
	assert.Equal(t, docs[0].ETag(), docs[2].ETag())
	assert.NotEqual(t, docs[1].ETag(), docs[3].ETag(), "touch gives a new _etag")
	assert.Equal(t, ttlstore.Document{}, docs[5], "a delete's result is the zero Document")
	for _, i := range []int{0, 1, 3, 4, 6} {
		assert.Equal(t, clk.Now().Unix(), docs[i].TS().Unix(), "one _ts for the batch")
	}
	got := map[string]string{}
	for d := range c.All() {
		got[d.ID()] = d.String()
	}
	assert.Equal(t, map[string]string{"a": docs[0].String(), "b": docs[3].String(), "c": docs[6].String()}, got)
	exp, ok := docs[3].ExpiresAt()
	require.True(t, ok)
	assert.Equal(t, clk.Now().Add(10*time.Second), exp)
}

func TestBatchRefusals(t *testing.T) {
	c, _ := newCollection(t, ttlstore.Options{DefaultTTL: ttlstore.TTL(60), MaxDocumentSize: 64})
	upsert(t, c, `{"id":"a"}`)
	cases := []struct {
		name  string
		batch func(b *ttlstore.Batch)
		index int
		want  error
	}{
		{"create of a live id", func(b *ttlstore.Batch) { b.Upsert([]byte(`{"id":"x"}`)).Create([]byte(`{"id":"a"}`)) }, 1, ttlstore.ErrConflict},
		{"replace of a missing id", func(b *ttlstore.Batch) { b.Upsert([]byte(`{"id":"x"}`)).Replace([]byte(`{"id":"y"}`)) }, 1, ttlstore.ErrNotFound},
		{"read of a missing id", func(b *ttlstore.Batch) { b.Upsert([]byte(`{"id":"x"}`)).Read("y") }, 1, ttlstore.ErrNotFound},
		{"read of an id deleted before", func(b *ttlstore.Batch) { b.Delete("a").Read("a") }, 1, ttlstore.ErrNotFound},
		{"delete-if-match on another _etag", func(b *ttlstore.Batch) { b.DeleteIfMatch("a", `"0"`) }, 0, ttlstore.ErrPreconditionFailed},
		{"invalid document", func(b *ttlstore.Batch) { b.Upsert([]byte(`{"id":"x"}`)).Upsert([]byte(`{"v":1}`)) }, 1, ttlstore.ErrInvalidDocument},
		{"invalid ttl", func(b *ttlstore.Batch) { b.Upsert([]byte(`{"id":"x","ttl":0}`)) }, 0, ttlstore.ErrInvalidTTL},
		{"document too large", func(b *ttlstore.Batch) { b.Upsert([]byte(`{"id":"x","pad":"` + strings.Repeat("p", 64) + `"}`)) }, 0, ttlstore.ErrTooLarge},
		{"too many operations", func(b *ttlstore.Batch) {
			for i := range ttlstore.MaxBatchOperations + 1 {
				b.Upsert([]byte(fmt.Sprintf(`{"id":"x%d"}`, i)))
			}
		}, -1, ttlstore.ErrTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := shownOf(c)
			var b ttlstore.Batch
			tc.batch(&b)
			docs, err := c.ExecuteBatch(&b)
			require.Nil(t, docs)
			var be *ttlstore.BatchError
			require.ErrorAs(t, err, &be)
			assert.Equal(t, tc.index, be.Index)
			assert.ErrorIs(t, err, tc.want)
			assert.Equal(t, before.String(), shownOf(c).String(), "a refused batch changed the collection")
		})
	}
}

func TestBatchTooManyBytes(t *testing.T) {
	c, _ := newCollection(t, ttlstore.Options{})
	var b ttlstore.Batch
	pad := strings.Repeat("p", 700_000)
	for i := range 3 {
		b.Upsert([]byte(fmt.Sprintf(`{"id":"x%d","pad":%q}`, i, pad)))
	}
	_, err := c.ExecuteBatch(&b)
	var be *ttlstore.BatchError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, -1, be.Index)
	assert.ErrorIs(t, err, ttlstore.ErrTooLarge)
	assert.Zero(t, c.Len())
}

// A batch a full bound refuses under NoEviction changes nothing, though
// some of its documents would fit.
func TestBatchBoundedRefusedWhole(t *testing.T) {
	c, _ := newCollection(t, ttlstore.Options{MaxDocuments: 3})
	upsert(t, c, `{"id":"a"}`)
	var b ttlstore.Batch
	b.Upsert([]byte(`{"id":"a","v":1}`)).Create([]byte(`{"id":"b"}`)).Create([]byte(`{"id":"c"}`)).Create([]byte(`{"id":"d"}`))
	_, err := c.ExecuteBatch(&b)
	var be *ttlstore.BatchError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, -1, be.Index)
	assert.ErrorIs(t, err, ttlstore.ErrFull)
	assert.Equal(t, []string{"a"}, ids(c))

	// Net growth is what counts: a batch that deletes as it creates fits.
	b = ttlstore.Batch{}
	b.Delete("a").Create([]byte(`{"id":"b"}`)).Create([]byte(`{"id":"c"}`)).Create([]byte(`{"id":"d"}`))
	_, err = c.ExecuteBatch(&b)
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "c", "d"}, ids(c))
}

// An evicting policy makes a batch's room from documents outside it: every
// document the batch names is kept, though they are the coldest or the
// soonest to expire, so that its replaces, reads and touches find them.
func TestBatchEvictsOutsideItself(t *testing.T) {
	for _, policy := range []ttlstore.EvictionPolicy{ttlstore.EvictColdest, ttlstore.EvictSoonestExpiry} {
		t.Run(policy.String(), func(t *testing.T) {
			var evicted []string
			c, _ := newCollection(t, ttlstore.Options{MaxDocuments: 6, Eviction: policy, DefaultTTL: ttlstore.TTL(-1),
				OnEvict: func(d ttlstore.Document) { evicted = append(evicted, d.ID()) }})
			// The batch's documents first, soonest to expire and never
			// read; then the others, read often.
			for i, id := range []string{"a", "b", "c"} {
				upsert(t, c, fmt.Sprintf(`{"id":%q,"ttl":%d}`, id, 100+i))
			}
			for i, id := range []string{"x", "y", "z"} {
				upsert(t, c, fmt.Sprintf(`{"id":%q,"ttl":%d}`, id, 1000+i))
				for range 5 {
					_, err := c.Read(id)
					require.NoError(t, err)
				}
			}
			var b ttlstore.Batch
			b.Create([]byte(`{"id":"n1","ttl":50}`)).Replace([]byte(`{"id":"b","v":1,"ttl":60}`)).Create([]byte(`{"id":"n2","ttl":50}`)).
				Read("c").Touch("a").Create([]byte(`{"id":"n3","ttl":50}`))
			got, err := c.ExecuteBatch(&b)
			require.NoError(t, err)
			require.Len(t, got, 6)
			assert.ElementsMatch(t, []string{"x", "y", "z"}, evicted, "evicted a document of the batch")
			assert.ElementsMatch(t, []string{"a", "b", "c", "n1", "n2", "n3"}, ids(c))
		})
	}
}

// No snapshot of All sees part of a batch: batches move a token between
// documents in many shards while iterations count the tokens.
func TestBatchIsolatedFromIteration(t *testing.T) {
	c, _ := newCollection(t, ttlstore.Options{})
	const n = 16
	upsert(t, c, `{"id":"k0","token":true}`)
	for i := 1; i < n; i++ {
		upsert(t, c, fmt.Sprintf(`{"id":"k%d","token":false}`, i))
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			var b ttlstore.Batch
			b.Upsert([]byte(fmt.Sprintf(`{"id":"k%d","token":false}`, i%n)))
			b.Upsert([]byte(fmt.Sprintf(`{"id":"k%d","token":true}`, (i+1)%n)))
			if _, err := c.ExecuteBatch(&b); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for range 2000 {
		tokens := 0
		for d := range c.All() {
			if strings.Contains(d.String(), `"token":true`) {
				tokens++
			}
		}
		if tokens != 1 {
			close(stop)
			wg.Wait()
			t.Fatalf("a snapshot saw %d tokens", tokens)
		}
	}
	close(stop)
	wg.Wait()
}

// A durable batch is one group of records: after a restart all of it is
// there, and a batch the log refuses changes nothing, in memory or after a
// restart.
func TestBatchDurable(t *testing.T) {
	fsys := vfs.NewMemFS()
	clk := newMock()
	c, err := openMem(t, fsys, clk, ttlstore.SyncAlways, 1<<30)
	require.NoError(t, err)
	var b ttlstore.Batch
	b.Upsert([]byte(`{"id":"a"}`)).Upsert([]byte(`{"id":"b"}`)).Delete("a")
	_, err = c.ExecuteBatch(&b)
	require.NoError(t, err)
	want := shownOf(c).String()

	fsys.SetHook(func(op vfs.Op, _ string) error {
		if op == vfs.OpWrite || op == vfs.OpAllocate {
			return errors.New("EIO")
		}
		return nil
	})
	b = ttlstore.Batch{}
	b.Upsert([]byte(`{"id":"c"}`)).Delete("b")
	_, err = c.ExecuteBatch(&b)
	require.ErrorIs(t, err, ttlstore.ErrIO)
	assert.Equal(t, want, shownOf(c).String(), "a batch the log refused changed memory")
	fsys.SetHook(nil)
	c.Close()

	c, err = openMem(t, fsys, clk, ttlstore.SyncAlways, 1<<30)
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, want, shownOf(c).String())
}
