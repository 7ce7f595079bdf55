package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// This file reads the public traces that policy papers and otter's and
// Caffeine's simulators replay. They are not in this repository (some are
// tens of megabytes, and each comes with its own terms: the ARC traces may
// be used if the ARC paper is cited, cache2k's are CC BY 4.0);
// fetch-traces.sh puts them in a directory, given to the command with
// -traces or TTLSTORE_TRACES, laid out as the repositories they come from
// have them:
//
//	DIR/arc/P3.lis.zst            moka-rs/cache-trace's arc/, the ARC paper's traces
//	DIR/lirs/gli.trace.gz         Caffeine's simulator/…/parser/lirs/, the LIRS paper's
//	DIR/caffeine/web07.trace.xz   Caffeine's simulator/…/parser/{cache2k,scarab,corda,
//	                              cloud_physics,address,adapt_size}/, production traces
//
// A trace may also be uncompressed (P3.lis, gli.trace, web07.trace),
// gzipped (P3.lis.gz, otter's p3.gz), zstd- or xz-compressed, in DIR or in
// its family's directory; a trace that is in none of those places is
// skipped, and the run says so.
//
// The ARC and LIRS formats are below; Caffeine's six others, and where
// each of those traces comes from, are in traces_caffeine.go.
//
//   - ARC (Megiddo and Modha, FAST 2003): a line is "start count ignore
//     request", four decimal fields separated by spaces; it reads the count
//     blocks start, start+1, …, start+count-1, one access each, as
//     moka-rs/cache-trace's arc/README.md describes the files and as
//     Caffeine's ArcTraceReader and otter's parser expand them.
//   - LIRS (Jiang and Zhang, SIGMETRICS 2002): a line is one decimal block
//     number; a line "*" is a breakpoint of the LIRS simulator, and is
//     skipped with blank lines, as Caffeine's LirsTraceReader does. Some
//     files end their lines with CRLF (loop), and one ends with a blank
//     line (gli).

// traceFormat is how a trace file is written.
type traceFormat int

const (
	formatARC traceFormat = iota
	formatLIRS
	formatCache2k      // Caffeine's Cache2kTraceReader
	formatScarab       // ScarabTraceReader
	formatCorda        // CordaTraceReader
	formatCloudPhysics // CloudPhysicsTraceReader
	formatAddress      // AddressTraceReader
	formatAdaptSize    // AdaptSizeTraceReader
)

// A publicTrace is one trace of the catalog.
type publicTrace struct {
	name   string // as the papers name it, and the table
	family string // "arc", "lirs" or "caffeine": the subdirectory
	format traceFormat
	files  []string // the names it may have, the first found is read
	about  string
}

// arcFile and lirsFile list the file names a trace may have.
func arcFile(name, about string) publicTrace {
	lower := []byte(name)
	for i, c := range lower {
		if 'A' <= c && c <= 'Z' {
			lower[i] = c + 'a' - 'A'
		}
	}
	files := []string{name + ".lis", name + ".lis.zst", name + ".lis.gz", string(lower) + ".gz", string(lower) + ".lis.gz"}
	return publicTrace{name: name, family: "arc", format: formatARC, files: files, about: about}
}

func lirsFile(name, about string) publicTrace {
	files := []string{name + ".trace", name + ".trace.gz", name + ".trace.zst", name + ".lirs.gz", name + ".gz"}
	return publicTrace{name: name, family: "lirs", format: formatLIRS, files: files, about: about}
}

