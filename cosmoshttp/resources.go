package cosmoshttp

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ttlstore/ttlstore"
)

// The account, databases, containers and partition key ranges.

func (s *Server) now() time.Time {
	if s.opts.Clock != nil {
		return s.opts.Clock.Now()
	}
	return time.Now()
}

// account answers GET /: the account's properties, with one region whose
// endpoint is the one the request reached, so that the SDK's endpoint
// manager keeps talking to this server (a region naming another host would
// make it retry there).
func (s *Server) account(w http.ResponseWriter, r *http.Request) error {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	loc := []map[string]string{{"name": "local", "databaseAccountEndpoint": scheme + "://" + r.Host + "/"}}
	body, _ := json.Marshal(map[string]any{
		"_self": "", "id": "localhost", "_rid": "localhost",
		"media": "//media/", "addresses": "//addresses/", "_dbs": "//dbs/",
		"writableLocations": loc, "readableLocations": loc,
		"enableMultipleWriteLocations": false,
		"userReplicationPolicy":        map[string]any{"asyncReplication": false, "minReplicaSetSize": 1, "maxReplicasetSize": 4},
		"userConsistencyPolicy":        map[string]any{"defaultConsistencyLevel": "Session"},
		"systemReplicationPolicy":      map[string]any{"minReplicaSetSize": 1, "maxReplicasetSize": 4},
		"readPolicy":                   map[string]any{"primaryReadCoefficient": 1, "secondaryReadCoefficient": 1},
	})
	writeJSON(w, http.StatusOK, body)
	return nil
}

// databases answers /dbs: POST creates (or queries, with the query
// header), GET lists.
func (s *Server) databases(w http.ResponseWriter, r *http.Request) error {
	switch {
	case r.Method == http.MethodPost && isQuery(r):
		return s.queryResources(w, r, "Databases", "", s.dbList())
	case r.Method == http.MethodPost:
		return s.createDatabase(w, r)
	case r.Method == http.MethodGet:
		return writeList(w, "Databases", "", s.dbList())
	}
	return notAllowed(r)
}

func notAllowed(r *http.Request) error {
	return errorf(http.StatusMethodNotAllowed, "%s is not allowed on %s", r.Method, r.URL.EscapedPath())
}

func (s *Server) dbList() [][]byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out [][]byte
	for _, id := range sortedKeys(s.dbs) {
		b, _ := json.Marshal(s.dbs[id].props)
		out = append(out, b)
	}
	return out
}

func (s *Server) createDatabase(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r, 64<<10)
	if err != nil {
		return err
	}
	var req struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return errorf(http.StatusBadRequest, "the database's properties are not a JSON object with an id: %v", err)
	}
	if err := checkID("database", req.ID); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errorf(http.StatusServiceUnavailable, "%v", errServerClosed)
	}
	if _, ok := s.dbs[req.ID]; ok {
		return errorf(http.StatusConflict, "database %q already exists", req.ID)
	}
	rid := ridString(newRid(nil))
	db := &database{colls: map[string]*container{}, props: dbProps{
		ID: req.ID, Rid: rid, Self: "dbs/" + rid + "/", Etag: etagOf(uint64(s.now().UnixNano())),
		Ts: s.now().Unix(), Colls: "colls/", Users: "users/",
	}}
	if s.opts.Dir != "" {
		db.dir = filepath.Join(s.opts.Dir, dirName("db-", rid))
		if err := os.MkdirAll(db.dir, 0o700); err != nil {
			return fmt.Errorf("%w: %v", ttlstore.ErrIO, err)
		}
		b, _ := json.Marshal(db.props)
		if err := writeFileSync(filepath.Join(db.dir, "database.json"), b); err != nil {
			os.RemoveAll(db.dir)
			return err
		}
	}
	s.dbs[req.ID] = db
	b, _ := json.Marshal(db.props)
	w.Header().Set("etag", db.props.Etag)
	writeJSON(w, http.StatusCreated, b)
	return nil
}

