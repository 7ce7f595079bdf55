package wal_test

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/ttlstore/ttlstore/internal/wal"
)

// BenchmarkReader reads a whole log from memory, so it measures framing and
// CRC checking, not the disk.
func BenchmarkReader(b *testing.B) {
	for _, bc := range []struct{ records, payload int }{
		{1_000_000, 250},
		{1_000, 256 << 10},
	} {
		b.Run(fmt.Sprintf("records=%d/payload=%d", bc.records, bc.payload), func(b *testing.B) {
			payload := bytes.Repeat([]byte("0123456789abcdef"), bc.payload/16+1)[:bc.payload]
			data := wal.AppendHeader(make([]byte, 0, wal.HeaderSize+bc.records*(wal.RecordHeaderSize+bc.payload)), wal.KindLog)
			for i := range bc.records {
				data = wal.AppendRecord(data, byte(1+i%255), payload)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			for range b.N {
				r, err := wal.NewReader(bytes.NewReader(data), int64(len(data)), wal.KindLog, 1<<20)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for {
					_, p, err := r.Next()
					if err == io.EOF {
						break
					}
					if err != nil || len(p) != bc.payload {
						b.Fatalf("record %d: %d bytes, %v", n, len(p), err)
					}
					n++
				}
				if n != bc.records || r.Torn() != 0 {
					b.Fatalf("read %d records, torn %d", n, r.Torn())
				}
			}
		})
	}
}

func BenchmarkAppendRecord(b *testing.B) {
	for _, size := range []int{0, 250, 64 << 10} {
		b.Run(fmt.Sprintf("payload=%d", size), func(b *testing.B) {
			payload := make([]byte, size)
			buf := make([]byte, 0, wal.RecordHeaderSize+size)
			b.ReportAllocs()
			b.SetBytes(int64(wal.RecordHeaderSize + size))
			for i := range b.N {
				buf = wal.AppendRecord(buf[:0], byte(1+i%255), payload)
			}
		})
	}
}