// publicTraces is the catalog, in the order of the table. The ARC paper's
// P1–P14, ConCat, Merge(P), DS1, S1–S3 and SPC1 are listed with the ones
// fetch-traces.sh can get: a run uses whichever are in the directory. The
// production traces from Caffeine's simulator follow the papers' ones, by
// the names Caffeine's files have.
var publicTraces = []publicTrace{
	arcFile("OLTP", "ARC: a CODASYL database, one hour"),
	arcFile("P1", "ARC: a Windows NT workstation's disk"),
	arcFile("P2", "ARC: a Windows NT workstation's disk"),
	arcFile("P3", "ARC: a Windows NT workstation's disk"),
	arcFile("P4", "ARC: a Windows NT workstation's disk"),
	arcFile("P5", "ARC: a Windows NT workstation's disk"),
	arcFile("P6", "ARC: a Windows NT workstation's disk"),
	arcFile("P7", "ARC: a Windows NT workstation's disk"),
	arcFile("P8", "ARC: a Windows NT workstation's disk"),
	arcFile("P9", "ARC: a Windows NT workstation's disk"),
	arcFile("P10", "ARC: a Windows NT workstation's disk"),
	arcFile("P11", "ARC: a Windows NT workstation's disk"),
	arcFile("P12", "ARC: a Windows NT workstation's disk"),
	arcFile("P13", "ARC: a Windows NT workstation's disk"),
	arcFile("P14", "ARC: a Windows NT workstation's disk"),
	arcFile("S1", "ARC: a search engine's disk reads, one hour"),
	arcFile("S2", "ARC: a search engine's disk reads, four hours"),
	arcFile("S3", "ARC: a search engine's disk reads, six hours"),
	arcFile("DS1", "ARC: an ERP database server, seven days"),
	arcFile("ConCat", "ARC: P1–P14 one after the other"),
	arcFile("MergeP", "ARC: P1–P14 merged by time"),
	arcFile("MergeS", "ARC: S1–S3 merged by time"),
	lirsFile("2_pools", "LIRS: two pools of blocks, one accessed more often"),
	lirsFile("cpp", "LIRS: the GNU C preprocessor"),
	lirsFile("cs", "LIRS: cscope, a C source browser"),
	lirsFile("gli", "LIRS: glimpse, a text search"),
	lirsFile("loop", "LIRS: a loop over 1000 blocks"),
	lirsFile("multi1", "LIRS: cs and cpp at once"),
	lirsFile("multi2", "LIRS: cs, cpp and postgres at once"),
	lirsFile("multi3", "LIRS: cpp, gnuplot, glimpse and postgres at once"),
	lirsFile("ps", "LIRS: postgres joins"),
	lirsFile("sprite", "LIRS: the Sprite network file system"),
	caffeineFile("web07", "web07.trace.xz", formatCache2k, "cache2k: HTTP requests for an online shop's product pages, July 2013"),
	caffeineFile("web12", "web12.trace.xz", formatCache2k, "cache2k: HTTP requests for an online shop's product pages, December 2013"),
	caffeineFile("orm-busy", "orm-busy.trace.xz", formatCache2k, "cache2k: an online shop's database objects, a busy day"),
	caffeineFile("orm-night", "orm-night.trace.xz", formatCache2k, "cache2k: an online shop's database objects, at night"),
	caffeineFile("scarab-recs", "scarab-recs.trace.xz", formatScarab, "Scarab Research: e-commerce recommendations (its recs trace)"),
	caffeineFile("vaultservice", "trace_vaultservice.gz", formatCorda, "Corda: the vault service of an R3 Corda ledger node"),
	caffeineFile("w106", "w106.trace.xz", formatCloudPhysics, "CloudPhysics: a virtual disk's block accesses (LIRS2's w106)"),
	addressFile("gcc"),
	addressFile("gzip"),
	addressFile("mcf"),
	addressFile("swim"),
	addressFile("twolf"),
	caffeineFile("adapt-size", "request.trace.xz", formatAdaptSize, "AdaptSize: a CDN's requests, each object and size one key, sizes ignored"),
}

// traceShares are the capacities each public trace is replayed at, as
// shares of its distinct keys: from 5 % to 80 %, each about two and a half
// times the one before.
var traceShares = []float64{0.05, 0.15, 0.40, 0.80}

