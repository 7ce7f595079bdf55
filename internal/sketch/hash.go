package sketch

import "math/bits"

// Hash is a 64-bit hash of key under seed that is the same in every run
// of every process: the policy's sketch and ghosts count a document by it
// unless the collection asks for a random seed, so that a workload
// replayed keeps the same documents in every run (a random seed makes the
// sketch's rare collisions, and so the duels they turn, differ from run
// to run, and W-TinyLFU carries one such difference far: on the public
// traces, up to 1.6 points of hit ratio between runs). It is wyhash
// (Wang Yi, public domain; its final version, 4) for keys of up to 48
// bytes, and gives its published test vectors (TestHashIsWyhash); longer
// keys take its 16-byte loop alone, not its three lanes of 48 bytes:
// words of the key multiplied in pairs with the seed folded in, the
// 128-bit products' halves xored. Its low and high bits are both well
// mixed (TestHashSpreads). It is not a keyed hash in the cryptographic
// sense: with a known seed, keys that collide can be found.
func Hash(seed uint64, key string) uint64 {
	n := len(key)
	seed ^= mix(seed^h0, h1)
	var a, b uint64
	switch {
	case n <= 16:
		if n >= 4 {
			q := n >> 3 << 2 // 0 or 4: the two 4-byte loads at each end overlap for n < 8
			a = r4(key, 0)<<32 | r4(key, q)
			b = r4(key, n-4)<<32 | r4(key, n-4-q)
		} else if n > 0 {
			a = uint64(key[0])<<16 | uint64(key[n>>1])<<8 | uint64(key[n-1])
		}
	default:
		i := 0
		for ; n-i > 16; i += 16 {
			seed = mix(r8(key, i)^h1, r8(key, i+8)^seed)
		}
		a, b = r8(key, n-16), r8(key, n-8)
	}
	a ^= h1
	b ^= seed
	hi, lo := bits.Mul64(a, b)
	return mix(lo^h0^uint64(n), hi^h1)
}

// wyhash's constants.
const (
	h0 = 0xa0761d6478bd642f
	h1 = 0xe7037ed1a0b428db
)

// mix multiplies a by b and folds the 128-bit product's halves.
func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// r8 is key's 8 bytes from i, little-endian.
func r8(key string, i int) uint64 {
	_ = key[i+7]
	return uint64(key[i]) | uint64(key[i+1])<<8 | uint64(key[i+2])<<16 | uint64(key[i+3])<<24 |
		uint64(key[i+4])<<32 | uint64(key[i+5])<<40 | uint64(key[i+6])<<48 | uint64(key[i+7])<<56
}

// r4 is key's 4 bytes from i, little-endian.
func r4(key string, i int) uint64 {
	_ = key[i+3]
	return uint64(key[i]) | uint64(key[i+1])<<8 | uint64(key[i+2])<<16 | uint64(key[i+3])<<24
}
