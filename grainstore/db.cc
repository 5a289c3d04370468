#include "db.h"

#include <sqlite3.h>

#include <pthread.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sqlite_memory.h"
#include "sqlite_pcache.h"
#include "wal_vfs.h"

namespace grainstore {
namespace {

// Whether `db` reads its file as an immutable snapshot (Db::OpenSnapshot).
bool IsSnapshot(sqlite3* db) {
  const char* name = db != nullptr ? sqlite3_db_filename(db, "main") : nullptr;
  return name != nullptr && sqlite3_uri_boolean(name, "immutable", 0) != 0;
}

// A snapshot read whose file a writer's checkpoint changed under it reads
// pages of two states: the store is sound, the read is not.
Status SnapshotTorn() {
  return Status::Busy(
      "the store changed while it was read as a snapshot (another process writes it); "
      "try again");
}

// The errno of the system call behind SQLite's (extended) result `rc`, or 0.
// SQLite records one for IOERR and CANTOPEN only (sqlite3_system_errno), and
// never clears it: with FULL or READONLY it would be an earlier failure's,
// so those keep the errno their code stands for. It takes it from `errno`
// after the failure, by when its clean-up may have left 0 there, or another
// call's: a read or write names its own in the file's last error
// (SQLITE_FCNTL_LAST_ERRNO, the WAL's first, then the database file's). A
// short read had no failing call at all.
int SystemErrno(sqlite3* db, int rc) {
  const int code = rc & 0xff;
  if (db == nullptr) return 0;
  if (code == SQLITE_CANTOPEN) return sqlite3_system_errno(db);
  if (code != SQLITE_IOERR) return 0;
  switch (rc) {
    case SQLITE_IOERR_SHORT_READ:
    case SQLITE_IOERR_NOMEM:
      return 0;
    case SQLITE_IOERR_SHMOPEN:  // the -shm is no file with a last error of its own
    case SQLITE_IOERR_SHMSIZE:
    case SQLITE_IOERR_SHMMAP:
    case SQLITE_IOERR_SHMLOCK:
      return sqlite3_system_errno(db);
    default:
      break;
  }
  int err = 0;
  sqlite3_file* wal = nullptr;
  if (sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal) == SQLITE_OK &&
      wal != nullptr && wal->pMethods != nullptr) {
    (void)wal->pMethods->xFileControl(wal, SQLITE_FCNTL_LAST_ERRNO, &err);
  }
  if (err == 0) (void)sqlite3_file_control(db, "main", SQLITE_FCNTL_LAST_ERRNO, &err);
  return err != 0 ? err : sqlite3_system_errno(db);
}

// `status` with SystemErrno's errno, when there is one.
Status WithSystemErrno(sqlite3* db, int rc, Status status) {
  const int err = SystemErrno(db, rc);
  return err == 0 ? status : std::move(status).WithErrno(err);
}

// " (File too large)": the words of a system call's failure `err` (0 for
// none), which SQLite's message for an I/O error ("disk I/O error") leaves out.
std::string SystemReason(int err) {
  return err != 0 ? fmt::format(" ({})", std::strerror(err)) : std::string();
}

// Transaction control, run through the statement cache (keyed by address).
constexpr char kBeginWrite[] = "BEGIN IMMEDIATE";
constexpr char kBeginRead[] = "BEGIN";
constexpr char kCommit[] = "COMMIT";
constexpr char kRollback[] = "ROLLBACK";

std::atomic<unsigned> g_forks{0};

void CountFork() { g_forks.fetch_add(1, std::memory_order_relaxed); }

}  // namespace

unsigned ProcessForkCount() {
  static const bool registered = pthread_atfork(nullptr, nullptr, &CountFork) == 0;
  (void)registered;
  return g_forks.load(std::memory_order_relaxed);
}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_),
      stmt_(other.stmt_),
      live_(other.live_),
      status_(std::move(other.status_)),
      gave_row_(other.gave_row_) {
  other.stmt_ = nullptr;
  other.live_ = nullptr;
}

Statement::~Statement() {
  if (stmt_ != nullptr) {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  if (live_ != nullptr) --*live_;
}

void Statement::BindInt64(int index, std::int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
}

void Statement::BindText(int index, std::string_view value) {
  sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_STATIC, SQLITE_UTF8);
}

