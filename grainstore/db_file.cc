// The store's file as a path: checked before SQLite opens it (Db::Open,
// Db::CheckPath), and, while open, looked at before each write transaction
// for whether its name still leads to it (Db::CheckFileStillNamed); its
// first bytes read without dropping a connection's lock (Db::ReadFileStart).
#include <sqlite3.h>

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "db.h"

namespace grainstore {

namespace {

// SQLite's unix VFS takes full paths of at most 512 bytes, room for the
// longest name it derives included ("-journal").
constexpr std::size_t kMaxStorePathBytes = 512 - 8;

// A path SQLite can open as a database file: not too long once absolute,
// and, if something is there, a regular file. SQLite would open a device
// (and leave a -shm beside /dev/null) or block on a FIFO.
Status CheckStorePath(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // SQLite makes a relative path absolute in a buffer of its limit.
  if (!path.starts_with('/')) {
    const std::size_t cwd = fs::current_path(ec).native().size();
    if (!ec && cwd > kMaxStorePathBytes) {
      return Status::InvalidArgument(fmt::format(
          "the working directory is {} bytes long; SQLite opens a relative path only from one "
          "of at most {}: give an absolute path",
          cwd, kMaxStorePathBytes));
    }
  }
  // As SQLite will name it: absolute, with "..", "." and symlinks resolved.
  const std::size_t length = fs::weakly_canonical(fs::absolute(path, ec), ec).native().size();
  if (!ec && length > kMaxStorePathBytes) {
    return Status::InvalidArgument(fmt::format(
        "the path is {} bytes long as an absolute path; SQLite opens at most {}", length,
        kMaxStorePathBytes));
  }
  const fs::file_status st = fs::status(path, ec);
  // "x/", "x/." or "x/..": a directory's name, never a file's, though SQLite
  // would drop the ending and make (or read) a store file named x.
  const fs::path last = fs::path(path).filename();
  if (!fs::is_directory(st) && (last.empty() || last == "." || last == "..")) {
    return Status::IOError("the name ends in a directory ('/', '.' or '..'), not a store file")
        .WithErrno(EISDIR);
  }
  if (ec || !fs::exists(st)) return Status::Ok();
  if (fs::is_regular_file(st)) {
    // SQLite finds its -wal and -shm by the name it opens: two names of one
    // file give two WALs, and a checkpoint through one name writes over
    // what was committed through the other (sqlite.org/howtocorrupt.html).
    const std::uintmax_t links = fs::hard_link_count(path, ec);
    if (!ec && links > 1) {
      return Status::IOError(fmt::format(
          "the file has {} hard links; SQLite keeps a WAL per name, so writes made through "
          "one name would be lost through another: give the store one name (copy it to a new "
          "file, or remove the other links)",
          links));
    }
    return Status::Ok();
  }
  const char* kind = fs::is_directory(st)      ? "a directory"
                     : fs::is_character_file(st) ? "a character device"
                     : fs::is_block_file(st)     ? "a block device"
                     : fs::is_fifo(st)           ? "a FIFO"
                     : fs::is_socket(st)         ? "a socket"
                                                 : "something other than a file";
  Status refused = Status::IOError(fmt::format("it is {}, not a store file", kind));
  return fs::is_directory(st) ? std::move(refused).WithErrno(EISDIR) : refused;
}

}  // namespace

Status Db::Open(const std::string& path, bool create_if_missing) {
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
  if (create_if_missing) flags |= SQLITE_OPEN_CREATE;
  GRAINSTORE_RETURN_IF_ERROR(CheckPath(path));
  uri_query_.clear();
  return OpenAs(path.starts_with("file:") ? "./" + path : path, flags);
}

Status Db::CheckPath(const std::string& path) {
  // The store's path is always a file's name. SQLite would open "" and
  // ":memory:" as private temporary databases (every write acknowledged,
  // nothing kept), and a name starting with "file:" as a URI when built with
  // URI names on (Debian's is): "file:z.db" would open z.db,
  // "file:x?mode=memory" a database kept nowhere (Open names it "./file:...").
  if (path.empty()) return Status::InvalidArgument("the store path is empty");
  if (path == ":memory:") {
    return Status::InvalidArgument(
        "':memory:' is SQLite's in-memory database, which keeps nothing; give a file path");
  }
  return CheckStorePath(path);
}

Status Db::OpenSnapshot(const std::string& path, std::string why, int why_errno) {
  if (path.empty()) return Status::InvalidArgument("the store path is empty");
  GRAINSTORE_RETURN_IF_ERROR(OpenReadOnlyUri(path, "immutable=1"));
  refusal_why_ = std::move(why);
  refusal_errno_ = why_errno;
  snapshot_path_ = path;
  if (::stat(path.c_str(), &snapshot_stat_) != 0) {
    return Status::IOError(fmt::format("cannot stat {}", path));
  }
  return Status::Ok();
}

namespace {

// The link count of the file with this device and inode number that the
// process holds open (one of SQLite's descriptors), found through
// /proc/self/fd; nullopt when none is found. Read only while a store's path
// and its directory are gone from where they were (at most every 100 ms, a
// walk over the process's descriptors, tens of microseconds), and after a
// creation of a store failed (OpenInProcess).
std::optional<nlink_t> LinksOfOpenFile(dev_t dev, ino_t ino) {
  std::error_code ec;
  const std::filesystem::directory_iterator end;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec); !ec && it != end;
       it.increment(ec)) {
    int fd = -1;
    const std::string name = it->path().filename().string();
    auto [last, err] = std::from_chars(name.data(), name.data() + name.size(), fd);
    if (err != std::errc() || last != name.data() + name.size()) continue;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino) return st.st_nlink;
  }
  return std::nullopt;
}

