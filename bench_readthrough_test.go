package ttlstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ttlstore/ttlstore"
)

// BenchmarkReadOrLoad measures ReadOrLoad on one goroutine, for tuning its
// miss (bench/'s BenchmarkLoadMiss compares it with otter's loader):
//
//	miss/struct  a new id every op; load returns a struct, marshaled as it is stored
//	miss/json    the same, load returning the JSON bytes
//	miss/manual  the read-through written by hand: Read, then Create of the struct
//	hit          a live id, among 10k
func BenchmarkReadOrLoad(b *testing.B) {
	type profile struct {
		ID    string `json:"id"`
		Name  string `json:"name"`
		Score int    `json:"score"`
	}
	loadStruct := func(_ context.Context, id string) (any, error) {
		return profile{ID: id, Name: "Ada Lovelace", Score: 1815}, nil
	}
	loadJSON := func(_ context.Context, id string) (any, error) {
		return fmt.Appendf(make([]byte, 0, 64), `{"id":%q,"name":"Ada Lovelace","score":1815}`, id), nil
	}
	missIDs := func(n int) []string {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprintf("miss-%09d", i)
		}
		return ids
	}
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		get  func(c *ttlstore.Collection, id string) error
	}{
		{"struct", func(c *ttlstore.Collection, id string) error {
			_, err := c.ReadOrLoad(ctx, id, loadStruct)
			return err
		}},
		{"json", func(c *ttlstore.Collection, id string) error {
			_, err := c.ReadOrLoad(ctx, id, loadJSON)
			return err
		}},
		{"manual", func(c *ttlstore.Collection, id string) error {
			if _, err := c.Read(id); !errors.Is(err, ttlstore.ErrNotFound) {
				return err
			}
			v, _ := loadStruct(ctx, id)
			_, err := c.Create(v)
			if errors.Is(err, ttlstore.ErrConflict) {
				_, err = c.Read(id)
			}
			return err
		}},
	} {
		b.Run("miss/"+tt.name, func(b *testing.B) {
			c := newBenchCollection(b, false)
			defer c.Close()
			ids := missIDs(b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := tt.get(c, ids[i]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("hit", func(b *testing.B) {
		const n = 10_000
		c, ids, _ := benchCollection(b, n, false)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := c.ReadOrLoad(ctx, ids[i%n], loadStruct); err != nil {
				b.Fatal(err)
			}
		}
	})
}
