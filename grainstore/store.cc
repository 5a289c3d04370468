// Store: opening, namespaces, the op-log and coherence helpers.
#include "grainstore/store.h"

#include <sodium.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "grain_id.h"
#include "grainstore/free_space.h"
#include "grainstore/path.h"
#include "schema.h"
#include "store_impl.h"
#include "wal_commits.h"

namespace grainstore {
namespace {

bool ValidNsName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// How long a reader waits for an empty store file to be written by the
// process creating it.
constexpr std::chrono::milliseconds kEmptyFileGrace{1000};
// Free space below which a filesystem counts as full for the store's -wal
// and -shm files (the -shm alone takes 32 KiB).
constexpr std::uint64_t kRoomForSidecars = 64 << 10;

// Whether the filesystem holding `dir` has no room left to create the
// store's -wal and -shm files (a count the filesystem does not keep is
// never short).
bool FilesystemFull(const std::filesystem::path& dir) {
  const FreeSpace free = FreeSpaceAt(dir.string());
  return (free.bytes && *free.bytes < kRoomForSidecars) || (free.inodes && *free.inodes < 2);
}

// Why a store whose file this user may not write (`file`, errno `why_errno`)
// was opened read-only, `how` (", as a snapshot," or "").
std::string CannotWriteReason(const char* how, const std::string& file, int why_errno) {
  return fmt::format("it was opened read-only{} because this user cannot write {} ({})", how,
                     file, std::strerror(why_errno));
}

// Why the store at `path` must be read as an immutable snapshot, or "" when
// it can be opened as usual; `*real` is the file's path, symlinks resolved
// (SQLite keeps the -wal and -shm beside the file a link names). A WAL
// store needs its -shm file beside it: a user who cannot create files in the
// store's directory reads it only while a process that could keeps the -shm
// there. A user who may not write the store file itself (another user's
// store in a shared directory) must not create them either: they would be
// this user's, and the owner could write the store no more. With no -shm and
// nothing in the WAL, no process has the store open and the file holds every
// commit, so a snapshot of it is the store as it is. `*why_errno` is the
// system's reason (EACCES, ENOSPC, ...). When it returns "", `*real` is still
// the file's path (as given if it cannot be resolved) and `*why_errno` why
// this user cannot write it (EACCES if the system now says it can), for a
// reader's shared read-only open.
std::string SnapshotReason(const std::string& path, std::string* real, int* why_errno) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path file = fs::canonical(path, ec);
  *real = ec ? path : file.string();
  const bool file_writable = ::access(real->c_str(), W_OK) == 0;
  const int file_why = file_writable ? EACCES : errno;
  *why_errno = file_why;
  if (ec || !fs::is_regular_file(file, ec) || fs::file_size(file, ec) == 0 || ec) return "";
  const fs::path dir = file.parent_path();
  const bool dir_writable = ::access(dir.c_str(), W_OK) == 0;
  const int dir_why = errno;
  const bool full = file_writable && dir_writable && FilesystemFull(dir);
  if (file_writable && dir_writable && !full) return "";
  if (fs::exists(file.string() + "-shm", ec) || ec) return "";
  const std::string wal = file.string() + "-wal";
  if (fs::exists(wal, ec) && (fs::file_size(wal, ec) != 0 || ec)) return "";
  *why_errno = !file_writable ? file_why : full ? ENOSPC : dir_why;
  if (!file_writable) return CannotWriteReason(", as a snapshot,", file.string(), file_why);
  if (full) {
    return fmt::format(
        "it was opened read-only, as a snapshot, because the filesystem of {} is full ({}); "
        "a writer needs room there for the store's -wal and -shm files",
        dir.string(), std::strerror(ENOSPC));
  }
  return fmt::format(
      "it was opened read-only, as a snapshot, because files cannot be created in {} ({}); "
      "a writer needs the store's -wal and -shm files there",
      dir.string(), std::strerror(dir_why));
}

// Whether the user may not write the store's existing file.
bool ReadOnlyForUser(const std::string& path) {
  return ::access(path.c_str(), F_OK) == 0 && ::access(path.c_str(), W_OK) != 0;
}

// Why a reader who may not make the store's -shm cannot read it, when its
// -wal holds commits and no -shm is beside it (a writer that stopped without
// closing the store, or a copy made without the -shm): SQLite reads such a
// WAL only through a -shm, and only a user who may write the store can make
// one. Retrying does not help; "" when that is not the case.
std::string StrandedWal(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path file = fs::canonical(path, ec);
  if (ec) return "";
  if (fs::exists(file.string() + "-shm", ec) || ec) return "";
  const std::string wal = file.string() + "-wal";
  const auto size = fs::file_size(wal, ec);
  if (ec || size == 0) return "";
  return fmt::format(
      "its -wal file holds commits that are not in the store file yet, and there is no -shm "
      "file beside it (a writer stopped without closing the store, or the store was copied "
      "without it); this user cannot make one to read them: run any areev command on the "
      "store once as a user who may write {} and create files in {}",
      file.string(), file.parent_path().string());
}

// The first bytes of a file: SQLite's header holds its magic (0-15), the
// page size (16-17) and the file-format versions (18-19, 2 in WAL mode).
struct FileHeader {
  bool opened = false;
  std::size_t got = 0;  // bytes read, of bytes' size
  unsigned char bytes[20] = {};

