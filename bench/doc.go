// Package bench compares ttlstore with other in-process caches that expire
// entries: jellydator/ttlcache v3, patrickmn/go-cache, tidwall/buntdb
// (":memory:"), maypok86/otter v2 and hashicorp/golang-lru v2's expirable
// LRU; and ttlstore's durable mode (Open) with the embedded stores that keep
// their data on disk: tidwall/buntdb (a file) and dgraph-io/badger v4.
//
// It is a separate module so that none of the peers becomes a dependency of
// ttlstore itself. The package holds the adapters (one Store interface over
// every cache, one DurableStore interface over every durable store), the
// data set and a latency histogram; the workloads are the
// Benchmark functions in the test files, and run.sh runs them all. See
// README.md for how to run and read them.
package bench
