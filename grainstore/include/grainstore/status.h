// Status: the outcome of a grainstore operation, shaped like leveldb's Status.
// An OK status carries no message. Non-OK statuses carry a code and a
// human-readable message that never contains host paths of the caller.
#ifndef GRAINSTORE_STATUS_H_
#define GRAINSTORE_STATUS_H_

#include <string>
#include <string_view>
#include <utility>

namespace grainstore {

enum class StatusCode : int {
  kOk = 0,
  kNotFound,
  kAlreadyExists,
  kInvalidArgument,
  kConflict,       // a precondition on store state failed (e.g. not empty, is a directory)
  kBusy,           // the database stayed locked past the busy timeout
  kNoSpace,
  kIOError,
  kCorruption,
  kNotSupported,
  kNotADirectory,  // a path component that must be a directory is a file
  kIsADirectory,   // a file operation was aimed at a directory
  kNotEmpty,       // a directory that must be empty is not
  kTooLarge,       // a body exceeds Limits::kMaxBodyBytes
  kNameTooLong,    // a name exceeds kMaxNameBytes or a path kMaxKeyBytes
  kReadOnly,       // a write to a store this process cannot write
};

class [[nodiscard]] Status {
 public:
  Status() = default;

  static Status Ok() { return Status(); }
  static Status NotFound(std::string msg) { return {StatusCode::kNotFound, std::move(msg)}; }
  static Status AlreadyExists(std::string msg) { return {StatusCode::kAlreadyExists, std::move(msg)}; }
  static Status InvalidArgument(std::string msg) { return {StatusCode::kInvalidArgument, std::move(msg)}; }
  static Status Conflict(std::string msg) { return {StatusCode::kConflict, std::move(msg)}; }
  static Status Busy(std::string msg) { return {StatusCode::kBusy, std::move(msg)}; }
  static Status NoSpace(std::string msg) { return {StatusCode::kNoSpace, std::move(msg)}; }
  static Status IOError(std::string msg) { return {StatusCode::kIOError, std::move(msg)}; }
  static Status Corruption(std::string msg) { return {StatusCode::kCorruption, std::move(msg)}; }
  static Status NotSupported(std::string msg) { return {StatusCode::kNotSupported, std::move(msg)}; }
  static Status NotADirectory(std::string msg) { return {StatusCode::kNotADirectory, std::move(msg)}; }
  static Status IsADirectory(std::string msg) { return {StatusCode::kIsADirectory, std::move(msg)}; }
  static Status NotEmpty(std::string msg) { return {StatusCode::kNotEmpty, std::move(msg)}; }
  static Status TooLarge(std::string msg) { return {StatusCode::kTooLarge, std::move(msg)}; }
  static Status NameTooLong(std::string msg) {
    return {StatusCode::kNameTooLong, std::move(msg)};
  }
  static Status ReadOnly(std::string msg) { return {StatusCode::kReadOnly, std::move(msg)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  bool IsNotFound() const { return code_ == StatusCode::kNotFound; }
  bool IsAlreadyExists() const { return code_ == StatusCode::kAlreadyExists; }

  // The operating system's errno behind the failure (ENOENT for a missing
  // directory, EACCES, ENOSPC, ...), or 0 when none is known or none applies.
  int sys_errno() const { return sys_errno_; }
  Status WithErrno(int sys_errno) && {
    sys_errno_ = sys_errno;
    return std::move(*this);
  }
  // The same failure (code and errno) told with another message.
  Status WithMessage(std::string msg) && {
    message_ = std::move(msg);
    return std::move(*this);
  }

  // "NotFound: <message>", for logs.
  std::string ToString() const;

 private:
  Status(StatusCode code, std::string msg) : code_(code), message_(std::move(msg)) {}
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  int sys_errno_ = 0;
};

// Name of a status code ("NotFound", ...).
std::string_view StatusCodeName(StatusCode code);

// The errno a caller that speaks errno (an OSError, a log line) should see:
// the status's own sys_errno() when it has one, else the one its code stands
// for where one does (ENOSPC, EROFS, EBUSY), else 0 (a file that is not a
// store, a bad argument: no errno describes it).
int ErrnoOf(const Status& status);

}  // namespace grainstore

#endif  // GRAINSTORE_STATUS_H_
