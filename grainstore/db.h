// Private RAII wrapper over sqlite3: with db.cc, the only code that calls
// sqlite3_* directly, but for the VFS (wal_vfs.cc) and the process-wide
// sqlite3_config calls of sqlite_memory.cc and sqlite_pcache.cc. Bind indices are 1-based (SQLite's own convention) and
// column indices 0-based, as in the C API.
#ifndef GRAINSTORE_DB_H_
#define GRAINSTORE_DB_H_

#include <sys/stat.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "grainstore/result.h"
#include "grainstore/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace grainstore {

enum class StepResult { kRow, kDone, kError };

// A prepared statement borrowed from Db's cache. Resets itself and clears its
// bindings when it goes out of scope. Never share one across threads; never
// hold two Statements of the same SQL at once.
class Statement {
 public:
  // `live` counts the connection's Statements in scope (see Db).
  Statement(sqlite3* db, sqlite3_stmt* stmt, int* live) : db_(db), stmt_(stmt), live_(live) {
    ++*live_;
  }
  Statement(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement& operator=(Statement&&) = delete;
  ~Statement();

  void BindInt64(int index, std::int64_t value);
  void BindText(int index, std::string_view value);
  void BindBlob(int index, std::string_view value);
  void BindNull(int index);

  // kRow, kDone, or kError with status() describing it.
  StepResult Step();
  // Steps once expecting kDone.
  Status Run();
  const Status& status() const { return status_; }

  std::int64_t ColumnInt64(int index) const;
  bool ColumnIsNull(int index) const;
  std::string_view ColumnTextView(int index) const;
  std::string ColumnText(int index) const { return std::string(ColumnTextView(index)); }
  std::string_view ColumnBlobView(int index) const;
  std::string ColumnBlob(int index) const { return std::string(ColumnBlobView(index)); }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
  int* live_;  // nullptr once moved from
  Status status_;
  bool gave_row_ = false;  // Step has returned kRow
};

// The WAL-index header that every connection of every process shares, as one
// reading saw it (Db::ReadWalStamp). Every commit and every restart of the WAL
// rewrites the header and moves its change counter, so two valid stamps with
// equal words mean that no transaction committed in between.
struct WalStamp {
  std::array<std::uint32_t, 12> words{};  // one copy of the 48-byte header
  bool valid = false;
};
inline bool SameWalState(const WalStamp& a, const WalStamp& b) {
  return a.valid && b.valid && a.words == b.words;
}

// How many fork() calls stand between this process and the one that first
// asked: a copy of state taken before a fork (a held read's locks, a
// thread) is not valid in the child. A counter kept by a pthread_atfork
// handler, so asking costs no system call (getpid() would).
unsigned ProcessForkCount();

// Held by fork() (fork_guard.cc), after every Store's mutex: the registry of
// open connections, which a forked child's first call on a Db closes
// (Db::ReleaseInherited), perhaps on a thread that holds no Store's mutex
// (Store::read_only, CommitFingerprint). Unlocked after the fork in both
// processes.
void LockConnectionRegistryForFork();
void UnlockConnectionRegistryAfterFork();

// Owns one sqlite3 connection and its statement cache. Not thread-safe: the
// Store serialises access with its mutex.
//
// Held reads. Beginning a read transaction takes a lock on the shared-memory
// index and ending it drops the lock, one system call apiece. Once a hook is
// installed (SetHoldHook), a read Transaction's Commit leaves the transaction
// open, "held", and the next read reuses it while the WAL-index header is
// still the one seen when it began, which means nothing has committed since,
// so it reads what a new transaction would, and while it is younger than the
// hook's max_age. Everything else ends a held read first: a stale or old one
// at the next read, a write Transaction, SQL text (Exec, QueryInt), a
// checkpoint, and any statement run outside a transaction that writes or that
// finds the header moved. A held read keeps other connections' checkpoints
// from copying frames committed after it and from restarting the WAL: the age
// limit bounds that for a connection that reads without pause, and the hook's
// owner must end a read that sits idle (EndHeldRead); see ReadReleaser.
class Db {
 public:
  Db() = default;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db();

