#include "grainstore/status.h"

#include <cerrno>

namespace grainstore {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kNotFound: return "NotFound";
    case StatusCode::kAlreadyExists: return "AlreadyExists";
    case StatusCode::kInvalidArgument: return "InvalidArgument";
    case StatusCode::kConflict: return "Conflict";
    case StatusCode::kBusy: return "Busy";
    case StatusCode::kNoSpace: return "NoSpace";
    case StatusCode::kIOError: return "IOError";
    case StatusCode::kCorruption: return "Corruption";
    case StatusCode::kNotSupported: return "NotSupported";
    case StatusCode::kNotADirectory: return "NotADirectory";
    case StatusCode::kIsADirectory: return "IsADirectory";
    case StatusCode::kNotEmpty: return "NotEmpty";
    case StatusCode::kTooLarge: return "TooLarge";
    case StatusCode::kNameTooLong: return "NameTooLong";
    case StatusCode::kReadOnly: return "ReadOnly";
  }
  return "Unknown";
}

int ErrnoOf(const Status& status) {
  if (status.sys_errno() != 0) return status.sys_errno();
  switch (status.code()) {
    case StatusCode::kNoSpace: return ENOSPC;
    case StatusCode::kReadOnly: return EROFS;
    case StatusCode::kBusy: return EBUSY;
    default: return 0;
  }
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(StatusCodeName(code_));
  out += ": ";
  out += message_;
  return out;
}

}  // namespace grainstore
