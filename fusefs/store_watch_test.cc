#include "store_watch.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

namespace fusefs {
namespace {

using std::chrono::milliseconds;

class StoreWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/store_watch_test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    db_ = dir_ + "/agent.db";
    Append(db_);
  }
  void TearDown() override {
    watch_.Stop();
    std::filesystem::remove_all(dir_);
  }
  static void Append(const std::string& path) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "x", 1), 1);
    ::close(fd);
  }
  // Whether the callback count reaches `n` within `wait`.
  bool Reaches(int n, milliseconds wait) {
    const auto until = std::chrono::steady_clock::now() + wait;
    while (calls_.load() < n) {
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::sleep_for(milliseconds(1));
    }
    return true;
  }
  bool Start() {
    std::string error;
    const bool ok = watch_.Start(db_, [this] { ++calls_; }, &error);
    EXPECT_TRUE(ok) << error;
    return ok;
  }

  std::string dir_, db_;
  std::atomic<int> calls_{0};
  StoreWatch watch_;
};

TEST_F(StoreWatchTest, AWriteToTheWalCallsBackSoon) {
  ASSERT_TRUE(Start());
  Append(db_ + "-wal");
  EXPECT_TRUE(Reaches(1, milliseconds(2000)));
  Append(db_);  // a checkpoint writes the file itself
  EXPECT_TRUE(Reaches(2, milliseconds(2000)));
}

TEST_F(StoreWatchTest, OtherFilesInTheDirectoryCallNothing) {
  ASSERT_TRUE(Start());
  Append(dir_ + "/notes.txt");
  Append(dir_ + "/agent.db-journal");
  Append(dir_ + "/agent.dbx-wal");
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(calls_.load(), 0);
}

TEST_F(StoreWatchTest, ABurstOfWritesIsOneLook) {
  ASSERT_TRUE(Start());
  for (int i = 0; i < 200; ++i) Append(db_ + "-wal");
  ASSERT_TRUE(Reaches(1, milliseconds(2000)));
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_LT(calls_.load(), 20);  // not one per write
}

TEST_F(StoreWatchTest, AStoreReachedThroughASymlinkIsWatchedWhereItLies) {
  const std::string link_dir = dir_ + "/elsewhere";
  ASSERT_TRUE(std::filesystem::create_directory(link_dir));
  ASSERT_EQ(::symlink(db_.c_str(), (link_dir + "/link.db").c_str()), 0);
  std::string error;
  ASSERT_TRUE(watch_.Start(link_dir + "/link.db", [this] { ++calls_; }, &error)) << error;
  Append(db_ + "-wal");
  EXPECT_TRUE(Reaches(1, milliseconds(2000)));
}

TEST_F(StoreWatchTest, NothingIsCalledOnceStopped) {
  ASSERT_TRUE(Start());
  watch_.Stop();
  Append(db_ + "-wal");
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(calls_.load(), 0);
  watch_.Stop();  // twice is harmless
}

TEST_F(StoreWatchTest, AMissingDirectoryIsAnError) {
  std::string error;
  EXPECT_FALSE(watch_.Start(dir_ + "/no/such/agent.db", [this] { ++calls_; }, &error));
  EXPECT_NE(error.find("cannot watch"), std::string::npos) << error;
}

}  // namespace
}  // namespace fusefs