  // Opens (read-write, creating when allowed) the database file.
  Status Open(const std::string& path, bool create_if_missing);
  // What Open checks of `path` before it opens anything (Store::CheckPath).
  static Status CheckPath(const std::string& path);
  // Reads the first bytes of the file at `path`, up to out.size(): how many,
  // or nullopt when it cannot be opened or read. Through SQLite's default
  // VFS, not open(2): closing a descriptor drops every POSIX lock the process
  // holds on the file, its SQLite connections' too (a connection to a WAL
  // store keeps a shared lock while open, which keeps the last other one to
  // close from deleting the -wal and -shm under it); SQLite's close waits
  // until they are released.
  static std::optional<std::size_t> ReadFileStart(const std::string& path,
                                                  std::span<unsigned char> out);
  // Whether a descriptor of this process is open on the file `path` names
  // (a connection's, or one SQLite keeps until its locks are released): a
  // descriptor of the file opened and closed now would drop their locks.
  static bool OpenInProcess(const std::string& path);
  // Opens the database file read-only as an immutable snapshot: no locks, no
  // WAL, no shared-memory index. Only for a file no connection has open and
  // whose WAL holds nothing; a write transaction fails with ReadOnly, saying
  // `why` the store was opened so. Before each read (outside a transaction)
  // the file is checked again: once it has changed, or a -shm or a WAL with
  // frames lies beside it (a writer came), it is opened again through the
  // Reopen hook (see KeepSnapshotCurrent), and without one reads fail with
  // Busy; a read that a writer's checkpoint overlapped is Busy, not
  // Corruption.
  // `why_errno` is the system's reason (EACCES, ENOSPC, ...): a write on a
  // full filesystem fails with NoSpace instead of ReadOnly, as it does once
  // the disk fills under a store opened for writing.
  Status OpenSnapshot(const std::string& path, std::string why, int why_errno = 0);
  // Opens the database file read-only through the -wal and -shm its writers
  // keep, never creating either (SQLite's readonly_shm): for a user who may
  // not write the store's file. Without a -wal SQLite reads the file in
  // rollback mode instead (see InWalMode). A write transaction fails with
  // ReadOnly, saying `why`, with the errno `why_errno`, as a snapshot's does.
  Status OpenReadOnlyShared(const std::string& path, std::string why, int why_errno);
  // Whether the connection reads through the WAL (PRAGMA journal_mode).
  Result<bool> InWalMode();
  // Closes the connection; Open* may follow. Only before it is used.
  void Close();
  // A connection opened before a fork() is closed in the child before the
  // child's first statement on any Db, or its first open of one: fcntl locks
  // are not inherited while SQLite's per-process records of them are, and
  // with such a record left the child would take no lock, for that
  // connection or for any new one to the file, and a parent that closed
  // first would delete the WAL the child writes. The next statement opens
  // the file again by its absolute path, never creating it: through the
  // hook given to SetReopen, else with the flags of its first open. A
  // snapshot holds no locks and is kept. Done on first use, not in the fork
  // handler, so that a child that only execs another program pays nothing.
  // Every Db's owner must keep it idle across fork() (a Store does:
  // fork_guard.h).
  // How a connection is opened again after a fork(), given the absolute
  // path: the open (which, for a store opened read-only, depends on whether
  // a writer has it open then) and the connection's setup.
  // The same hook opens a snapshot again (see KeepSnapshotCurrent).
  using Reopen = std::function<Status(Db*, const std::string&)>;
  void SetReopen(Reopen reopen) { reopen_ = std::move(reopen); }
  // How many connections this Db has opened: a new one may read a file that
  // answers cached elsewhere no longer describe.
  std::uint64_t opens() const { return opens_; }
  // True after OpenSnapshot.
  bool snapshot() const { return !snapshot_path_.empty(); }
  // Whether the store's path no longer leads to the file this connection has
  // open (SQLite's look, SQLITE_FCNTL_HAS_MOVED); false when not open.
  bool FileMoved();
  // Why the file is read as a snapshot ("" when it is not).
  std::string snapshot_why() const { return snapshot() ? refusal_why_ : std::string(); }
  // The system's reason for the snapshot (EACCES, ENOSPC, ...; 0 when none).
  int snapshot_errno() const { return snapshot() ? refusal_errno_ : 0; }
  // True when the connection cannot write (a snapshot, or opened read-only
  // because this user may not write the store).
  bool read_only() const;
  // Prepares (once per connection, cached by the address of `sql`) a
  // statement. `sql` must be a string with static storage duration.
  Result<Statement> Prepare(const char* sql);
  // Runs SQL text that returns no rows (DDL, PRAGMA, BEGIN/COMMIT).
  Status Exec(const char* sql);
  // Runs a PRAGMA (or any single-row query) returning one integer.
  Result<std::int64_t> QueryInt(const char* sql);
  std::int64_t LastInsertRowid() const;
  int Changes() const;

