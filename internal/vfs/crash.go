package vfs

// What a MemFS leaves behind: Crash (power loss), Kill (the process dies,
// the machine does not) and Corrupt (the medium flips a bit).
//
// A torn file, for Crash with tear: when a file's current bytes extend its
// synced bytes (appends since the last Sync, and nothing else), the crash
// keeps the synced bytes plus a prefix of that unsynced tail, of a length
// drawn uniformly from 0 to all of it; then, with probability 1/4 and if
// the prefix is not empty, a suffix of it, of a length drawn uniformly from
// 1 to all of it, becomes zero bytes, as when a file system persisted the
// new size before the data. A file whose current bytes do not extend its
// synced bytes (cut by Truncate or Create since its last Sync) keeps its
// synced bytes exactly. Only files reachable through synced entries are
// drawn for, in the order of a depth-first walk by sorted names, each inode
// once, so one seed gives one outcome.
//
// A file with a preallocated zero tail (an Appender's; see inode) is judged
// without it: the appends an Appender copied over its zero tail since the
// last Sync are an unsynced tail, and the file keeps at least its synced
// size, the rest of it zero bytes, as a file system that persisted the
// preallocation at the Sync would. But the kernel writes the pages dirtied
// through a mapping back in any order, and a file system that allocates
// blocks when it writes pages back (ext4's delayed allocation), or marks a
// preallocated block written only when its own write completes, can then
// keep a later page and not an earlier one: so for a file an Appender wrote, the crash does not keep a
// prefix of the unsynced tail but each page of it (CrashPage bytes, at
// multiples of CrashPage in the file) or not, with probability 1/2 each;
// a page not kept reads as zero bytes. Then, with probability 1/2, the file
// keeps the size its preallocation gave it; else it ends after the last
// page kept, or at its synced size.

import (
	"bytes"
	"io/fs"
	"maps"
	"math/rand/v2"
	"slices"
)

// Crash returns the MemFS a machine would find after losing power now, and
// kills m. The new MemFS has, from the root down, the synced entries of
// every directory, each pointing to its inode's synced bytes (two entries
// that shared an inode still do); its current state is that same state.
// If tear is true and rng is non-nil, files with unsynced appends keep a
// torn part of them, as written at the top of crash.go; otherwise nothing
// unsynced survives.
//
// The new MemFS holds no locks and has no hook; it keeps m's capacity, preallocation and SetExtend, and
// its Ops starts at 0. From now on every call on m, its Files and its locks
// fails with ErrCrashed, so goroutines of the dead process cannot touch the
// new one. Crash panics if m is already dead: a test that crashes twice
// has lost track of which MemFS is alive.
func (m *MemFS) Crash(rng *rand.Rand, tear bool) *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dieLocked("Crash")
	if !tear {
		rng = nil
	}
	copies := map[*inode]*inode{}
	var cp func(n *inode) *inode
	cp = func(n *inode) *inode {
		if c, ok := copies[n]; ok {
			return c
		}
		if !n.isDir {
			data := bytes.Clone(n.synced)
			appended := n.data[:int64(len(n.data))-n.zeros]
			switch {
			case rng != nil && n.mapped:
				data = append(data, lostPages(rng, n.synced, appended)...)
				if rng.IntN(2) == 0 {
					data = append(data, make([]byte, len(n.data)-len(data))...)
				}
			case rng != nil:
				data = append(data, tornTail(rng, n.synced, appended)...)
			}
			if pad := int64(len(n.synced)) + n.syncedZeros - int64(len(data)); pad > 0 {
				data = append(data, make([]byte, pad)...) // the synced size
			}
			c := &inode{data: data, synced: data[:len(data):len(data)]}
			copies[n] = c
			return c
		}
		c := newDir()
		copies[n] = c
		for _, name := range slices.Sorted(maps.Keys(n.syncedEntries)) {
			child := cp(n.syncedEntries[name])
			c.entries[name] = child
			c.syncedEntries[name] = child
		}
		return c
	}
	return &MemFS{root: cp(m.root), capacity: m.capacity, prealloc: m.prealloc, extend: m.extend, locks: map[string]bool{}}
}

// tornTail returns what a crash keeps of the bytes current appended after
// synced, as written at the top of crash.go: nil unless current extends
// synced.
func tornTail(rng *rand.Rand, synced, current []byte) []byte {
	if len(current) <= len(synced) || !bytes.Equal(current[:len(synced)], synced) {
		return nil
	}
	tail := current[len(synced):]
	kept := bytes.Clone(tail[:rng.IntN(len(tail)+1)])
	if len(kept) > 0 && rng.IntN(4) == 0 {
		clear(kept[len(kept)-1-rng.IntN(len(kept)):])
	}
	return kept
}

