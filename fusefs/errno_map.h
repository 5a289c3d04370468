// The one mapping from grainstore::Status to the errno a FUSE reply carries.
#ifndef FUSEFS_ERRNO_MAP_H_
#define FUSEFS_ERRNO_MAP_H_

#include "grainstore/status.h"

namespace fusefs {

// errno for a store status (0 for OK). NotFound→ENOENT, AlreadyExists→EEXIST,
// InvalidArgument→EINVAL, Conflict→EBUSY, Busy→EBUSY (never EAGAIN: callers
// of regular files do not retry), NoSpace→ENOSPC, IOError/Corruption→EIO,
// NotSupported→ENOTSUP, NotADirectory→ENOTDIR, IsADirectory→EISDIR,
// NotEmpty→ENOTEMPTY, TooLarge→EFBIG, NameTooLong→ENAMETOOLONG, ReadOnly→EROFS.
int StatusToErrno(const grainstore::Status& status);

// errno for a status returned by grainstore::ValidateName: NameTooLong is
// ENAMETOOLONG; anything else is EINVAL.
int NameStatusToErrno(const grainstore::Status& status);

}  // namespace fusefs

#endif  // FUSEFS_ERRNO_MAP_H_
