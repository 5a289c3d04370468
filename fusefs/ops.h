// The FUSE low-level operation handlers, grouped by area: attributes
// (ops_attr.cc), lookups and listings (ops_dir.cc), namespace changes
// (ops_entry.cc) and file data (ops_file.cc). Each handler decodes its
// arguments, calls the store, maps the Status and replies; every handler
// catches all exceptions and replies EIO.
#ifndef FUSEFS_OPS_H_
#define FUSEFS_OPS_H_

#include <fuse_lowlevel.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <utility>

#include "errno_map.h"
#include "grainstore/options.h"
#include "grainstore/status.h"
#include "log.h"

namespace fusefs {

class Filesystem;

// The operation table of the mount.
fuse_lowlevel_ops BuildOperations();

// ops_attr.cc
void OpInit(void* userdata, fuse_conn_info* conn);
void OpDestroy(void* userdata);
void OpGetattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void OpSetattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set, fuse_file_info* fi);
void OpReadlink(fuse_req_t req, fuse_ino_t ino);
void OpFallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
                 fuse_file_info* fi);
void OpStatfs(fuse_req_t req, fuse_ino_t ino);
// ops_dir.cc
void OpLookup(fuse_req_t req, fuse_ino_t parent, const char* name);
void OpForget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);
void OpForgetMulti(fuse_req_t req, size_t count, fuse_forget_data* forgets);
void OpOpendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void OpReaddir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi);
void OpReaddirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi);
void OpReleasedir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void OpFsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info* fi);
// ops_entry.cc
void OpMkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode);
void OpMknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev);
void OpSymlink(fuse_req_t req, const char* link, fuse_ino_t parent, const char* name);
void OpLink(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char* newname);
void OpUnlink(fuse_req_t req, fuse_ino_t parent, const char* name);
void OpRmdir(fuse_req_t req, fuse_ino_t parent, const char* name);
void OpRename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent,
              const char* newname, unsigned int flags);
// ops_file.cc
void OpCreate(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, fuse_file_info* fi);
void OpOpen(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void OpRead(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi);
void OpWrite(fuse_req_t req, fuse_ino_t ino, const char* buf, size_t size, off_t off,
             fuse_file_info* fi);
void OpFlush(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void OpRelease(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
void OpFsync(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info* fi);

// Runs a handler body; an escaping exception is logged and answered with EIO.
template <typename Body>
void Guarded(fuse_req_t req, const char* op, Body&& body) {
  try {
    std::forward<Body>(body)();
  } catch (const std::exception& e) {
    Log(LogLevel::kError, "{}: unexpected exception: {}", op, e.what());
    fuse_reply_err(req, EIO);
  } catch (...) {
    Log(LogLevel::kError, "{}: unexpected exception", op);
    fuse_reply_err(req, EIO);
  }
}

// errno for a store failure; failures no application can provoke on purpose
// (I/O, corruption, lock timeouts, full disk) are logged here, once.
inline int FailureErrno(const char* op, const grainstore::Status& status) {
  switch (status.code()) {
    case grainstore::StatusCode::kIOError:
    case grainstore::StatusCode::kCorruption:
    case grainstore::StatusCode::kBusy:
    case grainstore::StatusCode::kNoSpace:
      Log(LogLevel::kError, "{}: {}", op, status.ToString());
      break;
    default:
      break;
  }
  return StatusToErrno(status);
}

// Logs a failed seal no application can be told of (a release): the draft
// stays dirty and the next seal retries it (docs/fusefs.md, "Failed saves").
inline void LogUnreportedSeal(const char* op, const std::string& key,
                              const grainstore::Status& status) {
  Log(LogLevel::kError, "{}: saving {} failed, the changes stay unsaved until the next save: {}",
      op, key, status.ToString());
}

// Whether a file of `size` bytes would pass the store's limit on a body:
// writes, truncates and fallocate refuse to grow a file past it (EFBIG)
// before anything changes, where the seal would fail only later.
inline bool PastFileLimit(std::uint64_t size) { return size > grainstore::Limits::kMaxBodyBytes; }

// Whether a write of `size` bytes is refused because the store's filesystem
// is full (Filesystem::space); the first refusal of a spell is logged.
bool RefusedForSpace(Filesystem& fs, std::size_t size);

}  // namespace fusefs

#endif  // FUSEFS_OPS_H_