  // Calls `fn(arg, frames)` after every commit of this connection with the
  // number of frames in the WAL. Replaces SQLite's own autocheckpoint; fn may
  // call CheckpointPassive on this Db.
  using WalHook = void (*)(void* arg, int frames);
  void SetWalHook(WalHook fn, void* arg);

  // Called when a read is about to be held; returning false commits it
  // instead. Without a hook no read is held. A held read that began more
  // than `max_age` ago is not reused.
  using HoldHook = bool (*)(void* arg);
  void SetHoldHook(HoldHook fn, void* arg, std::chrono::steady_clock::duration max_age);
  bool holding_read() const { return held_; }
  // When the held read was last used.
  std::chrono::steady_clock::time_point held_last_use() const { return held_used_; }
  // Commits the held read, if any.
  Status EndHeldRead();
  // How a write transaction waits for another connection's write lock. By
  // default SQLite's busy timeout sleeps inside BEGIN, and the caller's own
  // lock (the Store's mutex) stays held all the while, so every other call
  // on the Store queues behind it and each waiting write times out only
  // after the one before it. With a hook, BEGIN IMMEDIATE does not wait:
  // while the lock is taken, `wait(delay)` is called, which is to release
  // the caller's lock for `delay` and take it again, until `timeout_ms`
  // have passed. A Transaction that begins a write must then be begun with
  // that lock held.
  using LockWait = std::function<void(std::chrono::microseconds)>;
  void SetLockWait(LockWait wait, int timeout_ms);
  // How many transactions this connection has committed (PRAGMA
  // data_version counts only other connections' commits).
  std::uint64_t commits() const { return commits_; }
  // Copies what it can of the WAL into the database without waiting for or
  // blocking other connections (SQLITE_CHECKPOINT_PASSIVE). Busy is not an
  // error: another checkpoint was running. `held_back`, when given, is set
  // when the checkpoint ran and stopped short of the WAL's end: a reader
  // holds an older snapshot.
  Status CheckpointPassive(bool* held_back = nullptr);
  // IOError once the -wal or -shm this connection has open has lost its name
  // (deleted or replaced by another process; looked at now, not at
  // intervals): before a checkpoint, which would copy another process's
  // frames or this one's over them, and at the close.
  Status CheckSidecars();
  // Reads the shared WAL-index header from memory: no lock, no system call.
  // Invalid until this connection has used the WAL, and while a commit is
  // rewriting the header (its two copies differ). See docs/storage-format.md.
  WalStamp ReadWalStamp();
  // A header no newer than the snapshot a statement reads now: inside a read
  // Transaction, the one read just before that read began (which may be a
  // held read begun well before the Transaction, while other connections
  // commit); otherwise the header as it is now. What a reader that asks
  // PRAGMA data_version in that snapshot has seen up to.
  WalStamp SnapshotStamp();
  // The same reading once ReadWalStamp has found the header (invalid
  // before): safe from any thread, alongside whatever thread uses the
  // connection, since it touches nothing but the shared mapping.
  WalStamp PeekWalStamp() const;
  // The WAL-index header just before the first and just after the last of
  // this connection's latest run of commits, with no other commit anywhere
  // in between (each commit moved the header's change counter by exactly
  // one). Both invalid when that cannot be told.
  struct OwnCommits {
    WalStamp from;
    WalStamp to;
  };
  const OwnCommits& own_commits() const { return own_; }
  // Starts the next run where this one ends (its caller has taken it in).
  void RestartOwnCommits() { own_.from = own_.to; }

  // Converts a SQLite result code into a Status (with sqlite3_errmsg).
  Status ErrorStatus(int rc, std::string_view context) const;

 private:
  friend class Transaction;

