// Status::sys_errno and ErrnoOf: the errno behind a failure, as the Python
// binding's StoreError.errno reports it.
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>

#include <sys/stat.h>

#include <gtest/gtest.h>

#include "grainstore/status.h"
#include "grainstore/store.h"
#include "test_util.h"

namespace grainstore {
namespace {

Status OpenFailure(const std::string& path) {
  auto store = Store::Open(path, Options{});
  if (store.has_value()) return Status::Ok();
  return store.error();
}

TEST(StatusErrnoTest, ACodeStandsForAnErrnoOnlyWhereOneDescribesIt) {
  EXPECT_EQ(ErrnoOf(Status::NoSpace("full")), ENOSPC);
  EXPECT_EQ(ErrnoOf(Status::ReadOnly("ro")), EROFS);
  EXPECT_EQ(ErrnoOf(Status::Busy("locked")), EBUSY);
  EXPECT_EQ(ErrnoOf(Status::IOError("it is a FIFO")), 0);
  EXPECT_EQ(ErrnoOf(Status::Corruption("not a database")), 0);
  EXPECT_EQ(ErrnoOf(Status::InvalidArgument("bad")), 0);
  EXPECT_EQ(ErrnoOf(Status::Ok()), 0);
}

TEST(StatusErrnoTest, TheSystemsErrnoWinsAndLeavesCodeAndMessageAlone) {
  Status status = Status::IOError("disk I/O error").WithErrno(EIO);
  EXPECT_EQ(status.code(), StatusCode::kIOError);
  EXPECT_EQ(status.message(), "disk I/O error");
  EXPECT_EQ(ErrnoOf(status), EIO);
  EXPECT_EQ(ErrnoOf(Status::NoSpace("no inode").WithErrno(ENOSPC)), ENOSPC);
  EXPECT_EQ(ErrnoOf(Status::ReadOnly("denied").WithErrno(EACCES)), EACCES);
}

TEST(StatusErrnoTest, StoreOpenFailuresCarryTheirErrno) {
  test::ScratchDir dir("status_errno");
  Status missing = OpenFailure(dir.File("no-such-dir/x.db"));
  EXPECT_EQ(missing.sys_errno(), ENOENT) << missing.ToString();
  EXPECT_NE(missing.message().find("no such directory"), std::string::npos);

  std::filesystem::create_directory(dir.File("adir"));
  Status directory = OpenFailure(dir.File("adir"));
  EXPECT_EQ(directory.sys_errno(), EISDIR) << directory.ToString();

  std::ofstream(dir.File("plain")) << "x";
  Status under_file = OpenFailure(dir.File("plain/x.db"));
  EXPECT_EQ(under_file.sys_errno(), ENOTDIR) << under_file.ToString();

  ASSERT_EQ(::mkfifo(dir.File("fifo").c_str(), 0600), 0);
  Status fifo = OpenFailure(dir.File("fifo"));
  EXPECT_FALSE(fifo.ok());
  EXPECT_EQ(ErrnoOf(fifo), 0) << fifo.ToString();  // not a store: no errno says why

  std::ofstream(dir.File("junk.db")) << std::string(4096, 'j');
  Status junk = OpenFailure(dir.File("junk.db"));
  EXPECT_FALSE(junk.ok());
  EXPECT_EQ(ErrnoOf(junk), 0) << junk.ToString();
}

}  // namespace
}  // namespace grainstore