void Statement::BindBlob(int index, std::string_view value) {
  // A zero-length blob must still bind as a blob, not NULL.
  static const char kEmpty = 0;
  sqlite3_bind_blob64(stmt_, index, value.empty() ? &kEmpty : value.data(), value.size(),
                      SQLITE_STATIC);
}

void Statement::BindNull(int index) { sqlite3_bind_null(stmt_, index); }

namespace {

// A connection that may not write the -shm (Db::OpenReadOnlyShared) is told
// SQLITE_READONLY_RECOVERY or _CANTINIT when it finds the WAL-index header
// changing under it (a writer's commit or recovery): transient, like
// SQLITE_BUSY, which SQLite's busy handler waits out but these skip.
bool IsTransientReadOnly(int ext) {
  return ext == SQLITE_READONLY_RECOVERY || ext == SQLITE_READONLY_CANTINIT;
}

}  // namespace

StepResult Statement::Step() {
  int rc = sqlite3_step(stmt_);
  if (!gave_row_ && rc != SQLITE_ROW && rc != SQLITE_DONE &&
      IsTransientReadOnly(sqlite3_extended_errcode(db_))) {
    // Before its first row the statement has read nothing: run it again,
    // for up to a second.
    using std::chrono::microseconds;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    for (int attempt = 0; std::chrono::steady_clock::now() < deadline; ++attempt) {
      std::this_thread::sleep_for(microseconds(attempt < 20 ? 100 : 1000));
      sqlite3_reset(stmt_);
      rc = sqlite3_step(stmt_);
      if (rc == SQLITE_ROW || rc == SQLITE_DONE ||
          !IsTransientReadOnly(sqlite3_extended_errcode(db_))) {
        break;
      }
    }
  }
  if (rc == SQLITE_ROW) {
    gave_row_ = true;
    return StepResult::kRow;
  }
  if (rc == SQLITE_DONE) return StepResult::kDone;
  int ext = sqlite3_extended_errcode(db_);
  std::string msg = sqlite3_errmsg(db_);
  const int err = SystemErrno(db_, ext);
  switch (ext & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      status_ = Status::Busy(msg);  // "database is locked" or "... table is locked"
      break;
    case SQLITE_READONLY:
      status_ = Status::ReadOnly(fmt::format("the store cannot be written: {}", msg));
      break;
    case SQLITE_CONSTRAINT:
      status_ = ext == SQLITE_CONSTRAINT_UNIQUE || ext == SQLITE_CONSTRAINT_PRIMARYKEY
                    ? Status::AlreadyExists(msg)
                    : Status::Conflict(msg);
      break;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      status_ = IsSnapshot(db_) ? SnapshotTorn() : Status::Corruption(msg);
      break;
    case SQLITE_FULL:
      status_ = Status::NoSpace(msg);
      break;
    case SQLITE_TOOBIG:
      status_ = Status::TooLarge(msg);
      break;
    case SQLITE_NOMEM:
      status_ = Status::IOError(fmt::format("sqlite error {}: {}", ext, msg)).WithErrno(ENOMEM);
      break;
    case SQLITE_IOERR:
      status_ = Status::IOError(fmt::format("sqlite error {}: {}{}", ext, msg, SystemReason(err)));
      break;
    default:
      status_ = Status::IOError(fmt::format("sqlite error {}: {}", ext, msg));
  }
  if (err != 0) status_ = std::move(status_).WithErrno(err);
  return StepResult::kError;
}

Status Statement::Run() {
  switch (Step()) {
    case StepResult::kDone: return Status::Ok();
    case StepResult::kRow: return Status::Corruption("statement returned an unexpected row");
    case StepResult::kError: break;
  }
  return status_;
}

std::int64_t Statement::ColumnInt64(int index) const { return sqlite3_column_int64(stmt_, index); }

bool Statement::ColumnIsNull(int index) const {
  return sqlite3_column_type(stmt_, index) == SQLITE_NULL;
}

std::string_view Statement::ColumnTextView(int index) const {
  const unsigned char* p = sqlite3_column_text(stmt_, index);
  int n = sqlite3_column_bytes(stmt_, index);
  if (p == nullptr) return {};
  return {reinterpret_cast<const char*>(p), static_cast<size_t>(n)};
}

