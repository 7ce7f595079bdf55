package main

import (
	"encoding/binary"
	"encoding/hex"
	"testing"
)

// TestMurmur3 checks murmur3x64_128 against Guava 31.1's
// Hashing.murmur3_128().hashBytes of the first n bytes of a sentence:
// every length of tail, one block and more. Guava prints a HashCode as the
// little-endian bytes of h1 then h2.
func TestMurmur3(t *testing.T) {
	const fox = "The quick brown fox jumps over the lazy dog"
	tests := []struct {
		n     int
		guava string
	}{
		{0, "00000000000000000000000000000000"},
		{1, "9a6884917e77038c793e29bab4d6b53a"},
		{2, "b9e368eeea0bddd7976b029990b66fa5"},
		{3, "9a6dd6dc52264f3042bfea155d5e38ef"},
		{4, "9c7da0abbe0143bd1cdd26804b3caedf"},
		{5, "fe70522075ac7a6f1fc6da90d3ebf576"},
		{6, "4667f6f300116e791fab65160b7ea0b2"},
		{7, "c9d5bc5a3a84d3f073606dc8f9b79493"},
		{8, "cd715bade4aa4b64df1c88e297f9ee8e"},
		{9, "55f1a8b20464a037c0cc6e3dffc8bcad"},
		{10, "b8847445df440e42e95f5177d4adab9c"},
		{11, "82a839075520c3879f7b6ed6a5e891fa"},
		{12, "cbf9902f37a1d6612925007cea5363b6"},
		{13, "3bfd9bf9930c603cf4266f051933e1c3"},
		{14, "07606e5da916d2dc38c8465cb8eec184"},
		{15, "1692e364b87c13484bd67a3964af7bfd"},
		{16, "c4329baff444129da63a2a2c8b3c153d"},
		{17, "aee957e77663f9910ceb83ae8de5449b"},
		{31, "09c5c4d9ddb5289b64f9e20fb81c3c0d"},
		{32, "cfda9bb21bf96adfa6f3f18dc541a391"},
		{43, "6c1b07bc7bbc4be347939ac4a93c437a"},
	}
	for _, tt := range tests {
		h1, h2 := murmur3x64_128([]byte(fox[:tt.n]))
		b := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, h1), h2)
		if got := hex.EncodeToString(b); got != tt.guava {
			t.Errorf("%d bytes: %s, Guava %s", tt.n, got, tt.guava)
		}
	}
}
