package vfs

// Appending through a shared memory mapping: an optional capability of a
// File, for a log whose appends must reach the operating system (so that
// kill -9 keeps them) without a system call each.
//
// The file is preallocated ahead of the appends (on Linux, by zero bytes
// written with write(2) 64 KiB ahead, or further by Extender), so it has a
// tail of zero bytes after
// what was appended until the Appender is closed, which cuts it; a reader
// of such a file must take trailing zero bytes for the end of the data.
// Because the preallocation, not a page fault, is what meets a full disk,
// a full disk is an error from Append (wrapping syscall.ENOSPC, with
// nothing of the append written), never a SIGBUS.
//
// What an Append copied is in the page cache, as what write(2) hands the
// kernel is: it survives the death of the process, and File.Sync (fdatasync,
// which on Linux writes back the pages dirtied through a mapping as msync
// does) makes it durable. MemFS models the same: Kill keeps what was
// appended, Crash only what was synced (or a torn part of the rest); its
// Appenders' Extend extends only if told to (MemFS.SetExtend).

// Mapper is implemented by a File that can append through a shared memory
// mapping: the OS's files on Linux (amd64, arm64) and MemFS's files. Other
// platforms' files do not implement it; a caller then appends with Write.
type Mapper interface {
	// MapAppend returns an Appender that appends to the file from
	// offset off, which should be its size. While the Appender is open,
	// the file must grow only through it: Write and Truncate of the file
	// break it. Sync, reads and Size go on as for any File (Size counts
	// the preallocated tail).
	MapAppend(off int64) (Appender, error)
}

// Appender appends to a file through a shared memory mapping of its
// preallocated tail; see Mapper. It is not safe for concurrent use.
type Appender interface {
	// Append copies p to the file at Offset and moves Offset past it.
	// When the preallocated tail is too short, Append first extends the
	// file (with zero bytes) and maps the extension; if that fails, as on a
	// full disk (an error wrapping syscall.ENOSPC), nothing of p is
	// written and the Appender stays usable. After the file system is
	// gone (MemFS: ErrCrashed) or the Appender is closed (fs.ErrClosed),
	// Append writes nothing.
	Append(p []byte) error
	// Offset returns where the next Append writes: the file's size
	// without its preallocated tail.
	Offset() int64
	// Close cuts the file to Offset, removing the preallocated tail, and
	// unmaps it; the File stays open. The cut is durable after the next
	// Sync. Later calls of Append fail with fs.ErrClosed; a second Close
	// does nothing.
	Close() error
}

// Extender is implemented by an Appender whose preallocation another
// goroutine can run ahead of the appends (the OS's on Linux), so that the
// appending goroutine seldom extends the file itself.
type Extender interface {
	// Extend preallocates the file, as Append would, up to at least
	// byte to (nothing if it is that long already), and may prepare the
	// preallocated part of the mapping for the appends' stores. It may be called
	// concurrently with the Appender's other methods, which it may
	// delay while it extends the file. A failure (a full disk:
	// syscall.ENOSPC) leaves the preallocation where it got: an Append
	// that needs more extends the file itself and meets the error. Extend
	// does nothing after Close, before the first Append, or where the
	// file turned out not to be mappable (appends go on with write(2)).
	Extend(to int64) error
}