// Whether the file with this device and inode number is open in the process
// and has no name left.
bool OpenFileUnlinked(dev_t dev, ino_t ino) {
  return ino != 0 && LinksOfOpenFile(dev, ino) == nlink_t{0};
}

// Records the device and inode number of the file the path names, if any;
// leaves them as they were otherwise.
void NoteFileAt(const std::string& path, dev_t* dev, ino_t* ino) {
  struct stat named {};
  if (::stat(path.c_str(), &named) != 0) return;
  *dev = named.st_dev;
  *ino = named.st_ino;
}

}  // namespace

std::optional<std::size_t> Db::ReadFileStart(const std::string& path,
                                             std::span<unsigned char> out) {
  ConfigureSqlite();  // the lookup starts SQLite
  sqlite3_vfs* vfs = sqlite3_vfs_find(nullptr);
  if (vfs == nullptr) return std::nullopt;
  std::vector<char> full(static_cast<std::size_t>(vfs->mxPathname) + 1);
  if (vfs->xFullPathname(vfs, path.c_str(), static_cast<int>(full.size()), full.data()) !=
      SQLITE_OK) {
    return std::nullopt;
  }
  std::vector<sqlite3_int64> space((static_cast<std::size_t>(vfs->szOsFile) + 7) / 8);
  auto* file = reinterpret_cast<sqlite3_file*>(space.data());
  int flags = 0;
  if (vfs->xOpen(vfs, full.data(), file, SQLITE_OPEN_READONLY | SQLITE_OPEN_MAIN_DB, &flags) !=
      SQLITE_OK) {
    return std::nullopt;
  }
  std::optional<std::size_t> got;
  sqlite3_int64 size = 0;
  if (file->pMethods->xFileSize(file, &size) == SQLITE_OK) {
    const auto n = std::min(static_cast<std::size_t>(std::max<sqlite3_int64>(size, 0)),
                            out.size());
    if (n == 0 || file->pMethods->xRead(file, out.data(), static_cast<int>(n), 0) == SQLITE_OK) {
      got = n;
    }
  }
  (void)file->pMethods->xClose(file);
  return got;
}

bool Db::OpenInProcess(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && LinksOfOpenFile(st.st_dev, st.st_ino).has_value();
}

void Db::NoteOpenedFile() {
  sidecars_noted_ = false;
  file_gone_.clear();
  file_checked_ = {};
  file_path_.clear();
  const char* file = sqlite3_db_filename(db_, "main");
  if (file == nullptr || *file == 0) return;
  struct stat dir {};
  struct stat named {};
  const std::string parent = std::filesystem::path(file).parent_path().string();
  if (::stat(parent.c_str(), &dir) != 0 || ::stat(file, &named) != 0) return;
  file_path_ = file;
  file_dir_dev_ = dir.st_dev;
  file_dir_ino_ = dir.st_ino;
  file_dev_ = named.st_dev;
  file_ino_ = named.st_ino;
  wal_dev_ = shm_dev_ = 0;
  wal_ino_ = shm_ino_ = 0;
  NoteFileAt(file_path_ + "-wal", &wal_dev_, &wal_ino_);
  NoteFileAt(file_path_ + "-shm", &shm_dev_, &shm_ino_);
  sidecar_lost_ = false;
}

