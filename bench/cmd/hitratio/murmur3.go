package main

import (
	"encoding/binary"
	"math/bits"
)

// murmur3x64_128 is MurmurHash3's x64 128-bit hash of b with seed 0, as
// Guava's Hashing.murmur3_128() computes it: h1 and h2 are the two halves,
// which Guava's HashCode holds as the little-endian bytes of h1 then h2,
// so that its asLong is h1. Caffeine's AdaptSizeTraceReader makes its keys
// with it (traces_caffeine.go). It is not used on any path that is timed.
func murmur3x64_128(b []byte) (h1, h2 uint64) {
	const c1, c2 = 0x87c37b91114253d5, 0x4cf5ad432745937f
	n := len(b)
	for ; len(b) >= 16; b = b[16:] {
		k1 := binary.LittleEndian.Uint64(b)
		k2 := binary.LittleEndian.Uint64(b[8:])
		h1 ^= bits.RotateLeft64(k1*c1, 31) * c2
		h1 = (bits.RotateLeft64(h1, 27)+h2)*5 + 0x52dce729
		h2 ^= bits.RotateLeft64(k2*c2, 33) * c1
		h2 = (bits.RotateLeft64(h2, 31)+h1)*5 + 0x38495ab5
	}
	var tail [16]byte // the last len(b) < 16 bytes, zero-padded
	copy(tail[:], b)
	k1 := binary.LittleEndian.Uint64(tail[:])
	k2 := binary.LittleEndian.Uint64(tail[8:])
	h1 ^= bits.RotateLeft64(k1*c1, 31) * c2 // 0 when there is no tail
	h2 ^= bits.RotateLeft64(k2*c2, 33) * c1

	h1 ^= uint64(n)
	h2 ^= uint64(n)
	h1 += h2
	h2 += h1
	h1, h2 = fmix64(h1), fmix64(h2)
	h1 += h2
	h2 += h1
	return h1, h2
}

// fmix64 is MurmurHash3's finalizer.
func fmix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}