// databaseOne answers /dbs/{db}: GET reads, DELETE deletes with every
// container in it.
func (s *Server) databaseOne(w http.ResponseWriter, r *http.Request, id string) error {
	switch r.Method {
	case http.MethodGet:
		s.mu.RLock()
		db, ok := s.dbs[id]
		var b []byte
		if ok {
			b, _ = json.Marshal(db.props)
		}
		s.mu.RUnlock()
		if !ok {
			return errorf(http.StatusNotFound, "database %q not found", id)
		}
		w.Header().Set("etag", db.props.Etag)
		if r.Header.Get("If-None-Match") == db.props.Etag {
			writeJSON(w, http.StatusNotModified, nil)
			return nil
		}
		writeJSON(w, http.StatusOK, b)
		return nil
	case http.MethodDelete:
		s.mu.Lock()
		db, ok := s.dbs[id]
		if ok {
			if m := r.Header.Get("If-Match"); m != "" && m != "*" && m != db.props.Etag {
				s.mu.Unlock()
				return errorf(http.StatusPreconditionFailed, "the database's _etag is %s, not %s", db.props.Etag, m)
			}
			delete(s.dbs, id)
		}
		s.mu.Unlock()
		if !ok {
			return errorf(http.StatusNotFound, "database %q not found", id)
		}
		var cs []*container
		for _, ct := range db.colls {
			cs = append(cs, ct)
		}
		return s.discard(w, db.dir, cs...)
	}
	return notAllowed(r)
}

// discard ends what a delete took out of the catalog: it closes the
// containers' collections, moves dir (if on disk) to the trash, and answers
// 204.
func (s *Server) discard(w http.ResponseWriter, dir string, cs ...*container) error {
	for _, ct := range cs {
		ct.c.Close()
	}
	if dir != "" {
		if err := s.trash(dir); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusNoContent, nil)
	return nil
}

// containers answers /dbs/{db}/colls: POST creates (or queries), GET lists.
func (s *Server) containers(w http.ResponseWriter, r *http.Request, dbID string) error {
	s.mu.RLock()
	db, ok := s.dbs[dbID]
	s.mu.RUnlock()
	if !ok {
		return errorf(http.StatusNotFound, "database %q not found", dbID)
	}
	switch {
	case r.Method == http.MethodPost && isQuery(r):
		return s.queryResources(w, r, "DocumentCollections", db.props.Rid, s.collList(db))
	case r.Method == http.MethodPost:
		return s.createContainer(w, r, db)
	case r.Method == http.MethodGet:
		return writeList(w, "DocumentCollections", db.props.Rid, s.collList(db))
	}
	return notAllowed(r)
}

func (s *Server) collList(db *database) [][]byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out [][]byte
	for _, id := range sortedKeys(db.colls) {
		out = append(out, db.colls[id].propsJSON())
	}
	return out
}

func (ct *container) propsJSON() []byte {
	b, _ := ct.propsJSONEtag()
	return b
}

func (ct *container) propsJSONEtag() ([]byte, string) {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	b, _ := json.Marshal(ct.props)
	return b, ct.props.Etag
}

// readCollProps reads a request's container properties (parseCollProps).
func readCollProps(r *http.Request) (collProps, error) {
	body, err := readBody(r, 1<<20)
	if err != nil {
		return collProps{}, err
	}
	return parseCollProps(body)
}