std::string_view Statement::ColumnBlobView(int index) const {
  const void* p = sqlite3_column_blob(stmt_, index);
  int n = sqlite3_column_bytes(stmt_, index);
  if (p == nullptr) return {};
  return {static_cast<const char*>(p), static_cast<size_t>(n)};
}

namespace {

// `path` as the path of a file: URI, for SQLite's URI parser: every byte but
// unreserved characters and '/' as %HH, so '?', '#' and '%' stay the path's.
std::string FileUri(std::string_view path) {
  // An absolute path gets an empty authority ("file:///..."), so one that
  // starts with "//" is not read as a host name.
  std::string uri = path.starts_with('/') ? "file://" : "file:";
  for (unsigned char c : path) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                       (c >= '0' && c <= '9') || c == '/' || c == '-' || c == '_' || c == '.' ||
                       c == '~';
    if (plain) {
      uri.push_back(static_cast<char>(c));
    } else {
      uri += fmt::format("%{:02X}", c);
    }
  }
  return uri;
}

}  // namespace

Db::~Db() { Close(); }

namespace {

// Every open connection but snapshots, so that a forked child can close
// those its parent opened (ReleaseInherited). Opened and closed only where
// no fork() can split the lock: a Store opens and closes under ForkHoldOff,
// and its checkpoint thread opens its connection inside a pass that fork()
// waits out (fork_guard.h). Leaked: a Db may close during exit.
std::mutex& RegistryMu() {
  static auto* mu = new std::mutex;
  return *mu;
}
std::vector<Db*>& Registry() {
  static auto* dbs = new std::vector<Db*>;
  return *dbs;
}
// ProcessForkCount() when this process last closed its inherited connections.
std::atomic<unsigned> g_released_at{0};

}  // namespace

void LockConnectionRegistryForFork() { RegistryMu().lock(); }
void UnlockConnectionRegistryAfterFork() { RegistryMu().unlock(); }

// Closes the connections a parent opened, once per process, before the
// calling Db runs a statement or opens one.
void Db::ReleaseInherited() {
  const unsigned forks = ProcessForkCount();
  if (g_released_at.load(std::memory_order_acquire) == forks) return;
  std::lock_guard lock(RegistryMu());
  if (g_released_at.load(std::memory_order_relaxed) == forks) return;
  std::vector<Db*>& dbs = Registry();
  // Each release takes its Db out of the vector: iterate over a copy.
  for (Db* db : std::vector<Db*>(dbs)) db->ReleaseIfInheritedLocked(forks);
  g_released_at.store(forks, std::memory_order_release);
}

void Db::Close() {
  ReleaseInherited();  // an inherited connection is closed without its held read's COMMIT
  CloseConnection(true);
  refusal_why_.clear();  // the next open says what it is
  refusal_errno_ = 0;
  snapshot_path_.clear();
  snapshot_stat_ = {};
}

void Db::CloseConnection(bool unregister) {
  (void)EndHeldRead();
  for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
  cache_.clear();
  wal_index_.store(nullptr, std::memory_order_release);  // unmapped with the connection
  // A connection closing for good looks at its -wal and -shm now, whether or
  // not it has read or written since they went.
  if (db_ != nullptr && unregister) (void)CheckSidecars();
  if (db_ != nullptr && sidecar_lost_ && KeepFileAtClose()) {
    // This connection's -wal or -shm lost its name (CheckFileStillNamed): a
    // checkpoint at the close would copy its commits into the file and
    // delete the -wal by its name, over what other processes have written
    // since, mixing two stores in one file.
    (void)sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  }
  if (db_ != nullptr) sqlite3_close_v2(db_);
  db_ = nullptr;
  reopen_path_.clear();
  if (registered_) {
    std::unique_lock lock(RegistryMu(), std::defer_lock);
    if (unregister) lock.lock();
    std::erase(Registry(), this);
    registered_ = false;
  }
}

