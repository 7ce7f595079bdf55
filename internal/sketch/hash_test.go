package sketch

import (
	"math/bits"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHashIsWyhash checks Hash against wyhash's published test vectors
// (final version 4) for keys under 48 bytes: the policy's choices are the
// same in every run, and in every build, only while the hash is.
func TestHashIsWyhash(t *testing.T) {
	for _, v := range []struct {
		seed uint64
		key  string
		want uint64
	}{
		{0, "", 0x409638ee2bde459},
		{1, "a", 0xa8412d091b5fe0a9},
		{2, "abc", 0x32dd92e4b2915153},
		{3, "message digest", 0x8619124089a3a16b},
	} {
		assert.Equal(t, v.want, Hash(v.seed, v.key), "seed %d, %q", v.seed, v.key)
	}
}

// TestHashReadsEveryByte changes each byte of keys of every length from 1
// to 70 (each branch of Hash: 1-3, 4-7, 8-16 bytes, and past 16, the
// loop and its tail) and checks that the hash changes, and that the seed
// and the length count too.
func TestHashReadsEveryByte(t *testing.T) {
	for n := 1; n <= 70; n++ {
		key := []byte(strings.Repeat("k", n))
		h := Hash(0, string(key))
		for i := range key {
			key[i] ^= 1
			assert.NotEqual(t, h, Hash(0, string(key)), "length %d, byte %d", n, i)
			key[i] ^= 1
		}
		assert.NotEqual(t, h, Hash(1, string(key)), "length %d: the seed", n)
		assert.NotEqual(t, h, Hash(0, string(key)+"\x00"), "length %d: a zero byte more", n)
	}
	assert.NotEqual(t, Hash(0, ""), Hash(1, ""))
}

// TestHashSpreads hashes 1<<17 ids in decimal, as the hit-ratio traces'
// keys are written, and checks that they fill 1,024 buckets by their low
// bits and by their high bits as evenly as random keys would (the
// sketch's block and the ghosts' tag use both), and that flipping a bit of
// an id flips half the hash's bits on average.
func TestHashSpreads(t *testing.T) {
	const n, buckets = 1 << 17, 1024
	var low, high [buckets]int
	flips := 0
	for i := range n {
		id := strconv.Itoa(i)
		h := Hash(0, id)
		low[h%buckets]++
		high[h>>54]++
		b := []byte(id)
		b[len(b)-1] ^= 4
		flips += bits.OnesCount64(h ^ Hash(0, string(b)))
	}
	// A chi-square of 1,023 degrees of freedom: its mean is 1,023, and
	// 1,200 is past its 99.99th percentile.
	for name, counts := range map[string]*[buckets]int{"low": &low, "high": &high} {
		chi := 0.0
		for _, c := range counts {
			d := float64(c) - n/buckets
			chi += d * d / (n / buckets)
		}
		assert.Less(t, chi, 1200.0, "%s bits: chi-square", name)
	}
	mean := float64(flips) / n
	require.InDelta(t, 32, mean, 0.5, "bits flipped by one bit of the id")
}

// BenchmarkHash hashes ids of 8 to 24 bytes.
func BenchmarkHash(b *testing.B) {
	ids := []string{"12345678", "user-00012345", "session:abcdef0123456789"}
	var sink uint64
	for i := 0; i < b.N; i++ {
		sink += Hash(0, ids[i%len(ids)])
	}
	_ = sink
}
