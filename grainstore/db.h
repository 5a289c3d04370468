// Private RAII wrapper over sqlite3: the only place (with db.cc and the VFS
// in wal_vfs.cc) that calls sqlite3_* directly. Bind indices are 1-based (SQLite's own convention) and
// column indices 0-based, as in the C API.
#ifndef GRAINSTORE_DB_H_
#define GRAINSTORE_DB_H_

#include <array>
#include <cstdint>
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
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
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
  Status status_;
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

// Owns one sqlite3 connection and its statement cache. Not thread-safe: the
// Store serialises access with its mutex.
class Db {
 public:
  Db() = default;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db();

  // Opens (read-write, creating when allowed) the database file.
  Status Open(const std::string& path, bool create_if_missing);
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
  // How many transactions this connection has committed (PRAGMA
  // data_version counts only other connections' commits).
  std::uint64_t commits() const { return commits_; }
  // Copies what it can of the WAL into the database without waiting for or
  // blocking other connections (SQLITE_CHECKPOINT_PASSIVE). Busy is not an
  // error: another checkpoint was running.
  Status CheckpointPassive();
  // Reads the shared WAL-index header from memory: no lock, no system call.
  // Invalid until this connection has used the WAL, and while a commit is
  // rewriting the header (its two copies differ). See docs/storage-format.md.
  WalStamp ReadWalStamp();
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
  void NoteOwnCommit();

  sqlite3* db_ = nullptr;
  std::unordered_map<const char*, sqlite3_stmt*> cache_;
  WalHook wal_hook_ = nullptr;
  void* wal_hook_arg_ = nullptr;
  std::uint64_t commits_ = 0;
  WalStamp before_commit_;  // read by the commit hook, under the write lock
  OwnCommits own_;
  const volatile unsigned char* wal_index_ = nullptr;  // region 0 of the -shm mapping
};

// A write (BEGIN IMMEDIATE) or read (BEGIN DEFERRED) transaction that rolls
// back on destruction unless Commit() succeeded. No nesting.
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
  Db* db_;
  bool active_ = false;
};

}  // namespace grainstore

#endif  // GRAINSTORE_DB_H_
