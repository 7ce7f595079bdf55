package ttlstore

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"strconv"
	"strings"
	"unsafe"

	"github.com/ttlstore/ttlstore/internal/jsonscan"
	"github.com/ttlstore/ttlstore/internal/patch"
)

// Partition keys: a collection with Options.PartitionKeyPath identifies a
// document by (partition key value, id), as Azure Cosmos DB does. This file
// has the value type, its encoding, and how a document's value is found.
//
// Inside the collection a partitioned document's key, the string its
// shard's table files it under, is the encoding of its partition key value
// followed by its id. The encoding is self-delimiting and begins with '/',
// which no id may contain, so that keys are unique, an unpartitioned key
// (an id) is never mistaken for a partitioned one, and an error message can
// show both parts (describeKey):
//
//	"/u"                      none: the path is absent from the document
//	"/z"                      null
//	"/f", "/t"                false, true
//	"/n" bits                 a number: its float64 bits, 8 bytes big-endian,
//	                          -0 written as 0
//	"/s" len string           a string, unescaped: its length as a uvarint
//
// The collection picks a partitioned document's shard by the hash of the
// encoding alone (keyHash), so a partition lives in one shard: a batch in
// one partition locks one shard, and the shard's partition index lists the
// partition's documents (partition_index.go).

// MaxPartitionKeyLength is the longest string partition key value, in bytes
// of UTF-8 (unescaped), as Azure Cosmos DB's 2 KB limit on large partition
// keys.
const MaxPartitionKeyLength = 2048

// pkMark begins every partition key encoding.
const pkMark = '/'

// PartitionKey is a partition key value: a string, a number, a boolean,
// JSON null, or none (the document has nothing at the collection's
// partition key path). Make one with PartitionKeyString, PartitionKeyNumber,
// PartitionKeyBool, PartitionKeyNull or PartitionKeyNone. The zero value is
// PartitionKeyNone().
//
// Two PartitionKeys are equal (==) exactly when they name the same
// partition: numbers compare by value as float64, as Azure Cosmos DB hashes
// them (1 and 1.0 are one partition; so are 0 and -0, and integers beyond
// 2^53 that round to the same float64); null and none are two partitions,
// distinct from each other and from the string "null". A PartitionKey is a
// small immutable value, safe to copy and to share.
type PartitionKey struct {
	enc string // the encoding (see the top of partition.go); "" for none
}

// PartitionKeyString returns the partition key that is the JSON string s.
func PartitionKeyString(s string) PartitionKey {
	b := make([]byte, 0, 2+binary.MaxVarintLen64+len(s))
	b = append(b, pkMark, 's')
	b = binary.AppendUvarint(b, uint64(len(s)))
	b = append(b, s...)
	return PartitionKey{enc: unsafe.String(unsafe.SliceData(b), len(b))}
}

// PartitionKeyNumber returns the partition key that is the JSON number f.
// -0 is 0. NaN and the infinities are not JSON numbers: a document cannot
// hold them, so no document is in their partition.
func PartitionKeyNumber(f float64) PartitionKey {
	if f == 0 {
		f = 0 // -0 is 0
	}
	b := make([]byte, 0, 10)
	b = append(b, pkMark, 'n')
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(f))
	return PartitionKey{enc: unsafe.String(unsafe.SliceData(b), len(b))}
}

// PartitionKeyBool returns the partition key that is the JSON boolean b.
func PartitionKeyBool(b bool) PartitionKey {
	if b {
		return PartitionKey{enc: "/t"}
	}
	return PartitionKey{enc: "/f"}
}

// PartitionKeyNull returns the partition key of the documents whose value at
// the partition key path is JSON null.
func PartitionKeyNull() PartitionKey { return PartitionKey{enc: "/z"} }

// PartitionKeyNone returns the partition key of the documents that have no
// value at the partition key path (Azure Cosmos DB's PartitionKey.None). It
// is the zero PartitionKey.
func PartitionKeyNone() PartitionKey { return PartitionKey{} }

// encoding returns pk's encoding, as keys begin with it.
func (pk PartitionKey) encoding() string {
	if pk.enc == "" {
		return "/u"
	}
	return pk.enc
}

// String returns pk as JSON (a quoted string, a number, true, false, null),
// or "none" for PartitionKeyNone.
func (pk PartitionKey) String() string { return describePK(pk.encoding()) }

// describePK is the String of the partition key with encoding enc.
func describePK(enc string) string {
	if len(enc) < 2 {
		return "invalid"
	}
	switch enc[1] {
	case 'u':
		return "none"
	case 'z':
		return "null"
	case 't':
		return "true"
	case 'f':
		return "false"
	case 'n':
		if len(enc) == 10 {
			return strconv.FormatFloat(math.Float64frombits(binary.BigEndian.Uint64([]byte(enc[2:]))), 'g', -1, 64)
		}
	case 's':
		if n := pkEncLen(enc); n == len(enc) {
			_, w := binary.Uvarint([]byte(enc[2:min(len(enc), 2+binary.MaxVarintLen64)]))
			return quoteID(enc[2+w:])
		}
	}
	return "invalid"
}

// pkEncLen returns the length of the partition key encoding key begins
// with, or 0 if it does not begin with one. It reads no byte past key's end.
func pkEncLen(key string) int {
	if len(key) < 2 || key[0] != pkMark {
		return 0
	}
	switch key[1] {
	case 'u', 'z', 't', 'f':
		return 2
	case 'n':
		if len(key) >= 10 {
			return 10
		}
	case 's':
		var x uint64
		var s uint
		for i := 2; i < len(key) && i < 2+binary.MaxVarintLen64; i++ {
			b := key[i]
			x |= uint64(b&0x7f) << s
			if b < 0x80 {
				if n := uint64(i + 1); x <= uint64(len(key))-n {
					return int(n + x)
				}
				return 0
			}
			s += 7
		}
	}
	return 0
}