bool Db::KeepFileAtClose() const {
  constexpr off_t kWalHeader = 32;
  struct stat wal {};
  const bool named = ::stat((file_path_ + "-wal").c_str(), &wal) == 0;
  // Only the -shm went: the -wal this connection wrote is still the one
  // every process reads, and the next to open the store finds its commits
  // there, and those any other process added after them since.
  if (named && wal.st_dev == wal_dev_ && wal.st_ino == wal_ino_) return true;
  // The -wal went: its commits reach the file only by this checkpoint, which
  // must not lay its pages over another process's since.
  struct stat file {};
  if (::stat(file_path_.c_str(), &file) != 0) return true;
  const bool file_changed = file.st_size != file_at_loss_.st_size ||
                            file.st_mtim.tv_sec != file_at_loss_.st_mtim.tv_sec ||
                            file.st_mtim.tv_nsec != file_at_loss_.st_mtim.tv_nsec;
  return file_changed || (named && wal.st_size > kWalHeader);
}

void Db::ReleaseIfInheritedLocked(unsigned forks) {
  if (db_ == nullptr || opened_forks_ == forks) return;
  const char* file = sqlite3_db_filename(db_, "main");
  std::string path = file != nullptr ? file : "";
  released_read_only_ = sqlite3_db_readonly(db_, "main") == 1;
  // A held read began in the parent: its locks are the parent's too.
  held_ = false;
  in_txn_ = false;
  // The last connection to close tries the exclusive lock and, with it,
  // checkpoints and deletes the -wal and -shm. This one's WAL file and -shm
  // mapping are those of the fork: the parent may have deleted them since,
  // and the files by those names may now be another writer's, whose commits
  // (left by a crash or an exit without closing) a "checkpoint" through the
  // stale mapping would not copy before deleting them. Close without it.
  (void)sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  // Its page cache is the parent's too, shared until written: leave it be.
  const ScopedAbandonPageCaches abandon;
  CloseConnection(false);
  reopen_path_ = std::move(path);
  own_ = OwnCommits{};
  before_commit_ = WalStamp{};
}

Status Db::Reconnect() {
  if (db_ != nullptr) return Status::Ok();
  if (reopen_path_.empty()) return Status::IOError("the store is closed");
  const int flags = open_flags_ & ~SQLITE_OPEN_CREATE;
  const std::string name =
      uri_query_.empty() ? reopen_path_ : FileUri(reopen_path_) + "?" + uri_query_;
  std::string path = std::move(reopen_path_);
  reopen_path_.clear();
  Status opened = reopen_ ? reopen_(this, path) : OpenAs(name, flags);
  if (!opened.ok()) {
    Close();
    // A file that is gone (deleted, or moved away) is said so, with ENOENT.
    struct stat st {};
    const bool gone = ::stat(path.c_str(), &st) != 0 && errno == ENOENT;
    Status failed = Status::IOError(fmt::format(
        "cannot open the store {} again in this process: {}", path,
        gone ? std::string("it no longer exists (deleted, or moved away)") : opened.message()));
    reopen_path_ = std::move(path);  // the next statement tries again
    return std::move(failed).WithErrno(gone ? ENOENT : opened.sys_errno());
  }
  return Status::Ok();
}

Status Db::ErrorStatus(int rc, std::string_view context) const {
  Status status = [&] {
    std::string msg = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    switch (rc & 0xff) {
      case SQLITE_BUSY:
      case SQLITE_LOCKED:
        return Status::Busy(fmt::format("{}: database is locked", context));
      case SQLITE_CORRUPT:
      case SQLITE_NOTADB:
        if (IsSnapshot(db_)) return SnapshotTorn();
        return Status::Corruption(fmt::format("{}: {}", context, msg));
      case SQLITE_FULL:
        return Status::NoSpace(fmt::format("{}: {}", context, msg));
      case SQLITE_READONLY:
        return Status::ReadOnly(fmt::format("the store cannot be written: {}", msg));
      case SQLITE_CANTOPEN:
        // The system's reason, when SQLite kept one (a descriptor limit, a
        // missing directory), set by this very failure.
        if (const int err = db_ != nullptr ? sqlite3_system_errno(db_) : 0; err != 0) {
          return Status::IOError(
              fmt::format("{}: cannot open database file: {}", context, std::strerror(err)));
        }
        return Status::IOError(fmt::format("{}: cannot open database file", context));
      default:
        return Status::IOError(fmt::format("{}: {}", context, msg));
    }
  }();
  return WithSystemErrno(db_, rc, std::move(status));
}