  static FileHeader Of(const std::string& path) {
    FileHeader h;
    const auto got = Db::ReadFileStart(path, h.bytes);  // keeps this process's locks
    h.opened = got.has_value();
    h.got = got.value_or(0);
    return h;
  }
  // Whether the first `need` bytes were read and begin with SQLite's magic.
  bool IsSqlite(std::size_t need) const {
    static constexpr char kMagic[16] = "SQLite format 3";  // with its NUL
    return got >= need && need >= sizeof kMagic &&
           std::memcmp(bytes, kMagic, sizeof kMagic) == 0;
  }
};

// What the first bytes of the file at `path` say it is.
enum class FileHead { kUnread, kEmpty, kNotSqlite, kRollback, kWal };

FileHead ReadFileHead(const std::string& path) {
  const FileHeader h = FileHeader::Of(path);
  if (!h.opened) return FileHead::kUnread;
  if (h.got == 0) return FileHead::kEmpty;
  if (!h.IsSqlite(sizeof h.bytes)) return FileHead::kNotSqlite;
  const auto mode = [](unsigned char version) { return version == 1 || version == 2; };
  if (!mode(h.bytes[18]) || !mode(h.bytes[19])) return FileHead::kNotSqlite;
  return h.bytes[18] == 2 && h.bytes[19] == 2 ? FileHead::kWal : FileHead::kRollback;
}

// Opens a store the user may not write, so that no -wal or -shm of this
// user's is ever made beside it: a snapshot while no process has it open,
// else through the -wal and -shm its writers keep. Those writers may close it
// between the look and the open, and SQLite would then read the file in
// rollback mode, unguarded against a writer that comes: look again.
Status OpenForReader(Db* db, const std::string& path) {
  // A snapshot would take a file that is no database for one a writer tore
  // (Busy): refused here as a writer's open refuses it.
  if (ReadFileHead(path) == FileHead::kNotSqlite) {
    return Status::Corruption("file is not a database");  // ExplainOpenError words it
  }
  // As long as a creator may take to make a store of an empty file.
  const auto give_up = std::chrono::steady_clock::now() + kEmptyFileGrace;
  for (int attempt = 0;; ++attempt) {
    int why_errno = 0;
    std::string real;
    if (std::string why = SnapshotReason(path, &real, &why_errno); !why.empty()) {
      return db->OpenSnapshot(real, std::move(why), why_errno);
    }
    GRAINSTORE_RETURN_IF_ERROR(
        db->OpenReadOnlyShared(path, CannotWriteReason("", real, why_errno), why_errno));
    auto wal = db->InWalMode();
    if (wal.has_value() && *wal) return Status::Ok();
    db->Close();
    if (attempt >= 4 && std::chrono::steady_clock::now() >= give_up) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1 << std::min(attempt, 5)));
  }
  // Not a race with writers when a -wal with commits has no -shm beside it.
  if (std::string stranded = StrandedWal(path); !stranded.empty()) {
    return Status::IOError(std::move(stranded));
  }
  switch (ReadFileHead(path)) {
    case FileHead::kEmpty: return Status::Corruption("the file is empty, not an areev store");
    case FileHead::kNotSqlite: return Status::Corruption("file is not a database");
    case FileHead::kRollback:  // every store is in WAL mode from its creation on
      return Status::Corruption("the file is a SQLite database but not an areev store");
    default: break;
  }
  return Status::Busy("the store's writers kept opening and closing it; try again");
}

// Opens the store's file as a snapshot, for reading only, or for writing,
// whichever its rights, its filesystem's room and the processes that have it
// open allow now (see SnapshotReason and OpenForReader).
Status OpenStoreFile(Db* db, const std::string& path, bool create_if_missing) {
  if (ReadOnlyForUser(path)) return OpenForReader(db, path);
  int why_errno = 0;
  std::string real;
  if (std::string why = SnapshotReason(path, &real, &why_errno); !why.empty()) {
    return db->OpenSnapshot(real, std::move(why), why_errno);
  }
  return db->Open(path, create_if_missing);
}