// CrashPage is the size of the pages that Crash keeps or loses one by one
// in a file appended through an Appender: a disk sector. The OS's pages
// (4 KiB or more) are whole numbers of them.
const CrashPage = 512

// lostPages returns what a crash keeps of the bytes current, written through
// a mapping, appended after synced, as written at the top of crash.go: each
// page of them or zero bytes, cut after the last page kept; nil unless
// current extends synced.
func lostPages(rng *rand.Rand, synced, current []byte) []byte {
	if len(current) <= len(synced) || !bytes.Equal(current[:len(synced)], synced) {
		return nil
	}
	kept := bytes.Clone(current[len(synced):])
	end := 0 // of the last page kept, in kept
	for from := len(synced); from < len(current); {
		to := min(from-from%CrashPage+CrashPage, len(current))
		if rng.IntN(2) == 0 {
			clear(kept[from-len(synced) : to-len(synced)])
		} else {
			end = to - len(synced)
		}
		from = to
	}
	return kept[:end]
}

// Kill returns the MemFS a restarted process would find after m's process
// was killed (kill -9) while the machine kept running, and kills m as Crash
// does. Everything the process handed to the file system stays, synced or
// not: the new MemFS has m's current entries and bytes as its current
// state and m's synced entries and bytes as its synced state, so a Crash
// of it afterwards still loses what was never synced.
//
// The new MemFS holds no locks (the kernel drops a dead process's locks)
// and has no hook; it keeps m's capacity, preallocation and SetExtend, and its Ops starts at 0. Kill
// panics if m is already dead.
func (m *MemFS) Kill() *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dieLocked("Kill")
	copies := map[*inode]*inode{}
	var cp func(n *inode) *inode
	cp = func(n *inode) *inode {
		if c, ok := copies[n]; ok {
			return c
		}
		if !n.isDir {
			c := &inode{data: bytes.Clone(n.data), synced: bytes.Clone(n.synced),
				zeros: n.zeros, syncedZeros: n.syncedZeros}
			copies[n] = c
			return c
		}
		c := newDir()
		copies[n] = c
		for name, child := range n.entries {
			c.entries[name] = cp(child)
		}
		for name, child := range n.syncedEntries {
			c.syncedEntries[name] = cp(child)
		}
		return c
	}
	return &MemFS{root: cp(m.root), capacity: m.capacity, prealloc: m.prealloc, extend: m.extend, locks: map[string]bool{}}
}

// dieLocked marks m dead, or panics if it already is. m.mu must be held.
func (m *MemFS) dieLocked(caller string) {
	if m.dead {
		panic("vfs: MemFS." + caller + " of a MemFS that already crashed or was killed")
	}
	m.dead = true
}

// Corrupt XORs the byte at offset off of the file name with xor, in its
// current bytes if off is within them and in its synced bytes if off is
// within those, so that the damage survives a Crash when it hits synced
// data: a flipped bit on the medium. It is not an operation: the hook does
// not see it and Ops does not count it. A missing file gives
// fs.ErrNotExist; an off within neither gives an error wrapping
// fs.ErrInvalid; a dead MemFS gives ErrCrashed.
func (m *MemFS) Corrupt(name string, off int64, xor byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	const op = "corrupt"
	if m.dead {
		return pathErr(op, name, ErrCrashed)
	}
	n, err := m.fileLocked(op, name)
	if err != nil {
		return err
	}
	if off < 0 || (off >= int64(len(n.data)) && off >= int64(len(n.synced))+n.syncedZeros) {
		return pathErr(op, name, fs.ErrInvalid)
	}
	// Copy both: they may share an array (see inode), which must not
	// change in place. A flip in a zero tail ends the tail after it.
	if n.syncedZeros > 0 {
		n.synced = append(bytes.Clone(n.synced), make([]byte, n.syncedZeros)...)
		n.syncedZeros = 0
	}
	if off < int64(len(n.data)) {
		n.data = bytes.Clone(n.data)
		n.data[off] ^= xor
		n.zeros = min(n.zeros, int64(len(n.data))-off-1)
	}
	if off < int64(len(n.synced)) {
		n.synced = bytes.Clone(n.synced)
		n.synced[off] ^= xor
	}
	return nil
}
