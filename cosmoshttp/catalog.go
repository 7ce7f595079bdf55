package cosmoshttp

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/vfs"
)

// The catalog: the Server's databases and their containers, each container
// a ttlstore.Collection.
//
// With Options.Dir, the catalog is kept on disk:
//
//	Dir/db-<rid>/database.json                   the database's properties, its id among them
//	Dir/db-<rid>/coll-<rid>/container.json       the container's
//	Dir/db-<rid>/coll-<rid>/data/                its durable collection (ttlstore.Open)
//	Dir/trash/                                   what a delete moved aside, removed at once and at start
//
// where <rid> is the resource's _rid (base64, '-' for '/'): a name of a
// fixed, short length made of safe characters whatever the id, so that no
// id, however long or strange ("..", 255 '%'), can name a path outside Dir
// or one the file system refuses. A properties file is replaced by writing
// a temporary file, syncing it, renaming it over the old one and syncing
// the directory.

// database is one database: its properties and containers.
type database struct {
	props dbProps
	dir   string                // "" in memory
	colls map[string]*container // guarded by Server.mu
}

type dbProps struct {
	ID   string `json:"id"`
	Rid  string `json:"_rid"`
	Self string `json:"_self"`
	Etag string `json:"_etag"`
	Ts   int64  `json:"_ts"`
	// Colls and Users are the links Cosmos DB returns.
	Colls string `json:"_colls"`
	Users string `json:"_users"`
}

// container is one container: its properties and its collection.
type container struct {
	db  *database
	dir string // "" in memory
	c   *ttlstore.Collection
	rid []byte // the container's 8-byte resource id, for the documents' _rid

	// Set when the container is made, and never changed after (a PUT
	// cannot change them), so read without mu:
	ridStr  string // its _rid
	selfPre string // its items' _self up to their _rid: "dbs/<rid>/colls/<rid>/docs/"
	pkPath  string // its partition key path, or ""

	mu    sync.Mutex // mu protects props and serializes changes to them
	props collProps
}

// collProps are a container's properties as the REST API reads and writes
// them. Members the Server does not act on (indexingPolicy and the like) are
// kept as sent and returned, so that a client reads back what it wrote.
type collProps struct {
	ID           string          `json:"id"`
	PartitionKey pkDefinition    `json:"partitionKey"`
	DefaultTTL   *int32          `json:"defaultTtl,omitempty"`
	Indexing     json.RawMessage `json:"indexingPolicy,omitempty"`
	Unique       json.RawMessage `json:"uniqueKeyPolicy,omitempty"`
	Conflict     json.RawMessage `json:"conflictResolutionPolicy,omitempty"`
	AnalyticalTT json.RawMessage `json:"analyticalStorageTtl,omitempty"`
	Rid          string          `json:"_rid"`
	Self         string          `json:"_self"`
	Etag         string          `json:"_etag"`
	Ts           int64           `json:"_ts"`
	Docs         string          `json:"_docs"`
	Sprocs       string          `json:"_sprocs"`
	Triggers     string          `json:"_triggers"`
	Udfs         string          `json:"_udfs"`
	Conflicts    string          `json:"_conflicts"`
}

type pkDefinition struct {
	Paths   []string `json:"paths"`
	Kind    string   `json:"kind,omitempty"`
	Version int      `json:"version,omitempty"`
}

// setFixed sets the container's fields that never change from its
// properties.
func (ct *container) setFixed() {
	ct.rid = ridBytes(ct.props.Rid)
	ct.ridStr = ct.props.Rid
	ct.selfPre = "dbs/" + ct.db.props.Rid + "/colls/" + ct.props.Rid + "/docs/"
	if len(ct.props.PartitionKey.Paths) > 0 {
		ct.pkPath = ct.props.PartitionKey.Paths[0]
	}
}

// checkID refuses a database or container id that Cosmos DB refuses, or
// that Cosmos DB refuses: empty, longer than 255 characters,
// with '/', '\\', '?' or '#', a control character, or a trailing space.
func checkID(kind, id string) error {
	switch {
	case id == "":
		return errorf(http.StatusBadRequest, "the %s id is empty", kind)
	case utf8.RuneCountInString(id) > 255:
		return errorf(http.StatusBadRequest, "the %s id is %d characters long; the limit is 255", kind, utf8.RuneCountInString(id))
	case strings.ContainsAny(id, "/\\?#"):
		return errorf(http.StatusBadRequest, "the %s id %q contains '/', '\\', '?' or '#'", kind, id)
	case strings.HasSuffix(id, " "):
		return errorf(http.StatusBadRequest, "the %s id %q ends with a space", kind, id)
	}
	for _, r := range id {
		if r < 0x20 || r == 0x7f {
			return errorf(http.StatusBadRequest, "the %s id %q contains a control character", kind, id)
		}
	}
	return nil
}

// newRid returns a fresh resource id: prefix followed by four random bytes.
func newRid(prefix []byte) []byte {
	b := append(append([]byte(nil), prefix...), 0, 0, 0, 0)
	if _, err := rand.Read(b[len(prefix):]); err != nil {
		panic(err) // crypto/rand does not fail on the platforms Go supports
	}
	return b
}

// ridString encodes a resource id as Cosmos DB does: base64 with '-' for '/'.
func ridString(b []byte) string {
	return strings.ReplaceAll(base64.StdEncoding.EncodeToString(b), "/", "-")
}

func ridBytes(s string) []byte {
	b, _ := base64.StdEncoding.DecodeString(strings.ReplaceAll(s, "-", "/"))
	return b
}

