package main

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ulikunitz/xz"
)

// TestParseCaffeine parses each of Caffeine's formats from a few records
// written here, and checks the exact keys: a byte order, a sign extension
// or a column that differed from Caffeine's reader would fail it. The
// adapt-size keys are what Guava 31.1 gives for
// Hashing.murmur3_128().newHasher().putLong(id).putInt(size).hash().asLong(),
// as Caffeine's AdaptSizeTraceReader computes them. None of these readers skips a
// record in Caffeine: every record, loads and stores alike, is an access;
// only blank lines are skipped here, where Caffeine would fail.
func TestParseCaffeine(t *testing.T) {
	tests := []struct {
		name   string
		format traceFormat
		in     string
		want   []uint64
		err    string
	}{
		{name: "cache2k: big-endian int32, sign-extended", format: formatCache2k,
			in:   "\x00\x00\x00\x01\x88\x00\x02\x00\xf0\x00\x00\x01\x7f\xff\xff\xff",
			want: []uint64{1, 0xffffffff88000200, 0xfffffffff0000001, 0x7fffffff}},
		{name: "cache2k: empty", format: formatCache2k, in: "", want: nil},
		{name: "cache2k: a partial record", format: formatCache2k, in: "\x00\x00\x00\x01\x00", err: "record 2: 1 bytes of 4"},
		{name: "scarab: big-endian int64", format: formatScarab,
			in:   "\x79\x86\x94\xa0\x90\x14\xfb\x50\xff\xff\xff\xff\xff\xff\xff\xfe",
			want: []uint64{0x798694a09014fb50, 0xfffffffffffffffe}},
		{name: "scarab: a partial record", format: formatScarab, in: "\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x02", err: "partial record"},
		{name: "corda: big-endian int64", format: formatCorda,
			in:   "\x39\x1c\x8e\xe0\xc5\x75\x42\xc7\x39\x1c\x8e\xe0\xc5\x75\x42\xc7\x00\x00\x00\x00\x00\x00\x00\x07",
			want: []uint64{0x391c8ee0c57542c7, 0x391c8ee0c57542c7, 7}},
		{name: "corda: a partial record", format: formatCorda, in: "\x39", err: "record 1: 1 bytes of 8"},
		{name: "cloud physics: big-endian uint32, not sign-extended", format: formatCloudPhysics,
			in:   "\xca\xce\x0d\x00\xff\xff\xff\xff\x00\x00\x00\x2a",
			want: []uint64{0xcace0d00, 0xffffffff, 42}},
		{name: "cloud physics: a partial record", format: formatCloudPhysics, in: "\xca\xce\x0d", err: "partial record"},
		{name: "address: loads and stores, the third column ignored", format: formatAddress,
			in:   "s 0x1fffff50 1\nl 0x1fffff58 1\nl 0x1FFFFF88 6\ns 0x1fffff50 13\n",
			want: []uint64{0x1fffff50, 0x1fffff58, 0x1fffff88, 0x1fffff50}},
		{name: "address: trimmed, CRLF, blank lines, no N, 64 bits", format: formatAddress,
			in:   "  l 0xffffffffffffffff 3\r\n\n\nl 0x0\n",
			want: []uint64{0xffffffffffffffff, 0}},
		{name: "address: no 0x", format: formatAddress, in: "l 0x10 1\nl 1fffff50 1\n", err: "line 2: address \"1fffff50\" does not start with 0x"},
		{name: "address: two spaces, as Java's split", format: formatAddress, in: "l  0x10 1\n", err: "does not start with 0x"},
		{name: "address: not hex", format: formatAddress, in: "l 0xz1 1\n", err: "line 1"},
		{name: "address: one field", format: formatAddress, in: "l\n", err: "no address"},
		{name: "adapt-size: Guava's murmur3_128 of id and size", format: formatAdaptSize,
			in:   "1 0 68\n2 1 7454\n3 0 68\n4 -5 1\n",
			want: []uint64{0x1e449808673e8265, 0x2b454fdd5bb0c57d, 0x1e449808673e8265, 0x8a7127e9a6754242}},
		{name: "adapt-size: the size saturated to an int", format: formatAdaptSize,
			in:   "5 7 5000000000\n6 7 2147483647\r\n\n7 9223372036854775807 2147483647",
			want: []uint64{0xbd4e0353ca605273, 0xbd4e0353ca605273, 0x41dd8a2dddad286e}},
		{name: "adapt-size: two fields", format: formatAdaptSize, in: "1 0 68\n2 1\n", err: "line 2: \"2 1\": 2 fields"},
		{name: "adapt-size: an id that is not a number", format: formatAdaptSize, in: "1 x 68\n", err: "line 1: id"},
		{name: "adapt-size: a size that is not a number", format: formatAdaptSize, in: "1 2 68 9\n", err: "line 1: size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseTrace(strings.NewReader(tt.in), tt.format)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one with %q", err, tt.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("got %#x, %v; want %#x", got, err, tt.want)
			}
		})
	}
}

