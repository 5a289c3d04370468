#include "errno_map.h"

#include <cerrno>

namespace fusefs {

using grainstore::StatusCode;

int StatusToErrno(const grainstore::Status& status) {
  switch (status.code()) {
    case StatusCode::kOk: return 0;
    case StatusCode::kNotFound: return ENOENT;
    case StatusCode::kAlreadyExists: return EEXIST;
    case StatusCode::kInvalidArgument: return EINVAL;
    case StatusCode::kConflict: return EBUSY;
    case StatusCode::kBusy: return EBUSY;
    case StatusCode::kNoSpace: return ENOSPC;
    case StatusCode::kIOError:
      // A write past the process's file-size limit or the user's disk quota
      // says so, as on a local disk; any other I/O failure is EIO.
      return status.sys_errno() == EFBIG || status.sys_errno() == EDQUOT ? status.sys_errno()
                                                                        : EIO;
    case StatusCode::kCorruption: return EIO;
    case StatusCode::kNotSupported: return ENOTSUP;
    case StatusCode::kNotADirectory: return ENOTDIR;
    case StatusCode::kIsADirectory: return EISDIR;
    case StatusCode::kNotEmpty: return ENOTEMPTY;
    case StatusCode::kTooLarge: return EFBIG;
    case StatusCode::kNameTooLong: return ENAMETOOLONG;
    case StatusCode::kReadOnly: return EROFS;
  }
  return EIO;
}

int NameStatusToErrno(const grainstore::Status& status) {
  if (status.ok()) return 0;
  return status.code() == StatusCode::kNameTooLong ? ENAMETOOLONG : EINVAL;
}

}  // namespace fusefs
