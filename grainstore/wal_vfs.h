// A SQLite VFS that wraps the platform's default one and coalesces the
// write-ahead-log writes of a transaction into as few pwrite calls as
// possible (see docs/storage-format.md, "Write path").
//
// SQLite writes each WAL frame as two calls (a 24-byte header, then the page),
// so a commit touching ten pages costs twenty system calls. This VFS buffers
// writes that extend the WAL contiguously and hands them to the real file:
//   - synchronously, in the xWrite that completes a commit frame (a frame
//     header with a non-zero "database size after commit"), so the commit's
//     own error code reaches SQLite before it publishes the new WAL end in the
//     shared-memory index;
//   - before any other operation on the WAL file (read, sync, truncate, size,
//     close, a non-contiguous write, a buffer past its cap);
//   - before any shared-memory lock change or barrier made by the thread that
//     buffered them, so frames spilled by an uncommitted transaction reach the
//     file before its write lock is released (a write transaction runs on one
//     thread, and only its holder of the write lock can release it).
// Nothing on disk changes shape: the file format, the locking protocol and
// the shared-memory index are the default VFS's, so other processes (and the
// sqlite3 shell) can use the same store with any VFS.
#ifndef GRAINSTORE_WAL_VFS_H_
#define GRAINSTORE_WAL_VFS_H_

namespace grainstore {

// Registers the VFS once per process (not as the default) and returns its
// name for sqlite3_open_v2; nullptr when registration failed, in which case
// callers fall back to the default VFS.
const char* CoalescingVfsName();

}  // namespace grainstore

#endif  // GRAINSTORE_WAL_VFS_H_
