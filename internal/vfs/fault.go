package vfs

// Fault injection in MemFS: a hook that may fail any operation, a capacity
// that makes writes fail with ENOSPC, and a count of operations so that a
// test can fail the k-th one for every k.

import (
	"math"
	"strconv"
	"sync/atomic"
)

// Op names an operation of FS or File, for a MemFS hook.
type Op uint8

// The operations a MemFS hook sees. Releasing a lock is not one of them.
const (
	OpCreate     Op = iota // FS.Create
	OpOpen                 // FS.Open
	OpOpenAppend           // FS.OpenAppend
	OpRead                 // File.Read and File.ReadAt
	OpWrite                // File.Write
	OpSync                 // File.Sync
	OpTruncate             // File.Truncate
	OpSize                 // File.Size
	OpClose                // File.Close
	OpRename               // FS.Rename (the hook sees the old name)
	OpRemove               // FS.Remove
	OpMkdirAll             // FS.MkdirAll
	OpList                 // FS.List
	OpSyncDir              // FS.SyncDir
	OpLock                 // FS.Lock
	OpWriteBack            // File.WriteBack
	OpAllocate             // Appender.Append extending the file (its preallocation)
)

var opNames = [...]string{
	OpCreate:     "create",
	OpOpen:       "open",
	OpOpenAppend: "openappend",
	OpRead:       "read",
	OpWrite:      "write",
	OpSync:       "sync",
	OpTruncate:   "truncate",
	OpSize:       "size",
	OpClose:      "close",
	OpRename:     "rename",
	OpRemove:     "remove",
	OpMkdirAll:   "mkdirall",
	OpList:       "list",
	OpSyncDir:    "syncdir",
	OpLock:       "lock",
	OpWriteBack:  "writeback",
	OpAllocate:   "allocate",
}

// String returns the operation's name in lower case, such as "write", or
// "Op(200)" for a value that is not one of the constants.
func (op Op) String() string {
	if int(op) < len(opNames) {
		return opNames[op]
	}
	return "Op(" + strconv.Itoa(int(op)) + ")"
}

// SetHook makes m call h before every operation, with the operation and
// the name it is on (the name a File was opened by, for File methods); nil
// removes the hook. If h returns an error, the operation fails with it
// (wrapped in an *fs.PathError or *os.LinkError that names the path) and
// has no effect, except a Write, which appends the first len(p)/2 bytes
// (a short write) and returns their count with the error. A failed Sync
// leaves the synced bytes as they were; a failed Close leaves the file
// open.
//
// h is called with m's mutex held, so calls come one at a time, in the
// order the operations happen, but h must not call m or anything opened
// through it (that deadlocks). Calls on a dead MemFS or a closed File fail
// before reaching h. Crash and Kill do not pass the hook to the new MemFS.
func (m *MemFS) SetHook(h func(op Op, name string) error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hook = h
}

// SetCapacity limits the total current bytes of the files in m (those
// reachable by a name; an open file that was removed does not count) to
// bytes; 0 or less means no limit. A Write that would go past it appends
// what fits and returns an error wrapping syscall.ENOSPC; so does a
// Truncate that would extend past it, which changes nothing, and an
// Appender's Append that cannot extend the file (memmap.go), which writes
// nothing. Lowering the
// capacity below what is used removes nothing. Crash and Kill pass the
// capacity to the new MemFS: a full disk stays full after a reboot.
func (m *MemFS) SetCapacity(bytes int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.capacity = max(bytes, 0)
}

// Ops returns how many operations on m (and on the files opened through
// it) have reached the point where the hook is called, whether or not
// there is a hook and whether or not it failed them. Running a workload
// once and reading Ops gives the range of k for FailNth. A MemFS made by
// Crash or Kill starts at 0.
func (m *MemFS) Ops() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ops
}

// faultLocked counts the operation op on name and returns the hook's error,
// wrapped, or nil. m.mu must be held.
func (m *MemFS) faultLocked(op Op, name string) error {
	m.ops++
	if m.hook == nil {
		return nil
	}
	if err := m.hook(op, name); err != nil {
		return pathErr(op.String(), name, err)
	}
	return nil
}

// roomLocked returns how many more bytes the capacity allows, which may be
// negative if it was lowered below what is used. m.mu must be held.
func (m *MemFS) roomLocked() int64 {
	if m.capacity == 0 {
		return math.MaxInt64
	}
	return m.capacity - m.usedLocked()
}

// usedLocked returns the total current bytes of the files reachable from
// the root, walking the tree: MemFS holds few files. m.mu must be held.
func (m *MemFS) usedLocked() int64 {
	var used int64
	var walk func(n *inode)
	walk = func(n *inode) {
		if !n.isDir {
			used += int64(len(n.data))
			return
		}
		for _, c := range n.entries {
			walk(c)
		}
	}
	walk(m.root)
	return used
}

// FailNth returns a hook for MemFS.SetHook that fails the n-th call it
// gets (counting from 1) with err, or with ErrInjected if err is nil, and
// lets every other call through. With n < 1 it fails nothing. Installed on
// a new MemFS, the n-th call is the operation that makes Ops return n.
// The hook is safe to share, though the count is then shared too.
func FailNth(n int64, err error) func(Op, string) error {
	if err == nil {
		err = ErrInjected
	}
	var calls atomic.Int64
	return func(Op, string) error {
		if calls.Add(1) == n {
			return err
		}
		return nil
	}
}
