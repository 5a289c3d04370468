// A store whose file is deleted, or has another file moved over it, while a
// process has it open refuses that process's writes (Db::CheckFileStillNamed)
// and still reads what it had.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "grainstore/store.h"
#include "test_util.h"

namespace grainstore {
namespace {

class FileGoneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = Store::Open(path_, Options{});
    ASSERT_TRUE(opened.has_value()) << opened.error().ToString();
    store_ = std::move(*opened);
    ns_ = *store_->Namespace("default");
    ASSERT_TRUE(store_->PutFile(ns_, "/memories/a.md", "one\n").has_value());
  }

  // Past the interval between two looks at the file.
  static void WaitForNextCheck() { std::this_thread::sleep_for(std::chrono::milliseconds(150)); }

  void ExpectWritesRefusedAndReadsServed() {
    auto put = store_->PutFile(ns_, "/memories/a.md", "two\n");
    ASSERT_FALSE(put.has_value());
    EXPECT_EQ(put.error().code(), StatusCode::kIOError);
    // Named as SQLite names it: absolute, symbolic links resolved.
    EXPECT_EQ(put.error().message(),
              "the store file " + std::filesystem::canonical(dir_.path()).string() +
                  "/agent.db" +
                  " was deleted or replaced after this process opened it; nothing more is "
                  "written to the file it had open (open the store again)");
    // It stays refused, without waiting for another look.
    EXPECT_FALSE(store_->PutFile(ns_, "/memories/b.md", "new\n").has_value());
    auto body = store_->ReadFile(ns_, "/memories/a.md");
    ASSERT_TRUE(body.has_value()) << body.error().ToString();
    EXPECT_EQ(*body, "one\n");
  }

  // A store of its own in the directory `inner_`, with /memories/a.md.
  std::unique_ptr<Store> OpenInInner(NsId* ns) {
    std::filesystem::create_directory(inner_);
    auto opened = Store::Open((inner_ / "agent.db").string(), Options{});
    EXPECT_TRUE(opened.has_value()) << opened.error().ToString();
    if (!opened.has_value()) return nullptr;
    *ns = *(*opened)->Namespace("default");
    EXPECT_TRUE((*opened)->PutFile(*ns, "/memories/a.md", "one\n").has_value());
    return std::move(*opened);
  }

  test::ScratchDir dir_{"file_gone"};
  const std::filesystem::path inner_ = std::filesystem::path(dir_.path()) / "inner";
  const std::filesystem::path moved_ = std::filesystem::path(dir_.path()) / "moved";
  std::string path_ = std::filesystem::absolute(dir_.File("agent.db")).string();
  std::unique_ptr<Store> store_;
  NsId ns_{};
};

TEST_F(FileGoneTest, WritesToADeletedStoreFileAreRefused) {
  ASSERT_EQ(std::remove(path_.c_str()), 0);
  WaitForNextCheck();
  ExpectWritesRefusedAndReadsServed();
}

TEST_F(FileGoneTest, WritesToAStoreFileAnotherWasMovedOverAreRefused) {
  const std::string other = dir_.File("other.db");
  {
    auto made = Store::Open(other, Options{});
    ASSERT_TRUE(made.has_value()) << made.error().ToString();
  }
  std::filesystem::rename(other, path_);
  WaitForNextCheck();
  ExpectWritesRefusedAndReadsServed();
}

TEST_F(FileGoneTest, WritesToAStoreFileMovedAwayWithinItsDirectoryAreRefused) {
  std::filesystem::rename(path_, dir_.File("moved.db"));  // its -wal stays behind
  WaitForNextCheck();
  ExpectWritesRefusedAndReadsServed();
}

// A directory above the store moved: the -wal and -shm moved with the file,
// so other processes opening it by its new path see every write.
TEST_F(FileGoneTest, AStoreWhoseDirectoryMovedIsStillWritten) {
  NsId ns{};
  auto opened = OpenInInner(&ns);
  ASSERT_NE(opened, nullptr);
  std::filesystem::rename(inner_, moved_);
  WaitForNextCheck();
  auto put = opened->PutFile(ns, "/memories/a.md", "two\n");
  ASSERT_TRUE(put.has_value()) << put.error().ToString();
  auto other = Store::Open((moved_ / "agent.db").string(), Options{});
  ASSERT_TRUE(other.has_value()) << other.error().ToString();
  EXPECT_EQ(*(*other)->ReadFile(*(*other)->Namespace("default"), "/memories/a.md"), "two\n");
}

// The store's directory deleted with everything in it (rm -rf): the path
// and its directory are gone, and so is every name of the open file.
TEST_F(FileGoneTest, WritesToAStoreWhoseDirectoryWasDeletedAreRefused) {
  NsId ns{};
  auto opened = OpenInInner(&ns);
  ASSERT_NE(opened, nullptr);
  std::filesystem::remove_all(inner_);
  WaitForNextCheck();
  auto put = opened->PutFile(ns, "/memories/a.md", "two\n");
  ASSERT_FALSE(put.has_value());
  EXPECT_EQ(put.error().code(), StatusCode::kIOError);
  EXPECT_NE(put.error().message().find("was deleted or replaced"), std::string::npos)
      << put.error().message();
  EXPECT_EQ(*opened->ReadFile(ns, "/memories/a.md"), "one\n");
}

// Moved, then deleted at its new place: no name is left.
TEST_F(FileGoneTest, WritesToAStoreDeletedAfterItsDirectoryMovedAreRefused) {
  NsId ns{};
  auto opened = OpenInInner(&ns);
  ASSERT_NE(opened, nullptr);
  std::filesystem::rename(inner_, moved_);
  std::filesystem::remove(moved_ / "agent.db");
  WaitForNextCheck();
  auto put = opened->PutFile(ns, "/memories/a.md", "two\n");
  ASSERT_FALSE(put.has_value());
  EXPECT_EQ(put.error().code(), StatusCode::kIOError);
}

// Moved out of its directory, which is then deleted with the -wal in it:
// the file keeps a name, but what is written to its -wal would be lost.
TEST_F(FileGoneTest, WritesToAStoreWhoseWalWasDeletedAreRefused) {
  NsId ns{};
  auto opened = OpenInInner(&ns);
  ASSERT_NE(opened, nullptr);
  WaitForNextCheck();
  ASSERT_TRUE(opened->PutFile(ns, "/memories/a.md", "two\n").has_value());  // -wal seen
  std::filesystem::rename(inner_ / "agent.db", dir_.File("kept.db"));
  std::filesystem::remove_all(inner_);
  WaitForNextCheck();
  auto put = opened->PutFile(ns, "/memories/a.md", "three\n");
  ASSERT_FALSE(put.has_value());
  EXPECT_EQ(put.error().code(), StatusCode::kIOError);
}

TEST_F(FileGoneTest, AStoreFileStillInPlaceIsWritten) {
  WaitForNextCheck();
  EXPECT_TRUE(store_->PutFile(ns_, "/memories/a.md", "two\n").has_value());
  EXPECT_EQ(*store_->ReadFile(ns_, "/memories/a.md"), "two\n");
}

}  // namespace
}  // namespace grainstore