  void NoteOwnCommit();
  // True when the held read may serve another read at `now` (see above).
  bool HeldReadIsCurrent(std::chrono::steady_clock::time_point now);
  // Before a statement: outside a transaction, keeps a held read only for a
  // read-only statement (`stmt`, nullptr for SQL text) while it is current.
  void SettleHeldRead(sqlite3_stmt* stmt);
  // The cached statement for `sql`, prepared on first use.
  Result<sqlite3_stmt*> Cached(const char* sql);
  // Runs a transaction-control statement (BEGIN..., COMMIT, ROLLBACK).
  Status RunControl(const char* sql);
  // Closes every connection this process's parent opened, once per
  // process, before a Db runs a statement or opens a connection.
  static void ReleaseInherited();
  // Gives SQLite areev's allocator and page cache, before anything of this
  // process starts SQLite (a connection's open, or ReadFileStart's VFS):
  // SQLite takes neither once started.
  static void ConfigureSqlite();
  // Closes the connection if it was opened before a fork() (see above).
  // With the registry's lock held.
  void ReleaseIfInheritedLocked(unsigned forks);
  // Opens the file again after a release; Ok while the connection is open.
  // IOError once closed by Close.
  Status Reconnect();
  // Before a statement outside the statement cache (Exec, QueryInt, a
  // checkpoint): releases inherited connections, ends a held read, and opens
  // the connection again if a release closed it.
  Status ReadyForUncachedStatement();
  // Closes the connection; with `unregister`, also leaves the registry of
  // open connections (false: the caller holds its lock and does that).
  void CloseConnection(bool unregister);
  // Opens `name` (a path or a URI) with `flags` and installs the hooks.
  Status OpenAs(const std::string& name, int flags);
  // Opens the file at `path` read-only, as a URI with one `parameter`.
  Status OpenReadOnlyUri(const std::string& path, const char* parameter);
  // For a snapshot outside a transaction: Busy once the file is no longer
  // the one it opened (see OpenSnapshot).
  Status CheckSnapshot() const;
  // For a snapshot outside a transaction: once the file is no longer the
  // one it opened, or before a write (the room or the rights it lacked may
  // be back), opens the file again through the Reopen hook, as the store
  // was first opened (a snapshot again, through a writer's -shm, or for
  // writing). Only where no Statement is in scope; elsewhere a changed file
  // is Busy, as CheckSnapshot says. A failed open is tried again by the next
  // statement.
  Status KeepSnapshotCurrent(bool to_write);
  // Before a write: IOError once the name of the file this connection has
  // open, in the directory it was opened in, names another file or none
  // (deleted, moved away, another file moved over it): its writes would then
  // be lost with it, or land where no other process looks (its -wal and
  // -shm go by the path). A move of a directory above it moves the -wal and
  // -shm too, and is no fault (nor is it told from a removal of that whole
  // directory). Looks (a stat; more once it finds a change) at most every
  // kFileCheckInterval; once gone the answer stays for this connection.
  // The same once the -wal or -shm this connection has open is deleted or
  // replaced while the file keeps its name (a cleaner of stray files): other
  // processes then make new ones, and neither side would see the other's
  // writes.
  // Reads (`write` false) are refused only for a lost -wal or -shm (they
  // would read another process's frames through this one's index, or the
  // reverse); a store file that went still serves reads of what it holds.
  Status CheckFileStillNamed(bool write);
  // Whether the -wal or -shm named by `suffix`, last seen as *dev/*ino, is
  // open in this process with no name left; else notes what the name now
  // leads to.
  bool SidecarLost(const char* suffix, dev_t* dev, ino_t* ino);
  // Notes the -wal and -shm this connection has open once SQLite has made
  // them (at its first transaction, when the store had none at the open), so
  // that SidecarLost knows them from another process's later ones. A stat
  // each while one is not known yet; nothing after.
  void NoteNewSidecars() {
    if (!sidecars_noted_) NoteNewSidecarsSlow();
  }
  void NoteNewSidecarsSlow();
  // After a sidecar was lost: whether the close must leave the file as it
  // is, without SQLite's checkpoint and removal of the -wal. So when the
  // -wal this connection wrote is still named (the next open reads it), or
  // when it is gone and another process has written the store since (the
  // file changed, or a new -wal holds frames). Else the checkpoint is what
  // keeps this connection's commits.
  bool KeepFileAtClose() const;
  // Remembers the file the new connection opened, for CheckFileStillNamed.
  void NoteOpenedFile();

