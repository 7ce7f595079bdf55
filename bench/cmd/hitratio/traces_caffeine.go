package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// This file reads the production traces that Caffeine's simulator ships,
// in github.com/ben-manes/caffeine under
// simulator/src/main/resources/com/github/benmanes/caffeine/cache/simulator/parser/FAMILY/,
// each in the format that Caffeine's reader of that family
// (simulator/src/main/java/…/parser/FAMILY/*TraceReader.java) defines.
// fetch-traces.sh puts them all in DIR/caffeine/. Where each comes from,
// and its terms:
//
//   - cache2k (web07, web12, orm-busy, orm-night): from cache2k's author,
//     github.com/cache2k/cache2k-benchmark; copyright headissue GmbH, Jens
//     Wilke, under CC BY 4.0 (cache2k/LICENSE.txt beside the files): the
//     web traces are HTTP requests for an online shop's product detail
//     pages (July and December 2013), the orm ones the same shop's
//     database objects (a busy day, a night).
//   - scarab (scarab-recs): from Scarab Research (scarabresearch.com),
//     added to Caffeine by Viktor Szathmáry in 2016.
//   - corda (vaultservice, trace_vaultservice.gz): from R3 (r3.com), the
//     vault service of a Corda node, added by Christian Sailer in 2019.
//   - cloud_physics (w106): a CloudPhysics block trace as the authors of
//     LIRS2 (github.com/zhongch4g/LIRS2) distribute them.
//   - address (gcc, gzip, mcf, swim, twolf): the data addresses that SPEC
//     CPU programs load and store, the traces of UC San Diego's CSE 240A
//     (fall 2007, project 1).
//   - adapt_size (adapt-size, request.trace.xz): the sample request trace
//     of AdaptSize's simulator (Berger, Sitaraman and Harchol-Balter, NSDI
//     2017; github.com/dasebe/webcachesim).
//
// None but cache2k's states terms beside the data; Caffeine's repository
// is Apache 2.0 licensed. Name the source above when citing a result.
//
// The formats, as Caffeine's readers read them; a key is made a uint64 as
// Caffeine makes it a Java long (the same 64 bits):
//
//   - cache2k: a record is a big-endian 32-bit signed int (DataInputStream
//     readInt), the key, sign-extended to 64 bits as Java's int to long.
//   - scarab, corda: a record is a big-endian 64-bit int (readLong).
//   - cloud_physics: a record is a big-endian 32-bit unsigned int
//     (Integer.toUnsignedLong(readInt())). The w106 file's ints look
//     written little-endian; Caffeine reads them big-endian, and so does
//     this file: swapping the bytes of every key changes no hit ratio.
//   - address: a line is "OP 0xADDRESS N" (OP l for a load, s for a
//     store, N instructions since the last one); the key is the hex
//     address, parsed unsigned. Loads and stores are both accesses, as in
//     Caffeine.
//   - adapt_size: a line is "TIME ID SIZE", decimal; the key is Guava's
//     murmur3_128 of the ID as a long then the SIZE saturated to an int
//     (murmur3.go), so that, as AdaptSize's simulator does, the same ID
//     with another size is another object. Caffeine replays this trace
//     weighted by SIZE, and only against the policies that support
//     weights; here every key weighs 1, as every key of every trace does.
//
// A binary trace must be a whole number of records: a partial record at
// the end is an error, as in Caffeine's BinaryTraceReader. A text line is
// trimmed of spaces, and its fields are split at single spaces, as
// Java's split(" ", 3) splits them. Two things differ from Caffeine, in
// what they reject or skip, not in what a well-formed file gives: a blank
// line is skipped (Caffeine's readers fail on it), and an address must
// start with 0x (Caffeine drops its first two characters, whatever they
// are). None of the shipped files has either.

// caffeineFile lists the names a trace of Caffeine's may have: its file's
// (file), uncompressed or compressed another way.
func caffeineFile(name, file string, format traceFormat, about string) publicTrace {
	base := strings.TrimSuffix(strings.TrimSuffix(file, ".xz"), ".gz")
	files := []string{file}
	for _, f := range []string{base, base + ".gz", base + ".zst", base + ".xz"} {
		if f != file {
			files = append(files, f)
		}
	}
	return publicTrace{name: name, family: "caffeine", format: format, files: files, about: about}
}

// addressFile is the SPEC CPU program name's address trace (formatAddress).
func addressFile(name string) publicTrace {
	return caffeineFile(name, name+".trace.gz", formatAddress,
		"SPEC CPU: the data addresses "+name+" loads and stores (UCSD CSE 240A)")
}

// parseBinary reads records of size bytes each to the end of r, and makes
// each a key with key.
func parseBinary(r io.Reader, size int, key func([]byte) uint64) ([]uint64, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	rec := make([]byte, size)
	var t []uint64
	for {
		n, err := io.ReadFull(br, rec)
		switch {
		case err == io.EOF:
			return t, nil
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, fmt.Errorf("record %d: %d bytes of %d: a partial record at the end", len(t)+1, n, size)
		case err != nil:
			return nil, err
		}
		t = append(t, key(rec))
	}
}

// cache2kKey is a big-endian int32, sign-extended.
func cache2kKey(b []byte) uint64 { return uint64(int64(int32(binary.BigEndian.Uint32(b)))) }

// cloudPhysicsKey is a big-endian uint32.
func cloudPhysicsKey(b []byte) uint64 { return uint64(binary.BigEndian.Uint32(b)) }

// parseLines reads r line by line, trimmed, skipping blank lines, and
// makes each other line a key with key.
func parseLines(r io.Reader, key func(string) (uint64, error)) ([]uint64, error) {
	var t []uint64
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		s := bytes.TrimSpace(sc.Bytes())
		if len(s) == 0 {
			continue
		}
		k, err := key(string(s))
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		t = append(t, k)
	}
	return t, sc.Err()
}

// addressKey is the address of an address trace's line, "OP 0xADDRESS N".
func addressKey(line string) (uint64, error) {
	f := strings.SplitN(line, " ", 3)
	if len(f) < 2 {
		return 0, fmt.Errorf("%q: no address (OP 0xADDRESS N)", line)
	}
	hex, ok := strings.CutPrefix(f[1], "0x")
	if !ok {
		return 0, fmt.Errorf("address %q does not start with 0x", f[1])
	}
	return strconv.ParseUint(hex, 16, 64)
}

// adaptSizeKey is the key of an AdaptSize trace's line, "TIME ID SIZE":
// Guava's murmur3_128 of ID as a long and SIZE saturated to an int, as a
// long (Caffeine's AdaptSizeTraceReader).
func adaptSizeKey(line string) (uint64, error) {
	f := strings.SplitN(line, " ", 3)
	if len(f) < 3 {
		return 0, fmt.Errorf("%q: %d fields, want 3 (TIME ID SIZE)", line, len(f))
	}
	id, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("id: %w", err)
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size: %w", err)
	}
	weight := int32(max(math.MinInt32, min(math.MaxInt32, size))) // Ints.saturatedCast
	var b [12]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(id)) // Guava's putLong
	binary.LittleEndian.PutUint32(b[8:], uint32(weight))
	h1, _ := murmur3x64_128(b[:])
	return h1, nil // HashCode.asLong: its first 8 bytes, little-endian
}