bool Db::FileMoved() {
  int moved = 0;
  return db_ != nullptr &&
         sqlite3_file_control(db_, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK &&
         moved != 0;
}

Status Db::CheckFileStillNamed(bool write) {
  // A stat costs about a microsecond, a few percent of a small write; a
  // write in the interval after the file went is lost with it anyway.
  static constexpr auto kFileCheckInterval = std::chrono::milliseconds(100);
  if (sidecar_lost_) return Status::IOError(file_gone_);
  NoteNewSidecars();
  if (!file_gone_.empty()) return write ? Status::IOError(file_gone_) : Status::Ok();
  if (file_path_.empty()) return Status::Ok();
  const auto now = std::chrono::steady_clock::now();
  if (now - file_checked_ < kFileCheckInterval) return Status::Ok();
  file_checked_ = now;
  // SQLite's own look: its path now names another file, or none.
  if (!FileMoved()) {
    // The -wal SQLite has open now is also noted for the day the directory
    // goes: the file itself may keep a name elsewhere while its -wal goes
    // with it.
    return CheckSidecars();
  }
  struct stat named {};
  bool gone = ::stat(file_path_.c_str(), &named) == 0;  // another file by its name
  if (!gone && errno == ENOENT) {
    // Deleted or moved away within its directory; or the directory itself
    // moved, taking the -wal and -shm along, which is no fault; or the
    // directory was deleted with everything in it: the file has no name
    // left, or its -wal has none (the file was moved out first), and what is
    // written to it would be lost at the close.
    struct stat dir {};
    const std::string parent = std::filesystem::path(file_path_).parent_path().string();
    gone = ::stat(parent.c_str(), &dir) == 0 && dir.st_dev == file_dir_dev_ &&
           dir.st_ino == file_dir_ino_;
    if (!gone) {
      gone = OpenFileUnlinked(file_dev_, file_ino_) || OpenFileUnlinked(wal_dev_, wal_ino_);
    }
  }  // any other failure (a permission, a network error) proves nothing
  if (!gone) return Status::Ok();
  file_gone_ = fmt::format(
      "the store file {} was deleted or replaced after this process opened it; nothing more "
      "is written to the file it had open (open the store again)",
      file_path_);
  return write ? Status::IOError(file_gone_) : Status::Ok();
}

Status Db::CheckSidecars() {
  if (sidecar_lost_) return Status::IOError(file_gone_);
  if (file_path_.empty() || db_ == nullptr) return Status::Ok();
  const bool wal_lost = SidecarLost("-wal", &wal_dev_, &wal_ino_);
  if (!wal_lost && !SidecarLost("-shm", &shm_dev_, &shm_ino_)) return Status::Ok();
  sidecar_lost_ = true;
  if (::stat(file_path_.c_str(), &file_at_loss_) != 0) file_at_loss_ = {};
  const char* which = wal_lost ? "-wal" : "-shm";
  file_gone_ = fmt::format(
      "the store's {} file {}{} was deleted or replaced while this process had the store open; "
      "it reads and writes nothing more through it, since other processes no longer share "
      "what it reads and writes (open the store again; never delete the -wal or -shm of a "
      "store in use)",
      which, file_path_, which);
  return Status::IOError(file_gone_);
}

void Db::NoteNewSidecarsSlow() {
  if (sidecar_lost_ || db_ == nullptr) return;
  if (file_path_.empty() || snapshot()) {  // no file to watch, or no sidecars to make
    sidecars_noted_ = true;
    return;
  }
  for (auto [suffix, dev, ino] : {std::tuple("-wal", &wal_dev_, &wal_ino_),
                                  std::tuple("-shm", &shm_dev_, &shm_ino_)}) {
    if (*ino == 0) NoteFileAt(file_path_ + suffix, dev, ino);
  }
  sidecars_noted_ = wal_ino_ != 0 && shm_ino_ != 0;
}

bool Db::SidecarLost(const char* suffix, dev_t* dev, ino_t* ino) {
  struct stat named {};
  const bool has_name = ::stat((file_path_ + suffix).c_str(), &named) == 0;
  // Only a file this process holds open and that has no name left: a -wal
  // or -shm deleted by the last process to close the store, before this
  // connection opened its own, is no fault.
  if (*ino != 0 && (!has_name || named.st_dev != *dev || named.st_ino != *ino) &&
      OpenFileUnlinked(*dev, *ino)) {
    return true;
  }
  if (has_name) {
    *dev = named.st_dev;
    *ino = named.st_ino;
  }
  return false;
}

Status Db::OpenReadOnlyShared(const std::string& path, std::string why, int why_errno) {
  GRAINSTORE_RETURN_IF_ERROR(CheckStorePath(path));
  GRAINSTORE_RETURN_IF_ERROR(OpenReadOnlyUri(path, "readonly_shm=1"));
  refusal_why_ = std::move(why);
  refusal_errno_ = why_errno;
  return Status::Ok();
}

}  // namespace grainstore