// SQLite's words for a path that cannot be opened as a store, put in the
// user's: which directory is missing, or that the file is no database. The
// status keeps its code; other failures pass unchanged.
Status ExplainOpenError(const std::string& path, Status status, bool via_link = false) {
  namespace fs = std::filesystem;
  if (status.ok()) return status;
  // SQLite opens (and creates) the file a symbolic link names: what fails is
  // there, at the end of the links (a loop of them is left to the message
  // below, ELOOP's).
  if (!via_link) {
    const auto is_link = [](const fs::path& p) {
      struct stat st {};
      return ::lstat(p.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
    };
    std::error_code ec;
    fs::path target = path;
    constexpr int kMaxLinks = 40;  // Linux's limit
    for (int i = 0; i < kMaxLinks && !ec && is_link(target); ++i) {
      fs::path next = fs::read_symlink(target, ec);
      target = next.is_relative() ? target.parent_path() / next : next;
    }
    if (!ec && target != fs::path(path) && !is_link(target)) {
      // Named as SQLite opens it: absolute, with the links above it resolved.
      if (fs::path resolved = fs::weakly_canonical(target, ec); !ec) target = resolved;
      Status inner = ExplainOpenError(target.string(), status, true);
      if (inner.message() == status.message()) return status;
      std::string text = fmt::format("{} is a symbolic link to {}: {}", path, target.string(),
                                     inner.message());
      Status explained = status.code() == StatusCode::kCorruption
                             ? Status::Corruption(std::move(text))
                             : Status::IOError(std::move(text));
      return std::move(explained).WithErrno(inner.sys_errno());
    }
  }
  const std::string& message = status.message();
  auto same_code = [&](std::string text, int sys_errno = 0) {
    Status explained = status.code() == StatusCode::kCorruption
                           ? Status::Corruption(std::move(text))
                           : Status::IOError(std::move(text));
    return std::move(explained).WithErrno(sys_errno);
  };
  if (message.find("file is not a database") != std::string::npos) {
    return same_code("not an areev store: the file is not a SQLite database");
  }
  if (message.find("open database file") == std::string::npos) return status;
  // Out of descriptors or memory: the path is not what failed.
  if (const int err = status.sys_errno(); err == EMFILE || err == ENFILE || err == ENOMEM) {
    return same_code(fmt::format("cannot open the file: {}", std::strerror(err)), err);
  }
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT) return same_code(fmt::format("no such directory: {}", dir.string()), err);
    return same_code(fmt::format("cannot reach {}: {}", dir.string(), std::strerror(err)), err);
  }
  if (!S_ISDIR(st.st_mode)) {
    return same_code(fmt::format("not a directory: {}", dir.string()), ENOTDIR);
  }
  if (::access(path.c_str(), F_OK) != 0) {
    if (errno == EACCES) {  // the directory exists but may not be searched
      return same_code(fmt::format("cannot reach {}: {}", dir.string(), std::strerror(EACCES)),
                       EACCES);
    }
    if (errno == ENOENT && ::access(dir.c_str(), W_OK) != 0) {
      const int err = errno;
      return same_code(
          fmt::format("cannot create a file in {}: {}", dir.string(), std::strerror(err)), err);
    }
    if (errno == ENOENT && FilesystemFull(dir)) {
      return same_code(fmt::format("cannot create a file in {}: its filesystem is full ({})",
                                   dir.string(), std::strerror(ENOSPC)),
                       ENOSPC);
    }
  }
  if (::access(path.c_str(), R_OK) != 0) {
    const int err = errno;
    if (err == ENAMETOOLONG) {
      return same_code(fmt::format("its file name is longer than the filesystem allows ({})",
                                   std::strerror(err)),
                       err);
    }
    // "open", not "read": the command may have meant to create the file.
    return same_code(fmt::format("cannot open the file: {}", std::strerror(err)), err);
  }
  return status;
}

// Polls `ready` until it is true, or for kEmptyFileGrace; then Corruption
// with `refusal`.
Status WaitForCreator(const std::function<Result<bool>()>& ready, const char* refusal) {
  const auto give_up = std::chrono::steady_clock::now() + kEmptyFileGrace;
  for (;;) {
    auto done = ready();
    if (!done.has_value()) return done.error();
    if (*done) return Status::Ok();
    if (std::chrono::steady_clock::now() >= give_up) return Status::Corruption(refusal);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// The store's files (the file, its -wal, -shm and -journal) that do not
// exist before a command that may create the store: what a creation that
// fails must remove, and nothing else.
struct AbsentFiles {
  // The store file's name carries these suffixes: itself, then SQLite's own.
  static constexpr std::array<const char*, 4> kSuffixes = {"", "-wal", "-shm", "-journal"};

  std::vector<std::string> paths;
  bool store_file = false;  // the store file itself is among them
  struct stat found {};     // the store file's (its target's, for a link), when found

  static AbsentFiles At(const std::string& path) {
    AbsentFiles absent;
    for (const char* suffix : kSuffixes) {
      struct stat st {};
      const std::string file = path + suffix;
      // A dangling symbolic link exists: SQLite would create its target,
      // which is left alone.
      if (::lstat(file.c_str(), &st) != 0) {
        if (errno != ENOENT) continue;
        absent.paths.push_back(file);
        if (*suffix == '\0') absent.store_file = true;
      } else if (*suffix == '\0') {
        // The file as found, not as a second look finds it: another
        // creator's failure may remove it in between, and the file this
        // open then makes would pass for the one found.
        absent.found = st;
        if (S_ISLNK(st.st_mode) && ::stat(path.c_str(), &absent.found) != 0) absent.found = {};
      }
    }
    return absent;
  }

  // All of the store's files, the store file first: after an open that made
  // them all (see Replaced).
  static AbsentFiles All(const std::string& path) {
    AbsentFiles absent;
    for (const char* suffix : kSuffixes) {
      absent.paths.push_back(path + suffix);
    }
    absent.store_file = true;
    return absent;
  }

  // Whether the store file found by At is gone and another is at its name:
  // another creator's failure removed it after At looked (with any -wal and
  // -shm it made), and the open that followed made the file again.
  bool Replaced(const std::string& path) const {
    struct stat now {};
    return found.st_ino != 0 && ::stat(path.c_str(), &now) == 0 &&
           (now.st_dev != found.st_dev || now.st_ino != found.st_ino);
  }
};

// Whether the SQLite file at `path` can hold no table, read from its size
// and its -wal's frame headers alone: it is empty, or its first page (the
// schema's) is all there is and its -wal commits nothing (it may hold the
// frames of a transaction that failed, which no reader takes). An areev
// store has tables on pages of their own. False when that cannot be told.
bool HoldsNoTables(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) return false;
  if (size == 0) return true;
  const FileHeader header = FileHeader::Of(path);
  if (!header.IsSqlite(18)) return false;  // through the page size
  const unsigned raw = (unsigned{header.bytes[16]} << 8) | header.bytes[17];
  const std::uintmax_t page_size = raw == 1 ? 65536 : raw;  // 1 stands for 65536
  return page_size >= 512 && size <= page_size &&
         ReadWalCommits(path + "-wal") == WalCommits::kNone;
}

// Whether the store file at `path` is empty and has no -wal or -shm beside
// it: no process has begun making a store in it.
bool EmptyAndAlone(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || st.st_size != 0) return false;
  for (const char* suffix : {"-wal", "-shm"}) {
    if (::lstat((path + suffix).c_str(), &st) == 0 || errno != ENOENT) return false;
  }
  return true;
}