// parseCollProps reads and checks a container's properties as a create or
// replace sends them.
func parseCollProps(body []byte) (collProps, error) {
	var p collProps
	var raw struct {
		DefaultTTL json.RawMessage `json:"defaultTtl"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return p, errorf(http.StatusBadRequest, "the container's properties are not a JSON object: %v", err)
	}
	if len(raw.DefaultTTL) > 0 && string(raw.DefaultTTL) != "null" {
		var f float64
		if err := json.Unmarshal(raw.DefaultTTL, &f); err != nil || f != math.Trunc(f) || f == 0 || f < -1 || f > math.MaxInt32 {
			return p, errorf(http.StatusBadRequest, "defaultTtl %s is invalid: it must be -1 (on, no default), a number of seconds from 1 to %d, or absent (off)", raw.DefaultTTL, math.MaxInt32)
		}
		n := int32(f)
		p.DefaultTTL = &n
	}
	var rest collProps
	if err := json.Unmarshal(body, &struct {
		*collProps
		DefaultTTL json.RawMessage `json:"defaultTtl"`
	}{collProps: &rest}); err != nil {
		return p, errorf(http.StatusBadRequest, "the container's properties do not decode: %v", err)
	}
	rest.DefaultTTL = p.DefaultTTL
	if err := checkID("container", rest.ID); err != nil {
		return rest, err
	}
	pk := rest.PartitionKey
	if len(pk.Paths) > 1 || strings.EqualFold(pk.Kind, "MultiHash") {
		return rest, errorf(http.StatusBadRequest, "hierarchical partition keys (%d paths, kind %q) are not supported: give one path", len(pk.Paths), pk.Kind)
	}
	if pk.Kind != "" && !strings.EqualFold(pk.Kind, "Hash") {
		return rest, errorf(http.StatusBadRequest, "partition key kind %q is not supported: only Hash", pk.Kind)
	}
	return rest, nil
}

func (s *Server) createContainer(w http.ResponseWriter, r *http.Request, db *database) error {
	p, err := readCollProps(r)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errorf(http.StatusServiceUnavailable, "%v", errServerClosed)
	}
	if s.dbs[db.props.ID] != db {
		return errorf(http.StatusNotFound, "database %q not found", db.props.ID)
	}
	if _, ok := db.colls[p.ID]; ok {
		return errorf(http.StatusConflict, "container %q already exists in database %q", p.ID, db.props.ID)
	}
	rid := newRid(ridBytes(db.props.Rid))
	p.Rid = ridString(rid)
	p.Self = "dbs/" + db.props.Rid + "/colls/" + p.Rid + "/"
	p.Ts = s.now().Unix()
	p.Etag = etagOf(uint64(s.now().UnixNano()))
	p.Docs, p.Sprocs, p.Triggers, p.Udfs, p.Conflicts = "docs/", "sprocs/", "triggers/", "udfs/", "conflicts/"
	if p.PartitionKey.Kind == "" && len(p.PartitionKey.Paths) > 0 {
		p.PartitionKey.Kind = "Hash"
	}
	ct := &container{db: db, props: p}
	ct.setFixed()
	if db.dir != "" {
		ct.dir = filepath.Join(db.dir, dirName("coll-", p.Rid))
		if err := os.MkdirAll(ct.dir, 0o700); err != nil {
			return fmt.Errorf("%w: %v", ttlstore.ErrIO, err)
		}
	}
	c, err := s.openColl(ct.dir, &ct.props)
	if err != nil {
		if ct.dir != "" {
			os.RemoveAll(ct.dir)
		}
		if strings.Contains(err.Error(), "PartitionKeyPath") {
			return errorf(http.StatusBadRequest, "partition key path %q: %v", p.PartitionKey.Paths, err)
		}
		return err
	}
	if ct.dir != "" {
		b, _ := json.Marshal(ct.props)
		if err := writeFileSync(filepath.Join(ct.dir, "container.json"), b); err != nil {
			c.Close()
			os.RemoveAll(ct.dir)
			return err
		}
	}
	ct.c = c
	db.colls[p.ID] = ct
	b, _ := json.Marshal(ct.props)
	w.Header().Set("etag", p.Etag)
	writeJSON(w, http.StatusCreated, b)
	return nil
}

// containerOne answers /dbs/{db}/colls/{c}: GET reads, PUT replaces the
// properties (a changed defaultTtl re-resolves every item, as
// ttlstore.Collection.SetDefaultTTL), DELETE deletes.
func (s *Server) containerOne(w http.ResponseWriter, r *http.Request, dbID, id string) error {
	ct, err := s.lookup(dbID, id)
	if err != nil {
		return err
	}
	switch r.Method {
	case http.MethodGet:
		b, etag := ct.propsJSONEtag()
		w.Header().Set("etag", etag)
		writeJSON(w, http.StatusOK, b)
		return nil
	case http.MethodPut:
		return s.replaceContainer(w, r, ct)
	case http.MethodDelete:
		s.mu.Lock()
		if ct.db.colls[id] == ct {
			delete(ct.db.colls, id)
		}
		s.mu.Unlock()
		return s.discard(w, ct.dir, ct)
	}
	return notAllowed(r)
}

func (s *Server) replaceContainer(w http.ResponseWriter, r *http.Request, ct *container) error {
	p, err := readCollProps(r)
	if err != nil {
		return err
	}
	ct.mu.Lock()
	defer ct.mu.Unlock()
	old := ct.props
	if p.ID != old.ID {
		return errorf(http.StatusBadRequest, "the body's id %q is not the container's, %q", p.ID, old.ID)
	}
	if m := r.Header.Get("If-Match"); m != "" && m != "*" && m != old.Etag {
		return errorf(http.StatusPreconditionFailed, "the container's _etag is %s, not %s", old.Etag, m)
	}
	if strings.Join(p.PartitionKey.Paths, ",") != strings.Join(old.PartitionKey.Paths, ",") {
		return errorf(http.StatusBadRequest, "a container's partition key cannot change (%v to %v)", old.PartitionKey.Paths, p.PartitionKey.Paths)
	}
	p.PartitionKey = old.PartitionKey
	p.Rid, p.Self, p.Docs, p.Sprocs, p.Triggers, p.Udfs, p.Conflicts = old.Rid, old.Self, old.Docs, old.Sprocs, old.Triggers, old.Udfs, old.Conflicts
	p.Ts = s.now().Unix()
	p.Etag = etagOf(uint64(s.now().UnixNano()))
	if ct.dir != "" {
		// The file first: a crash after it and before SetDefaultTTL applies
		// the new DefaultTTL when the container is opened again, as
		// ttlstore.Open does with a changed DefaultTTL.
		b, _ := json.Marshal(p)
		if err := writeFileSync(filepath.Join(ct.dir, "container.json"), b); err != nil {
			return err
		}
	}
	if !sameTTL(p.DefaultTTL, old.DefaultTTL) {
		if err := ct.c.SetDefaultTTL(p.DefaultTTL); err != nil {
			return err
		}
	}
	ct.props = p
	b, _ := json.Marshal(p)
	w.Header().Set("etag", p.Etag)
	writeJSON(w, http.StatusOK, b)
	return nil
}

func sameTTL(a, b *int32) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// pkranges answers the partition key ranges of a container: one range,
// the whole hash space, which is what the container is. A client that sends
// If-None-Match with the range feed's etag gets 304: the ranges never change.
func (s *Server) pkranges(w http.ResponseWriter, r *http.Request, dbID, id string) error {
	ct, err := s.lookup(dbID, id)
	if err != nil {
		return err
	}
	if r.Method != http.MethodGet {
		return notAllowed(r)
	}
	const etag = `"1"`
	w.Header().Set("etag", etag)
	if r.Header.Get("If-None-Match") == etag {
		writeJSON(w, http.StatusNotModified, nil)
		return nil
	}
	rid := ridString(ct.rid)
	rng, _ := json.Marshal(map[string]any{
		"_rid": rid, "id": "0", "_etag": etag, "minInclusive": "", "maxExclusive": "FF",
		"ridPrefix": 0, "_self": "dbs/" + ct.db.props.Rid + "/colls/" + rid + "/pkranges/0/",
		"throughputFraction": 1, "status": "online", "parents": []string{}, "_ts": ct.db.props.Ts, "lsn": 1,
	})
	w.Header().Set("x-ms-item-count", "1")
	writeJSON(w, http.StatusOK, []byte(`{"_rid":"`+rid+`","PartitionKeyRanges":[`+string(rng)+`],"_count":1}`))
	return nil
}

// writeList answers a list of resources as Cosmos DB's feed body.
func writeList(w http.ResponseWriter, member, rid string, items [][]byte) error {
	b := []byte(`{"_rid":"` + rid + `","` + member + `":[`)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	b = append(b, `],"_count":`...)
	b = append(b, fmt.Sprint(len(items))...)
	b = append(b, '}')
	w.Header().Set("x-ms-item-count", fmt.Sprint(len(items)))
	writeJSON(w, http.StatusOK, b)
	return nil
}
