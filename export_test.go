package ttlstore

import (
	"bytes"
	"io"

	"github.com/ttlstore/ttlstore/internal/vfs"
	"github.com/ttlstore/ttlstore/internal/wal"
)

// CheckInvariants exposes checkInvariants to the black-box tests.
func (c *Collection) CheckInvariants() error { return c.checkInvariants() }

// SetFarLead sets how long after its _ts a document must expire for its
// shard to index it in the far tree (expiry_far.go), and returns what
// restores it: the mode matrix runs the rules with 1, every expiring
// document in far. No collection may be in use meanwhile.
func SetFarLead(seconds int64) (restore func()) {
	old := farLead
	farLead = seconds
	return func() { farLead = old }
}

// SweeperArmed reports whether the background sweeper has a timer set.
func (c *Collection) SweeperArmed() bool { return c.armed.Load() != neverExpires }

// Clock returns the collection's clock, for benchmarks that move a mock.
func (c *Collection) Clock() Clock { return c.clock }

// OpenFS is Open on the file system fsys, compacting once the log passes
// minCompact bytes (and twice the last snapshot). With keepDefault, a
// directory that has a DefaultTTL stored keeps it, whatever opts says.
func OpenFS(fsys vfs.FS, dir string, opts Options, minCompact int64, keepDefault bool) (*Collection, error) {
	return open(fsys, dir, opts, minCompact, keepDefault)
}

// CoreStats is st with only the counts of the collection's contents (Live,
// Expired, Swept) and of its log (TornBytes, LogSyncs): what the tests that
// predate the bounded mode compare whole.
func CoreStats(st Stats) Stats {
	return Stats{Live: st.Live, Expired: st.Expired, Swept: st.Swept, TornBytes: st.TornBytes, LogSyncs: st.LogSyncs}
}

// CompactBetween is Compact with between run after the new log is started
// and before the documents are captured: what a write racing the
// background compactor may do.
func (c *Collection) CompactBetween(between func()) error {
	d := c.d
	d.compactMu.Lock()
	defer d.compactMu.Unlock()
	num, seq, err := d.nextLog()
	if err != nil {
		return err
	}
	between()
	return d.publish(c, num, seq)
}

// LogEnds returns the offsets at which the records of the log file data
// end, and those at which its commit groups end (each right after its
// recCommit), for tests that cut a log where a write's group ends: the
// size of a log appended through a mapping is not its size while the
// collection is open.
func LogEnds(data []byte) (records, groups []int64, err error) {
	r, err := wal.NewReader(bytes.NewReader(data), int64(len(data)), wal.KindLog, maxRecord)
	if err != nil {
		return nil, nil, err
	}
	for {
		typ, _, err := r.Next()
		if err == io.EOF {
			return records, groups, nil
		} else if err != nil {
			return nil, nil, err
		}
		records = append(records, r.Offset())
		if typ == recCommit {
			groups = append(groups, r.Offset())
		}
	}
}
