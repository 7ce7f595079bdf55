package bench

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/tidwall/buntdb"
	"github.com/ttlstore/ttlstore"
)

// Sync is how often a durable store's writes are forced to the disk. It is
// named after ttlstore's policies; each peer is configured with its nearest
// equivalent (see DurableKinds).
type Sync int

const (
	// SyncAlways returns from a write only after an fsync that covers it:
	// ttlstore SyncAlways, buntdb Always, badger SyncWrites=true.
	SyncAlways Sync = iota
	// SyncEverySecond fsyncs about once a second in the background:
	// ttlstore SyncEverySecond, buntdb EverySecond. badger has no such
	// policy; it is compared here with SyncWrites=false, its only other
	// one.
	SyncEverySecond
	// SyncNever leaves flushing to the operating system: ttlstore
	// SyncNever, buntdb Never, badger SyncWrites=false.
	SyncNever
)

// String is the sync level as it appears in benchmark names (sync=…).
func (s Sync) String() string {
	switch s {
	case SyncAlways:
		return "always"
	case SyncEverySecond:
		return "everysecond"
	case SyncNever:
		return "never"
	}
	return fmt.Sprintf("Sync(%d)", int(s))
}

// DurableConfig says how to open a durable store.
type DurableConfig struct {
	Sync Sync
	// NoAutoCompact turns off buntdb's automatic shrink, so that only an
	// explicit Compact rewrites its file. ttlstore's and badger's
	// background compactions cannot be turned off; it changes nothing for
	// them.
	NoAutoCompact bool
}

// DurableStore is a store kept in a directory: what the durable workloads
// need of ttlstore (Open), buntdb (a file) and badger. Set stores a JSON
// document under its id with a TTL of an hour and returns once the store's
// sync policy is satisfied. Like Store, it is safe for concurrent use.
type DurableStore interface {
	Set(id string, payload []byte) error
	Get(id string) (found bool)
	// Compact rewrites the store's files to hold only the live data:
	// ttlstore Compact, buntdb Shrink. It returns errors.ErrUnsupported
	// for badger, which has no equivalent.
	Compact() error
	// Close syncs and releases the directory.
	Close() error
}

// lener is a DurableStore that can count its documents cheaply.
type lener interface {
	Len() int
}

// syncCounter is a DurableStore that says how many fsyncs of its log it
// made since it was opened (ttlstore's Stats.LogSyncs).
type syncCounter interface {
	Syncs() uint64
}

// bulkLoader is a DurableStore with a faster way to load many documents
// than one Set each.
type bulkLoader interface {
	load(ids []string, docs [][]byte) error
}

// DurableKind is one durable store under test.
type DurableKind struct {
	Name string
	// Open opens the store kept in dir, creating it if needed.
	Open func(dir string, cfg DurableConfig) (DurableStore, error)
	// Syncs lists the sync levels the write workloads measure it at.
	Syncs []Sync
	// Compacts says whether Compact works.
	Compacts bool
}

// DurableKinds lists the durable stores under test, ttlstore first.
var DurableKinds = []DurableKind{
	{Name: "ttlstore", Open: openDurableTTLStore, Compacts: true,
		Syncs: []Sync{SyncAlways, SyncEverySecond, SyncNever}},
	{Name: "buntdb", Open: openDurableBunt, Compacts: true,
		Syncs: []Sync{SyncAlways, SyncEverySecond}},
	{Name: "badger", Open: openBadger, Compacts: false,
		Syncs: []Sync{SyncAlways, SyncEverySecond}},
}

// DurableKindNamed returns the DurableKind with the given name; it panics if
// there is none.
func DurableKindNamed(name string) DurableKind {
	for _, k := range DurableKinds {
		if k.Name == name {
			return k
		}
	}
	panic("bench: no durable store named " + name)
}

// Load stores docs[i] under ids[i] in the store of kind k kept in dir, as
// fast as the store allows, and closes it: ttlstore with SyncNever and four
// writers, buntdb in transactions of 1000 with SyncPolicy Never and no
// automatic shrink, badger in a WriteBatch with SyncWrites=false.
func (k DurableKind) Load(dir string, ids []string, docs [][]byte) error {
	s, err := k.Open(dir, DurableConfig{Sync: SyncNever, NoAutoCompact: true})
	if err != nil {
		return err
	}
	if bl, ok := s.(bulkLoader); ok {
		err = bl.load(ids, docs)
	} else {
		err = setParallel(s, ids, docs, 4)
	}
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	return err
}