// Holds the lock SQLite's connections take on a store file (the byte range
// of its PENDING, RESERVED and SHARED locks) exclusively, through a
// descriptor of its own, or nothing when another connection has the file
// open for reading or writing (a connection to a store in WAL mode keeps a
// shared lock there while it is open). While it is held, no process can
// begin to read or write the file. An open file description lock: a
// SQLite connection of this process counts as another owner. Nor is the file
// opened while this process has it open elsewhere: the close would drop
// that connection's locks.
class StoreFileLock {
 public:
  explicit StoreFileLock(const std::string& path)
      : fd_(Db::OpenInProcess(path) ? -1
                                    : ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW)) {
    constexpr off_t kPendingByte = 0x40000000;  // SQLite's lock bytes (os_unix.c)
    constexpr off_t kLockBytes = 2 + 510;       // PENDING, RESERVED, then SHARED
    struct flock lock {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    lock.l_start = kPendingByte;
    lock.l_len = kLockBytes;
    held_ = fd_ >= 0 && ::fcntl(fd_, F_OFD_SETLK, &lock) == 0;
  }
  ~StoreFileLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  StoreFileLock(const StoreFileLock&) = delete;
  StoreFileLock& operator=(const StoreFileLock&) = delete;

  bool opened() const { return fd_ >= 0; }
  bool held() const { return held_; }
  // Whether the file locked is the one `path` names now.
  bool OnFileNamed(const std::string& path) const {
    struct stat locked {};
    struct stat named {};
    return ::fstat(fd_, &locked) == 0 && ::stat(path.c_str(), &named) == 0 &&
           locked.st_dev == named.st_dev && locked.st_ino == named.st_ino;
  }

 private:
  int fd_;
  bool held_ = false;
};

// Whether the new store's file came to hold a store (another creator's,
// committed meanwhile): by what `impl`'s connection reads, or by the file's
// size and its -wal's commits when that connection cannot read (its -shm
// could not grow, or it was never opened). `impl` is closed first, either
// way.
bool CameToHoldStore(std::unique_ptr<StoreImpl> impl, const std::string& path) {
  const Result<bool> holds = HoldsStore(&impl->db);
  impl.reset();
  return holds.has_value() ? *holds : !HoldsNoTables(path);
}