// TestReadTraceFileCompressed reads a binary and a text trace of
// Caffeine's uncompressed, gzipped, zstd- and xz-compressed, and checks
// that each gives the same keys.
func TestReadTraceFileCompressed(t *testing.T) {
	traces := []struct {
		name   string
		format traceFormat
		in     string
		want   []uint64
	}{
		{"cache2k", formatCache2k, "\x00\x00\x00\x01\x88\x00\x02\x00\x00\x00\x00\x01", []uint64{1, 0xffffffff88000200, 1}},
		{"address", formatAddress, "s 0x1fffff50 1\nl 0x1fffff58 1\n", []uint64{0x1fffff50, 0x1fffff58}},
	}
	compressions := []struct {
		ext      string
		compress func(*testing.T, string) []byte
	}{
		{"", func(_ *testing.T, s string) []byte { return []byte(s) }},
		{".gz", gzipBytes},
		{".zst", zstdBytes},
		{".xz", xzBytes},
	}
	dir := t.TempDir()
	for _, tr := range traces {
		for _, c := range compressions {
			t.Run(tr.name+c.ext, func(t *testing.T) {
				path := filepath.Join(dir, tr.name+".trace"+c.ext)
				write(t, path, c.compress(t, tr.in))
				got, err := readTraceFile(path, tr.format)
				if err != nil || !slices.Equal(got, tr.want) {
					t.Fatalf("got %#x, %v; want %#x", got, err, tr.want)
				}
			})
		}
	}
	path := filepath.Join(dir, "bad.trace.xz")
	write(t, path, []byte("not xz"))
	if _, err := readTraceFile(path, formatCache2k); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("a file that is not xz: %v", err)
	}
}

// TestCaffeineTraceDir lays out some of Caffeine's traces as
// fetch-traces.sh does, under DIR/caffeine with the names Caffeine's files
// have, and replays the directory: each is found, in the catalog's order,
// and read in its own format.
func TestCaffeineTraceDir(t *testing.T) {
	dir := t.TempDir()
	c2k := "\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00\x01"                  // 1 2 1: 3 accesses, 2 keys
	long := "\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01" // 1 1: 2 accesses, 1 key
	write(t, filepath.Join(dir, "caffeine", "web07.trace.xz"), xzBytes(t, c2k))
	write(t, filepath.Join(dir, "caffeine", "scarab-recs.trace"), []byte(long))
	write(t, filepath.Join(dir, "caffeine", "trace_vaultservice.gz"), gzipBytes(t, long))
	write(t, filepath.Join(dir, "caffeine", "w106.trace.zst"), zstdBytes(t, c2k))
	write(t, filepath.Join(dir, "caffeine", "gcc.trace.gz"), gzipBytes(t, "l 0x10 1\ns 0x10 1\nl 0x20 2\n"))
	write(t, filepath.Join(dir, "caffeine", "request.trace.xz"), xzBytes(t, "1 0 68\n2 0 69\n3 0 68\n"))

	res, err := run(config{traces: dir, caches: mustCaches(t, "lru")})
	if err != nil {
		t.Fatal(err)
	}
	type counts struct{ accesses, unique int }
	want := map[string]counts{
		"web07": {3, 2}, "scarab-recs": {2, 1}, "vaultservice": {2, 1},
		"w106": {3, 2}, "gcc": {3, 2}, "adapt-size": {3, 2},
	}
	var names []string
	for _, tr := range res.traces {
		names = append(names, tr.workload)
		if got := (counts{tr.accesses, tr.unique}); got != want[tr.workload] {
			t.Errorf("%s: %d accesses, %d keys; want %d, %d", tr.workload, got.accesses, got.unique, want[tr.workload].accesses, want[tr.workload].unique)
		}
	}
	if order := []string{"web07", "scarab-recs", "vaultservice", "w106", "gcc", "adapt-size"}; !slices.Equal(names, order) {
		t.Errorf("replayed %v, want %v", names, order)
	}
	for _, name := range []string{"web12", "orm-busy", "orm-night", "gzip", "mcf", "swim", "twolf", "OLTP", "gli"} {
		if !slices.Contains(res.absent, name) {
			t.Errorf("%s not among the absent: %v", name, res.absent)
		}
	}
}

// FuzzParseCaffeine checks that no input makes Caffeine's formats panic;
// that a binary trace gives a key for each whole record, and an error
// when a record is cut short; and that a text trace gives at most a key a
// line.
func FuzzParseCaffeine(f *testing.F) {
	f.Add([]byte("\x00\x00\x00\x01\x88\x00\x02\x00"))
	f.Add([]byte("s 0x1fffff50 1\nl 0x1fffff58 1\r\n\n"))
	f.Add([]byte("1 0 68\n2 1 7454\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		binaries := []struct {
			format traceFormat
			size   int
		}{{formatCache2k, 4}, {formatScarab, 8}, {formatCorda, 8}, {formatCloudPhysics, 4}}
		for _, b := range binaries {
			got, err := parseTrace(bytes.NewReader(in), b.format)
			whole := len(in)%b.size == 0
			if whole != (err == nil) || (err == nil && len(got) != len(in)/b.size) {
				t.Fatalf("format %d, %d bytes: %d keys, %v", b.format, len(in), len(got), err)
			}
		}
		for _, format := range []traceFormat{formatAddress, formatAdaptSize} {
			got, err := parseTrace(bytes.NewReader(in), format)
			if lines := bytes.Count(in, []byte("\n")) + 1; err == nil && len(got) > lines {
				t.Fatalf("format %d: %d keys from %d lines", format, len(got), lines)
			}
		}
	})
}

func xzBytes(t *testing.T, s string) []byte {
	var b bytes.Buffer
	w, err := xz.NewWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
