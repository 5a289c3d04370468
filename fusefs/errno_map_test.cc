#include "errno_map.h"

#include <cerrno>

#include <gtest/gtest.h>

namespace fusefs {
namespace {

using grainstore::Status;

TEST(StatusToErrnoTest, Table) {
  struct Case {
    Status status;
    int expected;
  };
  const Case cases[] = {
      {Status::Ok(), 0},
      {Status::NotFound("x"), ENOENT},
      {Status::AlreadyExists("x"), EEXIST},
      {Status::InvalidArgument("x"), EINVAL},
      {Status::Conflict("x"), EBUSY},
      {Status::Busy("x"), EBUSY},
      {Status::NoSpace("x"), ENOSPC},
      {Status::IOError("x"), EIO},
      {Status::Corruption("x"), EIO},
      {Status::NotSupported("x"), ENOTSUP},
      {Status::NotADirectory("x"), ENOTDIR},
      {Status::IsADirectory("x"), EISDIR},
      {Status::NotEmpty("x"), ENOTEMPTY},
      {Status::TooLarge("x"), EFBIG},
      {Status::NameTooLong("x"), ENAMETOOLONG},
      {Status::ReadOnly("x"), EROFS},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(StatusToErrno(c.status), c.expected) << c.status.ToString();
  }
}

TEST(StatusToErrnoTest, AnIOErrorPastAFileLimitOrQuotaSaysSo) {
  EXPECT_EQ(StatusToErrno(Status::IOError("x").WithErrno(EFBIG)), EFBIG);
  EXPECT_EQ(StatusToErrno(Status::IOError("x").WithErrno(EDQUOT)), EDQUOT);
  EXPECT_EQ(StatusToErrno(Status::IOError("x").WithErrno(EBADF)), EIO);
}

TEST(NameStatusToErrnoTest, TooLongIsNameTooLong) {
  EXPECT_EQ(NameStatusToErrno(Status::Ok()), 0);
  EXPECT_EQ(NameStatusToErrno(Status::NameTooLong("long")), ENAMETOOLONG);
  EXPECT_EQ(NameStatusToErrno(Status::InvalidArgument("bad")), EINVAL);
}

}  // namespace
}  // namespace fusefs