// A new store that could not be made: for want of room (a full disk, or no
// inode left for its -wal), the files this open created are removed and the
// failure said as docs/cli.md says it, unless the file came to hold a store
// after all (made by another process meanwhile). For any other reason (out
// of descriptors, say) only a file still empty and alone is removed. Either
// way only under StoreFileLock, judged again while it is held: another
// process may have opened the file since and be making its store there (it
// then finds its file removed before it writes, Store::Open, and makes it
// again). On a full disk another creator fails too and lets go: the lock is
// waited for a moment. A lock wait that ran out removes nothing. `impl` is
// closed first.
Status AbandonNewStore(std::unique_ptr<StoreImpl> impl, const std::string& path,
                       const AbsentFiles& absent, Status status) {
  if (status.code() == StatusCode::kBusy) return status;
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  // SQLite says FULL when a page does not fit, an I/O error (errno ENOSPC)
  // when the -shm cannot grow; a file that took the last inode leaves its
  // -wal none, and SQLite's errno is then an earlier call's.
  const bool no_room = status.code() == StatusCode::kNoSpace || status.sys_errno() == ENOSPC ||
                       FilesystemFull(dir);
  const auto full = [&dir] {
    return Status::IOError(fmt::format("cannot create a file in {}: its filesystem is full ({})",
                                       dir.string(), std::strerror(ENOSPC)))
        .WithErrno(ENOSPC);
  };
  if (!absent.store_file) {
    // Another process began the store: it removes what it made, and a want
    // of room is said the same way here, unless that process made the store
    // after all. What is committed says so: its frames in the -wal may be
    // those of a transaction that is failing too. The file's size decides
    // only when this connection cannot read.
    if (!no_room) return status;
    return CameToHoldStore(std::move(impl), path) ? status : full();
  }
  if (!no_room && !EmptyAndAlone(path)) return status;
  // A racing creator's commit is seen here.
  if (CameToHoldStore(std::move(impl), path)) return status;
  constexpr int kLockTries = 20;  // a second, on a full disk
  for (int attempt = 1;; ++attempt) {
    const StoreFileLock lock(path);
    if (lock.held()) {
      if (lock.OnFileNamed(path) && (no_room ? HoldsNoTables(path) : EmptyAndAlone(path))) {
        std::error_code ec;
        for (const std::string& file : absent.paths) std::filesystem::remove(file, ec);
      }
      break;
    }
    if (!no_room || !lock.opened() || attempt == kLockTries) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return no_room ? full() : status;
}

// After the file is open: checks that it holds a store (or may become one),
// then sets the connection up and brings the schema up to date, the steps
// that first write a new store.
Status PrepareConnection(StoreImpl* impl, const std::string& path, const Options& options,
                         const std::string& busy) {
  GRAINSTORE_RETURN_IF_ERROR(impl->db.Exec(busy.c_str()));
  if (!options.create_if_missing) {
    GRAINSTORE_RETURN_IF_ERROR(ExplainOpenError(
        path, WaitForCreator([&] { return HoldsStore(&impl->db); },
                             "the file is a SQLite database but not an areev store")));
  } else if (auto holds = HoldsStore(&impl->db); !holds.has_value()) {
    return ExplainOpenError(path, holds.error());
  }
  GRAINSTORE_RETURN_IF_ERROR(ConfigureConnection(&impl->db, options));
  return Migrate(&impl->db);
}

}  // namespace

Store::Store(std::unique_ptr<StoreImpl> impl) : impl_(std::move(impl)) {}
Store::~Store() {
  // Closing the connection may take SQLite's global and shared-memory
  // mutexes after the Store has left fork()'s registry (fork_guard.h).
  ForkHoldOff closing;
  UnregisterForFork(impl_.get());
  impl_.reset();
}

Result<std::unique_ptr<Store>> Store::Open(const std::string& path, const Options& options) {
  // Until the Store is registered, as on every way out, including the
  // failed ones, which close the connection (fork_guard.h).
  ForkHoldOff opening;
  if (sodium_init() < 0) return Status::IOError("libsodium failed to initialise");
  auto impl = std::make_unique<StoreImpl>(options);
  AbsentFiles absent = options.create_if_missing ? AbsentFiles::At(path) : AbsentFiles{};
  const std::string busy = fmt::format("PRAGMA busy_timeout = {}", options.busy_timeout_ms);
  // A snapshot opened while no process had the store open no longer
  // describes the file once a writer opens it meanwhile (its -wal and -shm
  // appear): it is opened again, as the reopen hook set below does later.
  constexpr int kSnapshotTries = 3;
  for (int attempt = 1;; ++attempt) {
    if (Status opened =
            ExplainOpenError(path, OpenStoreFile(&impl->db, path, options.create_if_missing));
        !opened.ok()) {
      return AbandonNewStore(std::move(impl), path, absent, std::move(opened));
    }
    if (options.create_if_missing && absent.Replaced(path)) absent = AbsentFiles::All(path);
    // A caller that may not create a store reads: SQLite would take an empty
    // file for a new database, and configuring the connection would write a
    // store into it, as migrating would into a SQLite database without one.
    // A process creating the store shows each of those for a moment, so the
    // file gets a short while to become a store first.
    if (!options.create_if_missing) {
      GRAINSTORE_RETURN_IF_ERROR(WaitForCreator(
          [&]() -> Result<bool> {
            std::error_code ec;
            return !(std::filesystem::is_regular_file(path, ec) &&
                     std::filesystem::file_size(path, ec) == 0 && !ec);
          },
          "the file is empty, not an areev store"));
    }
    // Another program's database is refused as it was found, before
    // ConfigureConnection switches it to WAL.
    Status ready = PrepareConnection(impl.get(), path, options, busy);
    if (attempt < kSnapshotTries && impl->db.FileMoved()) {
      // Another process's creation of this store failed meanwhile and
      // removed the file (AbandonNewStore) before this one wrote to it:
      // opened (made) again, at the name.
      impl->db.Close();
      if (options.create_if_missing) absent = AbsentFiles::At(path);
      continue;
    }
    if (ready.ok()) break;
    if (ready.code() == StatusCode::kBusy && impl->db.snapshot() && attempt < kSnapshotTries) {
      impl->db.Close();
      continue;
    }
    return AbandonNewStore(std::move(impl), path, absent, std::move(ready));
  }
  // A write waiting for another process's write lock lets the Store's other
  // callers (other threads of a mount, other promises of a binding) go on:
  // their reads answer, and their writes wait alongside it, each up to the
  // busy timeout from its own start. Every write transaction begins under mu.
  impl->db.SetLockWait(
      [&mu = impl->mu](std::chrono::microseconds delay) {
        mu.unlock();
        std::this_thread::sleep_for(delay);
        mu.lock();
      },
      options.busy_timeout_ms);
  impl->checkpointer = std::make_unique<Checkpointer>(path);
  impl->checkpointer->Attach(&impl->db);
  impl->read_releaser = std::make_unique<ReadReleaser>(&impl->mu, &impl->db);
  impl->read_releaser->Attach();
  // Opened again as above, never created: after a fork(), and when a
  // snapshot no longer describes the file or is asked to write (the disk
  // that was full may have room now). A connection that may write brings
  // the schema up to date, as a snapshot of an older store could not.
  impl->db.SetReopen([busy, options](Db* db, const std::string& absolute) {
    GRAINSTORE_RETURN_IF_ERROR(OpenStoreFile(db, absolute, false));
    GRAINSTORE_RETURN_IF_ERROR(db->Exec(busy.c_str()));
    GRAINSTORE_RETURN_IF_ERROR(ConfigureConnection(db, options));
    return db->read_only() ? Status::Ok() : Migrate(db);
  });
  impl->DrawOrigin();
  RegisterForFork(impl.get());
  return std::unique_ptr<Store>(new Store(std::move(impl)));
}

