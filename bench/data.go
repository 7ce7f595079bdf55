package bench

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
)

// Dataset is a set of documents generated before any timing: ids[i] is the
// id inside docs[i] and alt[i], two different ~200-byte JSON objects for the
// same id (alt is the new value of the overwrite workload).
type Dataset struct {
	IDs  []string
	Docs [][]byte
	Alt  [][]byte
}

// Len is the number of documents.
func (d *Dataset) Len() int { return len(d.IDs) }

// Prefix returns the first n documents, sharing memory with d.
func (d *Dataset) Prefix(n int) *Dataset {
	return &Dataset{IDs: d.IDs[:n], Docs: d.Docs[:n], Alt: d.Alt[:n]}
}

// PayloadLen is the mean length of Docs, in bytes.
func (d *Dataset) PayloadLen() float64 {
	total := 0
	for _, p := range d.Docs {
		total += len(p)
	}
	return float64(total) / float64(len(d.Docs))
}

var (
	dataMu sync.Mutex
	data   *Dataset
)

// Data returns the first n documents of the process-wide data set, growing it
// when needed. The data set is deterministic: the same n gives the same
// documents in every run.
func Data(n int) *Dataset {
	dataMu.Lock()
	defer dataMu.Unlock()
	if data == nil || data.Len() < n {
		data = generate(n)
	}
	return data.Prefix(n)
}

var (
	firstNames = []string{"Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken"}
	lastNames  = []string{"Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson"}
	cities     = []string{"Springfield", "Riverside", "Franklin", "Greenville", "Fairview", "Madison"}
	tagWords   = []string{"alpha", "beta", "gamma", "delta", "omega", "sigma"}
)

// generate builds n documents like
//
//	{"id":"user-0000123","name":"Ada Lovelace","email":"user-0000123@example.com",
//	 "tags":["alpha","beta"],"score":48213,"active":true,
//	 "address":{"street":"123 Main Street","city":"Springfield","zip":"40213"}}
//
// Both variants of all documents live in one block of memory with no
// pointers, so the data set costs the garbage collector nothing to scan.
func generate(n int) *Dataset {
	r := rand.New(rand.NewPCG(1, 2))
	d := &Dataset{IDs: make([]string, n), Docs: make([][]byte, n), Alt: make([][]byte, n)}
	block := make([]byte, 0, n*2*240)
	add := func(id string) []byte {
		start := len(block)
		block = fmt.Appendf(block,
			`{"id":%q,"name":"%s %s","email":"%s@example.com","tags":["%s","%s"],"score":%d,"active":%t,"address":{"street":"%d Main Street","city":"%s","zip":"%05d"}}`,
			id, firstNames[r.IntN(len(firstNames))], lastNames[r.IntN(len(lastNames))], id,
			tagWords[r.IntN(len(tagWords))], tagWords[r.IntN(len(tagWords))], 10000+r.IntN(90000), r.IntN(2) == 0,
			1+r.IntN(999), cities[r.IntN(len(cities))], r.IntN(100000))
		return block[start:len(block):len(block)]
	}
	for i := range n {
		id := fmt.Sprintf("user-%07d", i)
		d.IDs[i] = id
		d.Docs[i] = add(id)
		d.Alt[i] = add(id)
	}
	return d
}

// ReadOrder returns 1<<20 ids drawn at random from ids, so that reads hit
// the store in no particular order while the benchmark itself walks memory
// sequentially.
//
// Each id is a copy, as a key taken from a request would be. With the data
// set's own strings, a store that keeps the caller's key string (every peer)
// would find it by pointer equality without reading its bytes, while
// ttlstore, whose key is a substring of its own copy of the JSON, must
// compare bytes: the workload would measure that accident, not the stores.
func ReadOrder(ids []string) []string {
	r := rand.New(rand.NewPCG(3, 4))
	order := make([]string, 1<<20)
	for i := range order {
		order[i] = strings.Clone(ids[r.IntN(len(ids))])
	}
	return order
}

// AscendingOrder returns 1<<20 ids that walk ids in ascending order, from
// the smallest to the largest and round again, as a scan by id or a job
// over ids it made in sequence would read them. Each id is a copy, as in
// ReadOrder. The data set's ids are "user-%07d" of their index, so this is
// also the order they were generated and stored in. Unless len(ids)
// divides 1<<20, the last pass stops short (for 100k ids, after 48,576), so
// that a workload that wraps around the order goes back to the smallest id
// early once in 1<<20 reads.
func AscendingOrder(ids []string) []string {
	sorted := slices.Sorted(slices.Values(ids))
	order := make([]string, 1<<20)
	for i := range order {
		order[i] = strings.Clone(sorted[i%len(sorted)])
	}
	return order
}