// keyHash is the hash of a table key, from which shardFor takes the shard
// (the low bits) and the table the rest. A partitioned key's low bits are
// those of its partition key encoding's hash, so that a partition is one
// shard; the table uses none of those bits (see h1), so it is unaffected.
// An id costs one comparison more than its maphash.
func keyHash(seed maphash.Seed, key string) uint64 {
	h := maphash.String(seed, key)
	if len(key) != 0 && key[0] == pkMark {
		if n := pkEncLen(key); n != 0 {
			h = h&^(numShards-1) | maphash.String(seed, key[:n])&(numShards-1)
		}
	}
	return h
}

// describeKey is key as an error message shows it: a quoted id, followed
// for a partitioned key by its partition key.
func describeKey(key string) string {
	if n := pkEncLen(key); n != 0 {
		return quoteID(key[n:]) + " in partition " + describePK(key[:n])
	}
	return quoteID(key)
}

// pkPath is a collection's partition key path, checked.
type pkPath struct {
	path string // as given: "/tenant", "/a/b", "/a~1b"
}

// checkPartitionKeyPath checks Options.PartitionKeyPath: a JSON Pointer of
// one or more non-empty segments, not into a system property.
func checkPartitionKeyPath(op, path string) (*pkPath, error) {
	if path == "" {
		return nil, nil
	}
	bad := func(why string) error {
		return newErrorDetail(op, "", ErrInvalidOptions, "PartitionKeyPath "+strconv.Quote(path)+": "+why)
	}
	if msg := patch.CheckPath(path); msg != "" {
		return nil, bad(msg)
	}
	for _, seg := range strings.Split(path[1:], "/") {
		if seg == "" {
			return nil, bad("empty segment")
		}
	}
	first, _, _ := strings.Cut(path[1:], "/")
	switch first {
	case "_ts", "_etag", "_rid", "_self", "_attachments":
		return nil, bad(strconv.Quote(first) + " is a system property")
	}
	return &pkPath{path: path}, nil
}

// partitionKeyOf returns the encoding of the partition key of the stored
// JSON out at the collection's path, or what is wrong with it: a value
// that is an object or an array, a string longer than
// MaxPartitionKeyLength, a number out of float64's range.
func (p *pkPath) partitionKeyOf(out []byte) (string, string) {
	v, ok, err := patch.Get(out, p.path)
	if err != nil {
		return "", err.Error()
	}
	if !ok {
		return "/u", ""
	}
	what := "partition key " + strconv.Quote(p.path)
	switch v[0] {
	case 'n':
		return "/z", ""
	case 't':
		return "/t", ""
	case 'f':
		return "/f", ""
	case '"':
		var s string
		if strings.IndexByte(unsafe.String(unsafe.SliceData(v), len(v)), '\\') >= 0 {
			u, err := jsonscan.Unquote(v)
			if err != nil {
				return "", what + ": " + err.Error()
			}
			s = u
		} else {
			s = string(v[1 : len(v)-1])
		}
		if len(s) > MaxPartitionKeyLength {
			return "", what + " is " + strconv.Itoa(len(s)) + " bytes, longer than " + strconv.Itoa(MaxPartitionKeyLength)
		}
		return PartitionKeyString(s).enc, ""
	case '{', '[':
		kind := "an object"
		if v[0] == '[' {
			kind = "an array"
		}
		return "", what + " is " + kind + ", not a string, number, boolean or null"
	default:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return "", what + " " + quoteRaw(v) + " is out of the range of a float64"
		}
		return PartitionKeyNumber(f).enc, ""
	}
}

// keyIn returns the key of id in the partition pk for a call named op. An
// unpartitioned collection is one partition, PartitionKeyNone: any other
// pk is ErrInvalidPartitionKey.
func (c *Collection) keyIn(op string, pk PartitionKey, id string) (string, error) {
	if c.pk == nil {
		if pk.enc != "" {
			return "", newErrorDetail(op, id, ErrInvalidPartitionKey, "partition key "+pk.String()+" given, but the collection has no PartitionKeyPath: only PartitionKeyNone() names its one partition")
		}
		return id, nil
	}
	return pk.encoding() + id, nil
}

// keyOf returns the key of id for an id-only call named op: id itself in
// an unpartitioned collection, ErrPartitionKeyRequired in a partitioned one.
func (c *Collection) keyOf(op, id string) (string, error) {
	if c.pk != nil {
		return "", newErrorDetail(op, id, ErrPartitionKeyRequired, "the collection's PartitionKeyPath is "+strconv.Quote(c.pk.path)+": use the call's In form")
	}
	return id, nil
}

// checkIn is a write's check that the document e, prepared, is in the
// partition pk the caller named: an ErrInvalidDocument naming both if not.
func (c *Collection) checkIn(op string, pk PartitionKey, e *entry) error {
	if c.pk == nil {
		if pk.enc != "" {
			return newErrorDetail(op, e.key(), ErrInvalidPartitionKey, "partition key "+pk.String()+" given, but the collection has no PartitionKeyPath: only PartitionKeyNone() names its one partition")
		}
		return nil
	}
	if got := e.pk(); got != pk.encoding() {
		return newErrorDetail(op, e.key(), ErrInvalidDocument, "the document's partition key is "+describePK(got)+", not "+pk.String()+" as the call names")
	}
	return nil
}