void StoreImpl::DrawOrigin() {
  randombytes_buf(&origin, sizeof origin);
  origin &= 0x7fffffffffffffffull;  // stored as a signed INTEGER
  if (origin == 0) origin = 1;
}

void StoreImpl::ChildDone() {
  if (checkpointer) checkpointer->ForkDone();
  read_cache.Abandon();
  seen_wal = WalStamp{};
  DrawOrigin();
  mu.unlock();
}

std::uint64_t Store::origin() const { return impl_->origin; }

bool Store::read_only() const { return impl_->db.read_only(); }
std::string Store::read_only_reason() const { return impl_->db.snapshot_why(); }

Status Store::CheckPath(const std::string& path) { return Db::CheckPath(path); }

Status Store::CheckNamespaceName(std::string_view name) {
  if (ValidNsName(name)) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "invalid namespace name '{}': use 1-64 characters from A-Z a-z 0-9 . _ -", name));
}

Result<NsId> StoreImpl::ResolveNs(std::string_view name, bool create) {
  static constexpr char kFind[] = "SELECT id, root_id FROM namespaces WHERE name = ?";
  static constexpr char kInsert[] =
      "INSERT INTO namespaces(name, root_id, created_ns) VALUES(?, 0, ?)";
  static constexpr char kInsertRoot[] =
      "INSERT INTO nodes(id, ns_id, parent_id, name, key, kind, mode, uid, gid, size, atime_ns, "
      "mtime_ns, ctime_ns, body_id, chain_id, versioning, symlink) "
      "VALUES(" GS_NEXT_NODE_ID ", ?, NULL, '', ?, 1, 493, ?, ?, 4096, ?, ?, ?, NULL, 0, 1, NULL)";
  static constexpr char kSetRoot[] = "UPDATE namespaces SET root_id = ? WHERE id = ?";
  auto cached = ns_ids.find(std::string(name));
  if (cached != ns_ids.end()) return cached->second;
  GRAINSTORE_RETURN_IF_ERROR(Store::CheckNamespaceName(name));
  auto lookup = [&]() -> Result<std::optional<std::pair<NsId, NodeId>>> {
    auto st = db.Prepare(kFind);
    if (!st) return st.error();
    st->BindText(1, name);
    StepResult r = st->Step();
    if (r == StepResult::kError) return st->status();
    if (r == StepResult::kDone) return std::optional<std::pair<NsId, NodeId>>();
    return std::optional<std::pair<NsId, NodeId>>(
        std::make_pair(st->ColumnInt64(0), static_cast<NodeId>(st->ColumnInt64(1))));
  };
  auto found = lookup();
  if (!found) return found.error();
  if (!found->has_value()) {
    if (!create) return Status::NotFound(fmt::format("no namespace '{}'", name));
    Transaction txn(&db);
    GRAINSTORE_RETURN_IF_ERROR(txn.Begin());
    found = lookup();  // another process may have created it meanwhile
    if (!found) return found.error();
    if (!found->has_value()) {
      std::int64_t now = NowNs();
      auto ins = db.Prepare(kInsert);
      if (!ins) return ins.error();
      ins->BindText(1, name);
      ins->BindInt64(2, now);
      GRAINSTORE_RETURN_IF_ERROR(ins->Run());
      NsId ns = db.LastInsertRowid();
      auto root = db.Prepare(kInsertRoot);
      if (!root) return root.error();
      root->BindInt64(1, ns);
      root->BindText(2, kMemoriesRoot);
      root->BindInt64(3, static_cast<std::int64_t>(geteuid()));
      root->BindInt64(4, static_cast<std::int64_t>(getegid()));
      root->BindInt64(5, now);
      root->BindInt64(6, now);
      root->BindInt64(7, now);
      GRAINSTORE_RETURN_IF_ERROR(root->Run());
      NodeId root_id = static_cast<NodeId>(db.LastInsertRowid());
      auto set = db.Prepare(kSetRoot);
      if (!set) return set.error();
      set->BindInt64(1, static_cast<std::int64_t>(root_id));
      set->BindInt64(2, ns);
      GRAINSTORE_RETURN_IF_ERROR(set->Run());
      GRAINSTORE_RETURN_IF_ERROR(txn.Commit());
      *found = std::make_pair(ns, root_id);
    } else {
      GRAINSTORE_RETURN_IF_ERROR(txn.Commit());
    }
  }
  auto [ns, root] = **found;
  ns_ids.emplace(std::string(name), ns);
  ns_names.emplace(ns, std::string(name));
  roots.emplace(ns, root);
  return ns;
}

