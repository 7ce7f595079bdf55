package ttlstore

import (
	"hash/maphash"
	"sync/atomic"
)

// Reads: Read takes no lock in the common case (see look).

// shardLookup is what a Read of a shard loads without its lock: the
// shard's purges and its table's view (see tableLookup), both written
// under the shard's lock.
type shardLookup struct {
	docs   tableLookup
	purges atomic.Pointer[[]*purge]
}

// Read returns the live document with the given id, or an error matching
// ErrNotFound when there is none: an expired document is not found from the
// second it expires, whether or not it was swept (R9). After Close it returns
// ErrClosed. On a partitioned collection it returns ErrPartitionKeyRequired:
// use ReadIn.
func (c *Collection) Read(id string) (Document, error) {
	// One call, so that the compiler inlines Read where it is called,
	// and a hit makes one frame less.
	return c.read(id, true, true)
}

// ReadIn returns the live document with the given id in the partition pk,
// as Read does. On a collection without a PartitionKeyPath, pk must be
// PartitionKeyNone (ErrInvalidPartitionKey otherwise).
func (c *Collection) ReadIn(pk PartitionKey, id string) (Document, error) {
	key, err := c.keyIn("read", pk, id)
	if err != nil {
		return Document{}, err
	}
	return c.read(key, true, false)
}

// read is Read of the document with the given key (id is the key); it
// counts the read in Stats and for the eviction policy if count is true,
// as it is but for ReadOrLoad's second look. bare says that id is Read's,
// an id without its partition key: in a partitioned collection, read then
// returns Read's error.
func (c *Collection) read(id string, count, bare bool) (Document, error) {
	// shardFor's hash, keyHash, without its frame where the collection
	// has no partition key: an id cannot begin with pkMark ('/' is not
	// allowed in one), so keyHash of every stored key is maphash.String,
	// and a lookup of an id that begins with it finds nothing either way.
	var h uint64
	if c.pk == nil {
		h = maphash.String(c.seed, id)
	} else {
		if bare {
			_, err := c.keyOf("read", id)
			return Document{}, err
		}
		h = keyHash(c.seed, id)
	}
	if c.closed.Load() {
		return Document{}, newError("read", id, ErrClosed)
	}
	e, exp, live := c.look(h, id)
	if !live {
		return Document{}, c.missed("read", id, e, count)
	}
	if count {
		c.counts.hit()
		if c.lim.cold != nil {
			e.touch()
		}
	}
	return Document{e: e, exp: exp}, nil
}

// readLive is read without its error, for ReadOrLoad, whose misses need
// none: the live document with the given id and true, or false when there
// is none; the look counts in Stats if count is true. It does not check
// whether the collection is closed: the caller does.
func (c *Collection) readLive(id string, count bool) (Document, bool) {
	e, exp, live := c.look(keyHash(c.seed, id), id)
	if !live {
		if count {
			c.counts.miss()
		}
		return Document{}, false
	}
	if count {
		c.counts.hit()
		if c.lim.cold != nil {
			e.touch()
		}
	}
	return Document{e: e, exp: exp}, true
}

// missed ends a read of id that found no live document: e is the expired
// entry it found, or nil. It returns the error Read returns, naming op, and
// counts the miss in Stats if count is true. Typed.read, which looks under
// the shard's lock, ends its misses with it too.
func (c *Collection) missed(op, id string, e *entry, count bool) error {
	if count {
		c.counts.miss()
	}
	if e == nil {
		return newError(op, id, ErrNotFound)
	}
	return (*expiredError)(e)
}

// look returns the entry with the given id, whose hash is h, from its shard
// (shardFor's): nil if there is none; its expiry under the DefaultTTL; and whether it is
// live. It takes no lock and writes nothing, in the common case, and what it
// returns was true at one instant during the call:
//
//   - The table's find returns an entry that was the id's at the instant it
//     loaded it, or nil if the id had none at some instant (see table).
//   - redefining is the same, and even, before and after: no SetDefaultTTL
//     changed the DefaultTTL or purged documents in between, so the entry
//     and the DefaultTTL belong together (R12). If one did, or does,
//     look takes the shard's lock, which waits for it to finish.
//   - The clock is read after the entry was loaded. A document live at that
//     reading was live at the load, when it was the id's. One expired at the
//     reading had perhaps not yet expired at the load; so look finds the
//     id's entry again, and if it is still the same one, it was the id's
//     and expired at that second look. (Otherwise, the lock decides.)
//
// The lock's part is lookLocked, a function of its own: its defer in look
// cost every hit the frame's setup for it.
func (c *Collection) look(h uint64, id string) (e *entry, exp int64, live bool) {
	epoch := c.redefining.Load()
	if epoch&1 == 0 {
		// s's purges and view, from lookups rather than s: its lines
		// are not loaded at all in the common case.
		l := &c.lookups[h&(numShards-1)]
		// Loaded before the entry: a purge dropped after the find (its
		// entries removed) cannot let a hidden entry through.
		purges := l.purges.Load()
		e, ok := l.docs.find(h, id)
		if purges != nil && e != nil && hiddenBy(*purges, e) {
			e = nil // deleted by DeletePartition
		}
		switch {
		case !ok:
		case e == nil:
			if c.redefining.Load() == epoch {
				return nil, 0, false
			}
		default:
			exp = e.expiry(c.def.Load())
			if exp == neverExpires || !isExpired(exp, c.now()) {
				if c.redefining.Load() == epoch {
					return e, exp, true
				}
			} else if again, ok := l.docs.find(h, id); ok && again == e && c.redefining.Load() == epoch {
				return e, exp, false
			}
		}
	}
	return c.lookLocked(h, id)
}

// lookLocked is look with the shard's lock held.
func (c *Collection) lookLocked(h uint64, id string) (*entry, int64, bool) {
	s := &c.shards[h&(numShards-1)]
	s.mu.RLock()
	defer s.mu.RUnlock()
	e := s.docs.get(h, id)
	if e == nil || s.hidden(e) {
		return nil, 0, false
	}
	exp := e.expiry(c.def.Load())
	return e, exp, exp == neverExpires || !isExpired(exp, c.now())
}