// docRid returns a document's _rid: its container's and eight bytes of a
// hash of its partition key and id, stable for the document's life.
func (ct *container) docRid(pk ttlstore.PartitionKey, id string) string {
	var b [16]byte
	copy(b[:8], ct.rid)
	h := uint64(14695981039346656037)
	for _, s := range [2]string{pk.String(), id} {
		for i := 0; i < len(s); i++ {
			h ^= uint64(s[i])
			h *= 1099511628211
		}
		h ^= 0xff
		h *= 1099511628211
	}
	binary.LittleEndian.PutUint64(b[8:], h)
	return ridString(b[:])
}

// etagOf makes a resource's _etag from a counter, quoted as Cosmos DB's are.
func etagOf(n uint64) string { return `"` + strconv.FormatUint(n, 16) + `"` }

// writeFileSync replaces path with data: a temporary file, synced, renamed
// over it, and the directory synced.
func writeFileSync(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = syncFile(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%w: %v", ttlstore.ErrIO, err)
	}
	return nil
}

// syncFile syncs f; tests replace it to fail as a full disk or a failed
// fsync does.
var syncFile = (*os.File).Sync

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// trash moves dir aside into Dir/trash and removes it: the rename is the
// delete, so a crash during the removal leaves nothing that loads.
func (s *Server) trash(dir string) error {
	t := filepath.Join(s.opts.Dir, "trash")
	if err := os.MkdirAll(t, 0o700); err != nil {
		return fmt.Errorf("%w: %v", ttlstore.ErrIO, err)
	}
	dst := filepath.Join(t, ridString(newRid(nil))+"-"+filepath.Base(dir))
	if err := os.Rename(dir, dst); err != nil {
		return fmt.Errorf("%w: %v", ttlstore.ErrIO, err)
	}
	if err := syncDir(filepath.Dir(dir)); err != nil {
		return fmt.Errorf("%w: %v", ttlstore.ErrIO, err)
	}
	os.RemoveAll(dst)
	return nil
}

// collOptions returns the ttlstore options of a container with props.
func (s *Server) collOptions(p *collProps) ttlstore.Options {
	path := ""
	if len(p.PartitionKey.Paths) > 0 {
		path = p.PartitionKey.Paths[0]
	}
	retain := s.opts.FeedRetainBytes
	if retain == 0 {
		retain = ttlstore.DefaultFeedRetainBytes
	}
	return ttlstore.Options{
		DefaultTTL:       p.DefaultTTL,
		Clock:            s.opts.Clock,
		SweepInterval:    s.opts.SweepInterval,
		MaxDocumentSize:  s.maxDoc,
		PartitionKeyPath: path,
		Sync:             s.opts.Sync,
		ChangeFeed:       ttlstore.ChangeFeedOptions{RetainBytes: retain},
	}
}

// openColl makes a container's collection: in memory, or durable in
// dir/data.
func (s *Server) openColl(dir string, p *collProps) (*ttlstore.Collection, error) {
	if dir == "" {
		return ttlstore.New(s.collOptions(p))
	}
	return ttlstore.Open(filepath.Join(dir, "data"), s.collOptions(p))
}

// load reads the catalog from Options.Dir and opens every container.
func (s *Server) load() error {
	if err := os.MkdirAll(s.opts.Dir, 0o700); err != nil {
		return fmt.Errorf("%w: %v", ttlstore.ErrIO, err)
	}
	// Each container's collection locks its own directory, but the
	// catalog (databases, containers, trash) is the Server's: a second
	// Server over Dir would clear the first's unfinished creates and give
	// out the same _rids.
	lock, err := vfs.OS.Lock(filepath.Join(s.opts.Dir, "LOCK"))
	if errors.Is(err, vfs.ErrLocked) {
		return fmt.Errorf("%w: %s is served by another Server", ttlstore.ErrLocked, s.opts.Dir)
	} else if err != nil {
		return fmt.Errorf("%w: lock %s: %v", ttlstore.ErrIO, s.opts.Dir, err)
	}
	s.lock = lock
	os.RemoveAll(filepath.Join(s.opts.Dir, "trash"))
	dbDirs, _ := filepath.Glob(filepath.Join(s.opts.Dir, "db-*"))
	for _, dd := range dbDirs {
		var p dbProps
		if !s.created(dd, "database.json") {
			continue
		}
		if err := readJSON(filepath.Join(dd, "database.json"), &p); err != nil {
			return err
		}
		db := &database{props: p, dir: dd, colls: map[string]*container{}}
		s.dbs[p.ID] = db
		collDirs, _ := filepath.Glob(filepath.Join(dd, "coll-*"))
		for _, cd := range collDirs {
			if !s.created(cd, "container.json") {
				continue
			}
			ct := &container{db: db, dir: cd}
			if err := readJSON(filepath.Join(cd, "container.json"), &ct.props); err != nil {
				return err
			}
			ct.setFixed()
			c, err := s.openColl(cd, &ct.props)
			if err != nil {
				return fmt.Errorf("container %s/%s: %w", p.ID, ct.props.ID, err)
			}
			ct.c = c
			db.colls[ct.props.ID] = ct
		}
	}
	return nil
}

// created reports whether dir's properties file exists: a database or
// container is created when its file is renamed into place, its last step.
// A directory without one is from a create that failed or was cut short
// by a crash, never acknowledged: it is moved to the trash.
func (s *Server) created(dir, file string) bool {
	if _, err := os.Stat(filepath.Join(dir, file)); err == nil || !errors.Is(err, os.ErrNotExist) {
		return true // present, or unreadable: readJSON says which
	}
	s.trash(dir)
	return false
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%w: %v", ttlstore.ErrIO, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %s: %v", ttlstore.ErrCorrupt, path, err)
	}
	return nil
}

// dirName is the directory of a resource, by its _rid.
func dirName(prefix, rid string) string { return prefix + rid }

// sortedKeys returns m's keys in order, so that lists are stable.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var errServerClosed = errors.New("the server is closed")