Result<std::string> StoreImpl::NsName(NsId ns) {
  static constexpr char kSql[] = "SELECT name, root_id FROM namespaces WHERE id = ?";
  auto it = ns_names.find(ns);
  if (it != ns_names.end()) return it->second;
  auto st = db.Prepare(kSql);
  if (!st) return st.error();
  st->BindInt64(1, ns);
  StepResult r = st->Step();
  if (r == StepResult::kError) return st->status();
  if (r == StepResult::kDone) return Status::NotFound(fmt::format("no namespace #{}", ns));
  std::string name = st->ColumnText(0);
  ns_names.emplace(ns, name);
  ns_ids.emplace(name, ns);
  roots.emplace(ns, static_cast<NodeId>(st->ColumnInt64(1)));
  return name;
}

Result<NodeId> StoreImpl::Root(NsId ns) {
  auto it = roots.find(ns);
  if (it != roots.end()) return it->second;
  auto name = NsName(ns);
  if (!name) return name.error();
  return roots.at(ns);
}

Result<NsId> Store::Namespace(std::string_view name) {
  std::lock_guard lock(impl_->mu);
  return impl_->ResolveNs(name, true);
}

Result<NsId> Store::FindNamespace(std::string_view name) {
  std::lock_guard lock(impl_->mu);
  return impl_->ResolveNs(name, false);
}

Result<std::vector<std::string>> Store::ListNamespaces() {
  static constexpr char kSql[] = "SELECT name FROM namespaces ORDER BY name";
  std::lock_guard lock(impl_->mu);
  auto st = impl_->db.Prepare(kSql);
  if (!st) return st.error();
  std::vector<std::string> out;
  for (;;) {
    StepResult r = st->Step();
    if (r == StepResult::kDone) return out;
    if (r == StepResult::kError) return st->status();
    out.push_back(st->ColumnText(0));
  }
}

Result<NodeId> Store::RootId(NsId ns) {
  std::lock_guard lock(impl_->mu);
  return impl_->Root(ns);
}

Result<std::vector<OpRecord>> Store::ReadOps(NsId ns, std::uint64_t after_seq,
                                             std::size_t limit) {
  static constexpr char kSql[] =
      "SELECT o.seq, n.name, o.at_ns, o.op, o.subject, o.new_subject, o.node_id, o.chain_id, "
      "o.grain_id, o.origin FROM oplog o JOIN namespaces n ON n.id = o.ns_id "
      "WHERE o.seq > ?1 AND (?2 = 0 OR o.ns_id = ?2) ORDER BY o.seq LIMIT ?3";
  std::lock_guard lock(impl_->mu);
  auto st = impl_->db.Prepare(kSql);
  if (!st) return st.error();
  st->BindInt64(1, static_cast<std::int64_t>(after_seq));
  st->BindInt64(2, ns);
  st->BindInt64(3, static_cast<std::int64_t>(std::min<std::size_t>(limit, INT64_MAX)));
  std::vector<OpRecord> out;
  for (;;) {
    StepResult r = st->Step();
    if (r == StepResult::kDone) return out;
    if (r == StepResult::kError) return st->status();
    OpRecord op;
    op.seq = static_cast<std::uint64_t>(st->ColumnInt64(0));
    op.ns = st->ColumnText(1);
    op.at_ns = st->ColumnInt64(2);
    op.op = st->ColumnText(3);
    op.subject = st->ColumnText(4);
    op.new_subject = st->ColumnText(5);
    op.node_id = static_cast<NodeId>(st->ColumnInt64(6));
    op.chain_id = static_cast<ChainId>(st->ColumnInt64(7));
    if (!st->ColumnIsNull(8)) op.grain_id = ToHex(st->ColumnBlobView(8));
    op.origin = static_cast<std::uint64_t>(st->ColumnInt64(9));
    out.push_back(std::move(op));
  }
}