Status Db::OpenReadOnlyUri(const std::string& path, const char* parameter) {
  uri_query_ = parameter;
  return OpenAs(FileUri(path) + "?" + parameter,
                SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX |
                    SQLITE_OPEN_EXRESCODE);
}

bool Db::read_only() const {
  ReleaseInherited();
  if (db_ == nullptr) return !reopen_path_.empty() && released_read_only_;  // until reopened
  return sqlite3_db_readonly(db_, "main") == 1;
}

Result<bool> Db::InWalMode() {
  static constexpr char kSql[] = "PRAGMA journal_mode";
  auto st = Prepare(kSql);
  if (!st) return st.error();
  if (st->Step() != StepResult::kRow) return st->status();
  return st->ColumnTextView(0) == "wal";
}

namespace {

bool SameFileState(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_size == b.st_size &&
         a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

}  // namespace

Status Db::CheckSnapshot() const {
  struct stat now {};
  struct stat beside {};
  const bool same = ::stat(snapshot_path_.c_str(), &now) == 0 &&
                    SameFileState(now, snapshot_stat_) &&
                    ::stat((snapshot_path_ + "-shm").c_str(), &beside) != 0 &&
                    (::stat((snapshot_path_ + "-wal").c_str(), &beside) != 0 ||
                     beside.st_size == 0);
  if (same) return Status::Ok();
  return Status::Busy(
      "the store changed after it was opened read-only as a snapshot (another process "
      "writes it); try again");
}

Status Db::KeepSnapshotCurrent(bool to_write) {
  if (!snapshot() || in_txn_) return Status::Ok();
  Status current = CheckSnapshot();
  if (current.ok() && !to_write) return current;
  if (!reopen_ || reopening_ || live_statements_ != 0) return current;
  std::string path = snapshot_path_;
  CloseConnection(true);
  refusal_why_.clear();
  refusal_errno_ = 0;
  snapshot_path_.clear();
  snapshot_stat_ = {};
  uri_query_.clear();
  reopen_path_ = std::move(path);
  reopening_ = true;
  Status reopened = Reconnect();
  reopening_ = false;
  return reopened;
}

void Db::ConfigureSqlite() {
  (void)InstallSqliteMemory();
  (void)InstallSqlitePageCache();
}

Status Db::OpenAs(const std::string& name, int flags) {
  ConfigureSqlite();  // before the VFS starts SQLite
  refusal_why_.clear();
  refusal_errno_ = 0;
  ReleaseInherited();  // before this process's new connection takes its locks
  open_flags_ = flags;
  int rc = sqlite3_open_v2(name.c_str(), &db_, flags, CoalescingVfsName());
  if (rc != SQLITE_OK) {
    Status s = ErrorStatus(rc, "open");
    sqlite3_close_v2(db_);
    db_ = nullptr;
    return s;
  }
  sqlite3_extended_result_codes(db_, 1);
  ++opens_;
  NoteOpenedFile();
  opened_forks_ = ProcessForkCount();
  if ((flags & SQLITE_OPEN_URI) == 0 || uri_query_ != "immutable=1") {
    std::lock_guard lock(RegistryMu());
    Registry().push_back(this);
    registered_ = true;
  }
  // Counted as the commit starts: a commit that then fails only makes
  // commits() move when the database did not. The hook runs with the WAL
  // write lock held, so the header it reads is the one this commit replaces.
  sqlite3_commit_hook(
      db_,
      [](void* self) -> int {
        Db* db = static_cast<Db*>(self);
        ++db->commits_;
        db->before_commit_ = db->ReadWalStamp();
        return 0;
      },
      this);
  // After each commit that wrote frames. Installing a WAL hook replaces
  // SQLite's autocheckpoint, which this keeps until SetWalHook takes over.
  sqlite3_wal_hook(
      db_,
      [](void* self, sqlite3*, const char*, int frames) -> int {
        constexpr int kDefaultAutocheckpoint = 1000;  // SQLite's own default
        Db* db = static_cast<Db*>(self);
        db->NoteOwnCommit();
        if (db->wal_hook_ != nullptr) {
          db->wal_hook_(db->wal_hook_arg_, frames);
        } else if (frames >= kDefaultAutocheckpoint) {
          (void)db->CheckpointPassive();
        }
        return SQLITE_OK;
      },
      this);
  return Status::Ok();
}

void Db::NoteOwnCommit() {
  constexpr std::size_t kChangeCounter = 2;  // iChange: the header's third u32
  const WalStamp before = before_commit_;
  before_commit_ = WalStamp{};
  const WalStamp after = ReadWalStamp();
  // Another commit (or a WAL restart) between the two reads would have moved
  // the counter again.
  if (!before.valid || !after.valid ||
      after.words[kChangeCounter] != before.words[kChangeCounter] + 1) {
    own_ = OwnCommits{};
    return;
  }
  if (!SameWalState(own_.to, before)) own_.from = before;
  own_.to = after;
}

namespace {

// SQLite maps the wal-index in regions of this size (WALINDEX_PGSZ); the
// header is two 48-byte copies at its start (https://sqlite.org/walformat.html).
constexpr int kWalIndexRegion = 32768;
constexpr std::size_t kHeaderBytes = 48;
constexpr std::size_t kIsInitOffset = 12;

WalStamp ReadHeader(const volatile unsigned char* wal_index) {
  // A writer stores the second copy, then the first; a reader that finds
  // them equal has a whole header (SQLite's own readers do the same).
  std::array<unsigned char, kHeaderBytes> first;
  std::array<unsigned char, kHeaderBytes> second;
  for (std::size_t i = 0; i < kHeaderBytes; ++i) first[i] = wal_index[i];
  std::atomic_thread_fence(std::memory_order_acquire);
  for (std::size_t i = 0; i < kHeaderBytes; ++i) second[i] = wal_index[kHeaderBytes + i];
  if (first != second || first[kIsInitOffset] == 0) return {};
  WalStamp stamp;
  std::memcpy(stamp.words.data(), first.data(), kHeaderBytes);
  stamp.valid = true;
  return stamp;
}

}  // namespace

WalStamp Db::ReadWalStamp() {
  ReleaseInherited();  // which unmaps an inherited connection's -shm
  const volatile unsigned char* mapped = wal_index_.load(std::memory_order_acquire);
  if (mapped == nullptr) {
    // A snapshot has no WAL index, and mapping one would create its -shm.
    if (db_ == nullptr || snapshot()) return {};
    sqlite3_file* file = nullptr;
    if (sqlite3_file_control(db_, "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK ||
        file == nullptr || file->pMethods == nullptr || file->pMethods->iVersion < 2 ||
        file->pMethods->xShmMap == nullptr) {
      return {};
    }
    // extend = 0: the region SQLite itself has mapped, or none yet.
    void volatile* region = nullptr;
    if (file->pMethods->xShmMap(file, 0, kWalIndexRegion, 0, &region) != SQLITE_OK ||
        region == nullptr) {
      return {};
    }
    mapped = static_cast<const volatile unsigned char*>(region);
    wal_index_.store(mapped, std::memory_order_release);
  }
  return ReadHeader(mapped);
}

WalStamp Db::PeekWalStamp() const {
  ReleaseInherited();
  const volatile unsigned char* mapped = wal_index_.load(std::memory_order_acquire);
  return mapped == nullptr ? WalStamp{} : ReadHeader(mapped);
}

Result<sqlite3_stmt*> Db::Cached(const char* sql) {
  ReleaseInherited();
  if (auto it = cache_.find(sql); it != cache_.end()) return it->second;
  if (db_ == nullptr) GRAINSTORE_RETURN_IF_ERROR(Reconnect());
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return ErrorStatus(rc, "cannot read the store's schema");
  cache_.emplace(sql, stmt);
  return stmt;
}

Result<Statement> Db::Prepare(const char* sql) {
  GRAINSTORE_RETURN_IF_ERROR(KeepSnapshotCurrent(false));
  auto stmt = Cached(sql);
  if (!stmt) return stmt.error();
  // A statement outside a transaction is one of its own: looked at as a
  // transaction's begin looks (a lost -wal or -shm refuses it).
  if (!in_txn_) {
    GRAINSTORE_RETURN_IF_ERROR(CheckFileStillNamed(sqlite3_stmt_readonly(*stmt) == 0));
  }
  SettleHeldRead(*stmt);
  return Statement(db_, *stmt, &live_statements_);
}

void Db::SettleHeldRead(sqlite3_stmt* stmt) {
  if (!held_ || in_txn_) return;
  if (stmt != nullptr && sqlite3_stmt_readonly(stmt) != 0) {
    const auto now = std::chrono::steady_clock::now();
    if (HeldReadIsCurrent(now)) {
      held_used_ = now;
      return;
    }
  }
  (void)EndHeldRead();
}

WalStamp Db::SnapshotStamp() {
  if (in_txn_ && in_read_txn_ && open_read_.stamp.valid) return open_read_.stamp;
  return ReadWalStamp();
}

bool Db::HeldReadIsCurrent(std::chrono::steady_clock::time_point now) {
  // Nothing has committed since it began, it is not yet too old, and it
  // began in this process (a forked child does not hold the parent's locks).
  return SameWalState(ReadWalStamp(), open_read_.stamp) &&
         now - open_read_.began < hold_max_age_ && ProcessForkCount() == open_read_.forks;
}

Status Db::EndHeldRead() {
  if (!held_) return Status::Ok();
  held_ = false;
  Status s = RunControl(kCommit);
  // A read has nothing to commit; should COMMIT fail anyway, the connection
  // must still leave the transaction, or the next BEGIN would fail.
  if (!s.ok()) (void)RunControl(kRollback);
  return s;
}

Status Db::RunControl(const char* sql) {
  auto stmt = Cached(sql);
  if (!stmt) return stmt.error();
  return Statement(db_, *stmt, &live_statements_).Run();
}

Status Db::ReadyForUncachedStatement() {
  ReleaseInherited();
  SettleHeldRead(nullptr);
  return db_ != nullptr ? Status::Ok() : Reconnect();
}

Status Db::Exec(const char* sql) {
  GRAINSTORE_RETURN_IF_ERROR(KeepSnapshotCurrent(false));
  GRAINSTORE_RETURN_IF_ERROR(ReadyForUncachedStatement());
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  if (err != nullptr) sqlite3_free(err);
  if (rc != SQLITE_OK) return ErrorStatus(rc, "the store");
  return Status::Ok();
}

Result<std::int64_t> Db::QueryInt(const char* sql) {
  GRAINSTORE_RETURN_IF_ERROR(KeepSnapshotCurrent(false));
  GRAINSTORE_RETURN_IF_ERROR(ReadyForUncachedStatement());
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql, -1, &stmt, nullptr);
  if (rc != SQLITE_OK) return ErrorStatus(rc, "the store");
  rc = sqlite3_step(stmt);
  std::int64_t value = 0;
  if (rc == SQLITE_ROW) value = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return ErrorStatus(rc, "the store");
  return value;
}

void Db::SetWalHook(WalHook fn, void* arg) {
  wal_hook_ = fn;
  wal_hook_arg_ = arg;
}

void Db::SetHoldHook(HoldHook fn, void* arg, std::chrono::steady_clock::duration max_age) {
  hold_hook_ = fn;
  hold_hook_arg_ = arg;
  hold_max_age_ = max_age;
}

Status Db::CheckpointPassive(bool* held_back) {
  GRAINSTORE_RETURN_IF_ERROR(ReadyForUncachedStatement());
  GRAINSTORE_RETURN_IF_ERROR(CheckSidecars());  // it would copy the wrong frames
  int log_frames = -1;
  int copied_frames = -1;
  int rc = sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, &log_frames,
                                     &copied_frames);
  if (held_back) *held_back = rc == SQLITE_OK && copied_frames < log_frames;
  if (rc == SQLITE_OK || rc == SQLITE_BUSY) return Status::Ok();
  return ErrorStatus(rc, "checkpointing the store's WAL");
}