  sqlite3* db_ = nullptr;
  int open_flags_ = 0;        // as OpenAs opened it
  unsigned opened_forks_ = 0; // ProcessForkCount() when it was opened
  bool registered_ = false;   // in the registry of open connections
  std::string uri_query_;     // the URI parameter of a read-only open, "" otherwise
  std::string reopen_path_;   // the absolute path a release closed ("" if none)
  bool released_read_only_ = false;  // whether the connection a release closed was read-only
  Reopen reopen_;
  bool reopening_ = false;    // inside KeepSnapshotCurrent's open
  std::uint64_t opens_ = 0;   // connections opened
  // Why this connection may not write and the system's reason (EACCES,
  // ENOSPC, ...): set by OpenSnapshot and OpenReadOnlyShared, cleared by
  // every open.
  std::string refusal_why_;
  int refusal_errno_ = 0;
  std::string snapshot_path_;  // set by OpenSnapshot
  struct stat snapshot_stat_ {};  // the file as OpenSnapshot found it
  std::chrono::steady_clock::time_point file_checked_{};  // CheckFileStillNamed's last look
  std::string file_gone_;  // why writes are refused, once the file went
  // The open file's path ("" when not known) and its directory as found at
  // the open.
  std::string file_path_;
  dev_t file_dir_dev_ = 0;
  ino_t file_dir_ino_ = 0;
  dev_t file_dev_ = 0;  // the file's own, to find SQLite's descriptor of it
  ino_t file_ino_ = 0;
  dev_t wal_dev_ = 0;  // its -wal's when last looked at (0: none seen)
  ino_t wal_ino_ = 0;
  dev_t shm_dev_ = 0;  // its -shm's when last looked at (0: none seen)
  ino_t shm_ino_ = 0;
  // Set when the -wal or -shm this process has open lost its name; the store
  // file as it was then, for the close (KeepFileAtClose).
  bool sidecar_lost_ = false;
  bool sidecars_noted_ = false;  // both known, or none to look for (NoteNewSidecars)
  struct stat file_at_loss_ {};
  int live_statements_ = 0;  // Statements in scope
  bool in_txn_ = false;      // a Transaction is active
  bool in_read_txn_ = false;  // ... and it is a read
  bool held_ = false;        // a read transaction is held
  // The read transaction open on this connection, in a Transaction or held.
  struct OpenRead {
    WalStamp stamp;  // the WAL-index header just before it began
    std::chrono::steady_clock::time_point began;
    unsigned forks = 0;  // ProcessForkCount() in the process that began it
  } open_read_;
  std::chrono::steady_clock::time_point held_used_;  // when the held read was last used
  HoldHook hold_hook_ = nullptr;
  void* hold_hook_arg_ = nullptr;
  std::chrono::steady_clock::duration hold_max_age_{};
  std::unordered_map<const char*, sqlite3_stmt*> cache_;
  LockWait lock_wait_;
  int lock_timeout_ms_ = 0;
  WalHook wal_hook_ = nullptr;
  void* wal_hook_arg_ = nullptr;
  std::uint64_t commits_ = 0;
  WalStamp before_commit_;  // read by the commit hook, under the write lock
  OwnCommits own_;
  // Region 0 of the -shm mapping, found once under the owner's lock and then
  // read from any thread (PeekWalStamp); SQLite keeps it mapped until close.
  std::atomic<const volatile unsigned char*> wal_index_{nullptr};
};

// A write (BEGIN IMMEDIATE) or read (BEGIN DEFERRED) transaction that rolls
// back on destruction unless Commit() succeeded. No nesting. A read may reuse
// a held read, and its Commit may hold it (see Db).
class Transaction {
 public:
  enum class Kind { kRead, kWrite };
  explicit Transaction(Db* db) : db_(db) {}
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  Status Begin(Kind kind = Kind::kWrite);
  Status Commit();

 private:
  // One try; a write's BEGIN IMMEDIATE sleeps in SQLite's busy handler
  // unless `no_wait`.
  Status BeginOnce(Kind kind, bool no_wait);

  Db* db_;
  bool active_ = false;
  bool read_ = false;
};

}  // namespace grainstore

#endif  // GRAINSTORE_DB_H_