// traceWorkloads returns the public traces found in dir, as workloads,
// and the names of those not found. maxAccesses, if not 0, cuts each to
// its first maxAccesses accesses.
func traceWorkloads(dir string, maxAccesses int) (ws []workload, absent []string, err error) {
	if st, err := os.Stat(dir); err != nil {
		return nil, nil, fmt.Errorf("-traces: %w", err)
	} else if !st.IsDir() {
		return nil, nil, fmt.Errorf("-traces: %s is not a directory", dir)
	}
	for _, t := range publicTraces {
		path, err := findTrace(dir, t)
		if errors.Is(err, errTraceAbsent) {
			absent = append(absent, t.name)
			continue
		} else if err != nil {
			return nil, nil, err
		}
		about := t.about
		if maxAccesses > 0 {
			about += fmt.Sprintf(" (its first %d accesses at most)", maxAccesses)
		}
		ws = append(ws, workload{
			name:   t.name,
			about:  about,
			shares: traceShares,
			trace: func(int) ([]uint64, error) {
				tr, err := readTraceFile(path, t.format)
				if maxAccesses > 0 && len(tr) > maxAccesses {
					tr = tr[:maxAccesses:maxAccesses]
				}
				return tr, err
			},
		})
	}
	if len(ws) == 0 {
		return nil, absent, fmt.Errorf("-traces: no public trace in %s (fetch-traces.sh gets them)", dir)
	}
	return ws, absent, nil
}

// errTraceAbsent is returned by findTrace when a trace is not in the
// directory.
var errTraceAbsent = errors.New("not in the traces directory")

// findTrace returns the path of t in dir: the first of its file names
// found in dir/family, then in dir.
func findTrace(dir string, t publicTrace) (string, error) {
	for _, d := range []string{filepath.Join(dir, t.family), dir} {
		for _, f := range t.files {
			p := filepath.Join(d, f)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return p, nil
			} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return "", err
			}
		}
	}
	return "", fmt.Errorf("%s: %w %s", t.name, errTraceAbsent, dir)
}

// readTraceFile reads the trace at path, decompressed by its name's
// extension (.gz, .zst, .xz, or none), in the given format.
func readTraceFile(path string, format traceFormat) ([]uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	switch filepath.Ext(path) {
	case ".gz":
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	case ".zst":
		zr, err := zstd.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	case ".xz":
		zr, err := xz.NewReader(bufio.NewReaderSize(f, 1<<16))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		r = zr
	}
	t, err := parseTrace(r, format)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// parseTrace reads a trace in the given format from r, decompressed.
func parseTrace(r io.Reader, format traceFormat) ([]uint64, error) {
	switch format {
	case formatARC:
		return parseARC(r)
	case formatLIRS:
		return parseLIRS(r)
	case formatCache2k:
		return parseBinary(r, 4, cache2kKey)
	case formatScarab, formatCorda:
		return parseBinary(r, 8, binary.BigEndian.Uint64)
	case formatCloudPhysics:
		return parseBinary(r, 4, cloudPhysicsKey)
	case formatAddress:
		return parseLines(r, addressKey)
	case formatAdaptSize:
		return parseLines(r, adaptSizeKey)
	}
	return nil, fmt.Errorf("no trace format %d", format)
}

// parseARC reads a trace in the ARC format (see the top of the file).
func parseARC(r io.Reader) ([]uint64, error) {
	var t []uint64
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		fields := bytes.Fields(sc.Bytes())
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 4 {
			return nil, fmt.Errorf("line %d: %d fields, want 4 (start count ignore request)", line, len(fields))
		}
		start, err := strconv.ParseUint(string(fields[0]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: start: %w", line, err)
		}
		count, err := strconv.ParseUint(string(fields[1]), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("line %d: count: %w", line, err)
		}
		if start+count < start {
			return nil, fmt.Errorf("line %d: blocks %d+%d overflow", line, start, count)
		}
		for b := start; b < start+count; b++ {
			t = append(t, b)
		}
	}
	return t, sc.Err()
}

// parseLIRS reads a trace in the LIRS format (see the top of the file).
func parseLIRS(r io.Reader) ([]uint64, error) {
	var t []uint64
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		s := bytes.TrimSpace(sc.Bytes())
		if len(s) == 0 || string(s) == "*" {
			continue
		}
		k, err := strconv.ParseUint(string(s), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		t = append(t, k)
	}
	return t, sc.Err()
}