std::int64_t Db::LastInsertRowid() const { return sqlite3_last_insert_rowid(db_); }

int Db::Changes() const { return sqlite3_changes(db_); }

Transaction::~Transaction() {
  if (!active_) return;
  (void)db_->RunControl(kRollback);
  db_->in_txn_ = false;
}

void Db::SetLockWait(LockWait wait, int timeout_ms) {
  lock_wait_ = std::move(wait);
  lock_timeout_ms_ = timeout_ms;
}

Status Transaction::Begin(Kind kind) {
  if (kind == Kind::kRead || !db_->lock_wait_) return BeginOnce(kind, false);
  // SQLite's write lock has no queue. A process committing back to back
  // leaves it free only between two transactions, a few microseconds in
  // every fifty, and a waiter that looks again after 1, 2, 5, 10... ms (the
  // steps of SQLite's own busy handler) can miss that gap hundreds of times:
  // a mount's save waited up to 1.6 s behind a `memtool --batch` import.
  // Looking every 100 µs, then every 250 µs after 2 ms and every 1 ms after
  // 12 ms, finds such a gap within a few milliseconds; a look costs a few
  // microseconds of lock calls, and a long wait about 1% of a CPU.
  using std::chrono::microseconds;
  const auto delay = [](std::size_t attempt) {
    return attempt < 20 ? microseconds(100) : attempt < 60 ? microseconds(250)
                                                           : microseconds(1000);
  };
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(db_->lock_timeout_ms_);
  for (std::size_t attempt = 0;; ++attempt) {
    Status begun = BeginOnce(kind, true);
    if (begun.code() != StatusCode::kBusy) return begun;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return begun;
    const auto left = std::chrono::duration_cast<microseconds>(deadline - now);
    db_->lock_wait_(std::min(delay(attempt), std::max(left, microseconds(1))));
  }
}