namespace {

// A rename in the op-log: what moved, where to, when.
struct Rename {
  std::int64_t seq = 0;
  std::string from, to;
  std::int64_t at_ns = 0;
  ChainId chain = 0;
};

// Renames of `at` or of a directory above it after seq `after`, newest
// first or oldest first, at most `limit`.
Result<std::vector<Rename>> RenamesOf(StoreImpl& s, NsId ns, std::string_view at,
                                      std::int64_t after, int limit, bool newest_first) {
  static const std::string kSql =
      "SELECT seq, subject, new_subject, at_ns, chain_id FROM oplog WHERE ns_id = ?1 "
      "AND op = 'rename' AND seq > ?3 AND new_subject != '' "
      "AND (subject = ?2 OR substr(?2, 1, length(subject) + 1) = subject || '/') ";
  static const std::string kNewestSql = kSql + "ORDER BY seq DESC LIMIT ?4";
  static const std::string kOldestSql = kSql + "ORDER BY seq ASC LIMIT ?4";
  auto st = s.db.Prepare((newest_first ? kNewestSql : kOldestSql).c_str());
  if (!st) return st.error();
  st->BindInt64(1, ns);
  st->BindText(2, at);
  st->BindInt64(3, after);
  st->BindInt64(4, limit);
  std::vector<Rename> out;
  for (;;) {
    const StepResult r = st->Step();
    if (r == StepResult::kError) return st->status();
    if (r == StepResult::kDone) return out;
    out.push_back(Rename{.seq = st->ColumnInt64(0),
                         .from = st->ColumnText(1),
                         .to = st->ColumnText(2),
                         .at_ns = st->ColumnInt64(3),
                         .chain = static_cast<ChainId>(st->ColumnInt64(4))});
  }
}

}  // namespace

Status Store::ForEachMoveAwayFrom(NsId ns, std::string_view key, int limit,
                                  const MoveVisitor& visit) {
  constexpr int kMaxHops = 64;  // each hop is a later rename: the walk ends
  StoreImpl& s = *impl_;
  Result<std::vector<Rename>> moves = [&] {
    std::lock_guard lock(s.mu);
    return s.InRead([&] { return RenamesOf(s, ns, key, 0, limit, true); });
  }();
  if (!moves.has_value()) return moves.error();
  for (const Rename& move : *moves) {
    MovedAway away{.at_ns = move.at_ns};
    if (move.from == key && move.chain != 0) {  // the file's own rename
      away.chain = move.chain;
    } else {
      // Where the later renames lead, in the order they came.
      std::lock_guard lock(s.mu);
      using Places = std::vector<std::string>;
      Result<Places> led = s.InRead([&]() -> Result<Places> {
        Places places{move.to + std::string(key.substr(move.from.size()))};
        std::int64_t after = move.seq;
        for (int hop = 0; hop < kMaxHops; ++hop) {
          auto next = RenamesOf(s, ns, places.back(), after, 1, false);
          if (!next.has_value()) return next.error();
          if (next->empty()) break;
          after = next->front().seq;
          places.push_back(next->front().to + places.back().substr(next->front().from.size()));
        }
        return places;
      });
      if (!led.has_value()) return led.error();
      away.places = std::move(*led);
    }
    if (!visit(away)) return Status::Ok();
  }
  return Status::Ok();
}

Result<std::uint64_t> Store::LastOpSeq() {
  static constexpr char kSql[] = "SELECT COALESCE(MAX(seq), 0) FROM oplog";
  std::lock_guard lock(impl_->mu);
  auto st = impl_->db.Prepare(kSql);
  if (!st) return st.error();
  if (st->Step() != StepResult::kRow) return st->status();
  return static_cast<std::uint64_t>(st->ColumnInt64(0));
}

Result<std::int64_t> StoreImpl::CurrentDataVersion() {
  // The header is read before the version, or in a read transaction before
  // its snapshot began: a commit landing in between makes the next call look
  // again, never hides a change. (The header read now would be newer than a
  // reused held read's snapshot, and data_version answers from that snapshot.)
  const WalStamp live = db.SnapshotStamp();
  if (db.opens() != seen_opens) {
    // A new connection: its header and counts start afresh, and may read a
    // file other than the one the cache's bodies came from.
    seen_wal = WalStamp{};
    seen_opens = db.opens();
    read_cache.Clear();
  }
  if (SameWalState(live, seen_wal)) return seen_version;
  const Db::OwnCommits& own = db.own_commits();
  // Only this connection committed since: data_version counts the others.
  if (!SameWalState(seen_wal, own.from) || !SameWalState(live, own.to)) {
    auto version = grainstore::DataVersion(&db);
    if (!version) return version.error();
    seen_version = *version;
  }
  seen_wal = live;
  db.RestartOwnCommits();  // a run that ends at `live` starts from what was just seen
  read_cache.Observe({.data_version = seen_version, .commits = db.commits()});
  return seen_version;
}

Result<std::uint64_t> Store::DataVersion() {
  std::lock_guard lock(impl_->mu);
  auto v = impl_->CurrentDataVersion();
  if (!v) return v.error();
  return static_cast<std::uint64_t>(*v);
}

std::uint64_t Store::CommitFingerprint() const {
  const WalStamp stamp = impl_->db.PeekWalStamp();
  if (!stamp.valid) return 0;
  std::uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (std::uint32_t word : stamp.words) {  // splitmix64 over the header's words
    h += word;
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
  }
  return h == 0 ? 1 : h;
}

Status Store::Sync() {
  std::lock_guard lock(impl_->mu);
  return SyncToDisk(&impl_->db);
}

}  // namespace grainstore