// setParallel stores docs[i] under ids[i] on w goroutines.
func setParallel(s DurableStore, ids []string, docs [][]byte, w int) error {
	var wg sync.WaitGroup
	errs := make([]error, w)
	for g := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < len(ids); i += w {
				if err := s.Set(ids[i], docs[i]); err != nil {
					errs[g] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// DirSize returns the bytes of the files under dir (their apparent sizes),
// and of those whose name ends in suffix.
func DirSize(dir, suffix string) (total, matching int64, err error) {
	err = filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		total += info.Size()
		if strings.HasSuffix(path, suffix) {
			matching += info.Size()
		}
		return nil
	})
	return total, matching, err
}

// ttlstore

// DurableTTLStore adapts a durable *ttlstore.Collection (Open). Set is
// Upsert of the JSON bytes, Get is Read.
type DurableTTLStore struct {
	C *ttlstore.Collection
}

func openDurableTTLStore(dir string, cfg DurableConfig) (DurableStore, error) {
	opts := ttlstore.Options{DefaultTTL: ttlstore.TTL(int32(TTL / time.Second))}
	switch cfg.Sync {
	case SyncAlways:
		opts.Sync = ttlstore.SyncAlways
	case SyncEverySecond:
		opts.Sync = ttlstore.SyncEverySecond
	case SyncNever:
		opts.Sync = ttlstore.SyncNever
	}
	c, err := ttlstore.Open(dir, opts)
	if err != nil {
		return nil, err
	}
	return &DurableTTLStore{C: c}, nil
}

func (s *DurableTTLStore) Set(_ string, payload []byte) error {
	_, err := s.C.Upsert(payload)
	return err
}

func (s *DurableTTLStore) Get(id string) bool {
	_, err := s.C.Read(id)
	return err == nil
}

func (s *DurableTTLStore) Compact() error { return s.C.Compact() }
func (s *DurableTTLStore) Close() error   { return s.C.Close() }
func (s *DurableTTLStore) Len() int       { return s.C.Len() }
func (s *DurableTTLStore) Syncs() uint64  { return s.C.Stats().LogSyncs }

// buntdb

type durableBunt struct {
	db *buntdb.DB
}

// openDurableBunt opens dir/data.db with buntdb's defaults (automatic
// shrink when the file has doubled and passed 32 MB) but the sync policy.
func openDurableBunt(dir string, cfg DurableConfig) (DurableStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	db, err := buntdb.Open(filepath.Join(dir, "data.db"))
	if err != nil {
		return nil, err
	}
	var c buntdb.Config
	if err := db.ReadConfig(&c); err != nil {
		db.Close()
		return nil, err
	}
	switch cfg.Sync {
	case SyncAlways:
		c.SyncPolicy = buntdb.Always
	case SyncEverySecond:
		c.SyncPolicy = buntdb.EverySecond
	case SyncNever:
		c.SyncPolicy = buntdb.Never
	}
	c.AutoShrinkDisabled = cfg.NoAutoCompact
	if err := db.SetConfig(c); err != nil {
		db.Close()
		return nil, err
	}
	return &durableBunt{db: db}, nil
}

var hourTTL = &buntdb.SetOptions{Expires: true, TTL: TTL}

func (s *durableBunt) Set(id string, payload []byte) error {
	return s.db.Update(func(tx *buntdb.Tx) error {
		_, _, err := tx.Set(id, string(payload), hourTTL)
		return err
	})
}

func (s *durableBunt) Get(id string) bool {
	found := false
	s.db.View(func(tx *buntdb.Tx) error {
		_, err := tx.Get(id)
		found = err == nil
		return nil
	})
	return found
}

func (s *durableBunt) load(ids []string, docs [][]byte) error {
	const batch = 1000
	for lo := 0; lo < len(ids); lo += batch {
		err := s.db.Update(func(tx *buntdb.Tx) error {
			for i := lo; i < min(lo+batch, len(ids)); i++ {
				if _, _, err := tx.Set(ids[i], string(docs[i]), hourTTL); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *durableBunt) Compact() error { return s.db.Shrink() }
func (s *durableBunt) Close() error   { return s.db.Close() }

func (s *durableBunt) Len() int {
	n := 0
	s.db.View(func(tx *buntdb.Tx) error {
		n, _ = tx.Len()
		return nil
	})
	return n
}

// badger

type badgerStore struct {
	db *badger.DB
}

// openBadger opens a badger in dir sized for 2 cores: 16 MB memtables (2),
// a 16 MB block cache, 2 compactors, 64 MB value log files, no logging,
// no metrics. Values of ~200 bytes stay in the LSM tree (the default value
// threshold is 1 MB); every write goes to the memtable's write-ahead log,
// which SyncWrites=true fsyncs before the commit returns: once per commit,
// even when its writer goroutine batches concurrent commits (v4.9.6
// writeRequests calls writeToLSM, and so SyncWAL, for each of them).
func openBadger(dir string, cfg DurableConfig) (DurableStore, error) {
	opts := badger.DefaultOptions(dir).
		WithLogger(nil).
		WithMetricsEnabled(false).
		WithSyncWrites(cfg.Sync == SyncAlways).
		WithMemTableSize(16 << 20).
		WithNumMemtables(2).
		WithBlockCacheSize(16 << 20).
		WithNumCompactors(2).
		WithNumGoroutines(2).
		WithValueLogFileSize(64 << 20)
	db, err := badger.Open(opts)
	if err != nil {
		return nil, err
	}
	return &badgerStore{db: db}, nil
}

func (s *badgerStore) Set(id string, payload []byte) error {
	return s.db.Update(func(txn *badger.Txn) error {
		return txn.SetEntry(badger.NewEntry([]byte(id), payload).WithTTL(TTL))
	})
}

func (s *badgerStore) Get(id string) bool {
	err := s.db.View(func(txn *badger.Txn) error {
		_, err := txn.Get([]byte(id))
		return err
	})
	return err == nil
}

func (s *badgerStore) load(ids []string, docs [][]byte) error {
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	for i, id := range ids {
		if err := wb.SetEntry(badger.NewEntry([]byte(id), docs[i]).WithTTL(TTL)); err != nil {
			return err
		}
	}
	return wb.Flush()
}

func (s *badgerStore) Compact() error { return errors.ErrUnsupported }
func (s *badgerStore) Close() error   { return s.db.Close() }