Status Transaction::BeginOnce(Kind kind, bool no_wait) {
  Db::ReleaseInherited();  // before the held read below is looked at
  read_ = kind == Kind::kRead;
  // Before the held read is looked at: opening the file again may leave one.
  GRAINSTORE_RETURN_IF_ERROR(db_->KeepSnapshotCurrent(!read_));
  if (db_->db_ == nullptr) GRAINSTORE_RETURN_IF_ERROR(db_->Reconnect());
  if (read_) GRAINSTORE_RETURN_IF_ERROR(db_->CheckFileStillNamed(false));
  if (db_->held_) {
    if (read_ && db_->HeldReadIsCurrent(std::chrono::steady_clock::now())) {
      // Nothing has committed since the held read began: it is current.
      db_->held_ = false;
      db_->in_txn_ = true;
      db_->in_read_txn_ = true;
      active_ = true;
      return Status::Ok();
    }
    GRAINSTORE_RETURN_IF_ERROR(db_->EndHeldRead());
  }
  if (!read_ && !db_->refusal_why_.empty()) {
    const int why_errno = db_->refusal_errno_;
    std::string message = fmt::format("the store cannot be written: {}", db_->refusal_why_);
    Status refused = why_errno == ENOSPC ? Status::NoSpace(std::move(message))
                                         : Status::ReadOnly(std::move(message));
    return std::move(refused).WithErrno(why_errno);
  }
  if (!read_) GRAINSTORE_RETURN_IF_ERROR(db_->CheckFileStillNamed(true));
  // Read before BEGIN: a commit landing in between makes the stamp older
  // than the snapshot, which only makes the next reuse less likely.
  const WalStamp stamp = read_ ? db_->ReadWalStamp() : WalStamp{};
  if (no_wait) {
    sqlite3_busy_timeout(db_->db_, 0);
    Status begun = db_->RunControl(kBeginWrite);
    sqlite3_busy_timeout(db_->db_, db_->lock_timeout_ms_);
    GRAINSTORE_RETURN_IF_ERROR(begun);
  } else {
    GRAINSTORE_RETURN_IF_ERROR(db_->RunControl(read_ ? kBeginRead : kBeginWrite));
  }
  if (read_) {
    db_->open_read_ = {.stamp = stamp,
                       .began = std::chrono::steady_clock::now(),
                       .forks = ProcessForkCount()};
  }
  db_->in_txn_ = true;
  db_->in_read_txn_ = read_;
  active_ = true;
  return Status::Ok();
}

Status Transaction::Commit() {
  if (read_ && db_->open_read_.stamp.valid && db_->live_statements_ == 0 &&
      db_->hold_hook_ != nullptr && db_->hold_hook_(db_->hold_hook_arg_)) {
    db_->held_ = true;
    db_->held_used_ = std::chrono::steady_clock::now();
    db_->in_txn_ = false;
    active_ = false;
    return Status::Ok();
  }
  Status s = db_->RunControl(kCommit);
  if (s.ok()) {
    active_ = false;
    db_->in_txn_ = false;
    db_->NoteNewSidecars();
  }
  return s;
}

}  // namespace grainstore
