package jsonscan

import (
	"encoding/binary"
	"math/rand/v2"
	"strconv"
	"testing"
)

func TestEightDigits(t *testing.T) {
	// The quotients it computes by multiplication, for every lane value.
	for y := uint64(0); y < 10000; y++ {
		if y*10486>>20 != y/100 {
			t.Fatalf("(%d*10486)>>20 = %d, want %d", y, y*10486>>20, y/100)
		}
		if y < 100 && y*103>>10 != y/10 {
			t.Fatalf("(%d*103)>>10 = %d, want %d", y, y*103>>10, y/10)
		}
	}
	check := func(x uint64) {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], eightDigits(x))
		if want := strconv.FormatUint(x+1e8, 10)[1:]; string(b[:]) != want {
			t.Fatalf("eightDigits(%d) = %q, want %q", x, b[:], want)
		}
	}
	for x := uint64(0); x < 100000; x++ {
		check(x)
		check(99999999 - x)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000000 {
		check(r.Uint64N(1e8))
	}
}

// TestAppendStampAny checks AppendStamp, whose ten-digit case has its own
// code, against plain formatting for values of ts on both sides of the
// edges of that case, with and without room in dst.
func TestAppendStampAny(t *testing.T) {
	tss := []int64{0, 1, -1, 999999999, 1e9, 1e9 + 1, 1234567890, 1700000000, 9999999999, 1e10, 1e10 + 1,
		-1e9, -9999999999, 1<<63 - 1, -1 << 63}
	r := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		tss = append(tss, 1e9+r.Int64N(9e9), r.Int64())
	}
	for _, ts := range tss {
		for _, etag := range []string{"", "e", benchEtag} {
			for _, needComma := range []bool{false, true} {
				for _, spare := range []int{0, 64} {
					dst := append(make([]byte, 0, 3+spare), "pfx"...)
					want := "pfx"
					if needComma {
						want += ","
					}
					want += `"_ts":` + strconv.FormatInt(ts, 10) + `,"_etag":"` + etag + `"}`
					if got := AppendStamp(dst, ts, etag, needComma); string(got) != want {
						t.Fatalf("AppendStamp(%q, %d, %q, %v) = %q, want %q", dst, ts, etag, needComma, got, want)
					}
				}
			}
		}
	}
}
