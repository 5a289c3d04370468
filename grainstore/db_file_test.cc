// Db::ReadFileStart and Db::OpenInProcess: the store file read or looked at
// as a path while a connection of this process has it open, without dropping
// that connection's locks.
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <fstream>

#include <gtest/gtest.h>

#include "db.h"
#include "test_util.h"

namespace grainstore {
namespace {

// Whether another owner (this process's POSIX locks included) holds a lock
// on SQLite's SHARED byte range of the file `fd` is open on, asked through
// an open file description lock's F_OFD_GETLK.
bool SharedRangeLocked(int fd) {
  constexpr off_t kSharedFirst = 0x40000000 + 2;  // os_unix.c: PENDING_BYTE + 2
  struct flock probe {};
  probe.l_type = F_WRLCK;
  probe.l_whence = SEEK_SET;
  probe.l_start = kSharedFirst;
  probe.l_len = 510;
  return ::fcntl(fd, F_OFD_GETLK, &probe) == 0 && probe.l_type != F_UNLCK;
}

class DbFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(db_.Open(path_, true).ok());
    ASSERT_TRUE(db_.Exec("PRAGMA journal_mode = WAL").ok());
    ASSERT_TRUE(db_.Exec("CREATE TABLE t(x INTEGER)").ok());
    // Kept open to the end: its close would drop the connection's locks.
    probe_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(probe_, 0);
  }
  void TearDown() override {
    db_.Close();
    if (probe_ >= 0) ::close(probe_);
  }

  test::ScratchDir dir_{"db_file_test"};
  std::string path_ = dir_.File("s.db");
  Db db_;
  int probe_ = -1;
};

// A connection to a WAL database keeps a shared lock while it is open (the
// last connection of all to close folds the -wal in and deletes it and the
// -shm only when it can lock the file exclusively).
TEST_F(DbFileTest, ReadingTheFilesStartKeepsTheConnectionsSharedLock) {
  ASSERT_TRUE(SharedRangeLocked(probe_));
  std::array<unsigned char, 20> head{};
  const auto got = Db::ReadFileStart(path_, head);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, head.size());
  EXPECT_EQ(std::memcmp(head.data(), "SQLite format 3", 16), 0);
  EXPECT_EQ(head[18], 2);  // WAL mode
  EXPECT_TRUE(SharedRangeLocked(probe_));
  EXPECT_TRUE(db_.QueryInt("SELECT count(*) FROM t").has_value());
}

TEST_F(DbFileTest, ReadingTheFilesStartSaysHowMuchThereIs) {
  std::array<unsigned char, 4> head{};
  EXPECT_EQ(Db::ReadFileStart(path_, head), head.size());
  const std::string empty = dir_.File("empty");
  ASSERT_TRUE(std::ofstream(empty).good());
  std::array<unsigned char, 20> none{};
  EXPECT_EQ(Db::ReadFileStart(empty, none), std::size_t{0});
  EXPECT_FALSE(Db::ReadFileStart(dir_.File("absent"), none).has_value());
}

TEST_F(DbFileTest, AFileThisProcessHasOpenIsToldFromOneItDoesNot) {
  EXPECT_TRUE(Db::OpenInProcess(path_));
  const std::string other = dir_.File("other");
  ASSERT_TRUE(std::ofstream(other) << "x");
  EXPECT_FALSE(Db::OpenInProcess(other));
  EXPECT_FALSE(Db::OpenInProcess(dir_.File("absent")));
}

}  // namespace
}  // namespace grainstore
