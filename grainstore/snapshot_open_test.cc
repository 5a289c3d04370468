// Db::OpenSnapshot: the store read as it is in its file, for a user who
// cannot create its -shm (Store::Open picks it; the CLI tests cover that
// choice as another user).
#include <cerrno>
#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "db.h"
#include "grainstore/store.h"
#include "test_util.h"

namespace grainstore {
namespace {

TEST(SnapshotOpenTest, ReadsAStoreWhoseNameHasUriCharactersAndRefusesWrites) {
  test::ScratchDir dir("snapshot_open");
  // Each of these would end or change the path inside a file: URI.
  const std::string path = dir.File("a?b#c%41 d.db");
  {
    auto store = Store::Open(path, Options{});
    ASSERT_TRUE(store.has_value()) << store.error().ToString();
    auto ns = (*store)->Namespace("default");
    ASSERT_TRUE(ns.has_value());
    ASSERT_TRUE((*store)->PutFile(*ns, "/memories/a.md", "kept\n").has_value());
  }
  ASSERT_FALSE(std::filesystem::exists(path + "-wal"));  // the last close removed it

  Db db;
  ASSERT_TRUE(db.OpenSnapshot(path, "because of the test").ok());
  EXPECT_TRUE(db.snapshot());
  auto files = db.QueryInt("SELECT count(*) FROM nodes WHERE kind = 2");
  ASSERT_TRUE(files.has_value()) << files.error().ToString();
  EXPECT_EQ(*files, 1);

  Transaction write(&db);
  Status refused = write.Begin();
  EXPECT_EQ(refused.code(), StatusCode::kReadOnly);
  EXPECT_EQ(refused.message(), "the store cannot be written: because of the test");
  Transaction read(&db);
  EXPECT_TRUE(read.Begin(Transaction::Kind::kRead).ok());
  EXPECT_TRUE(read.Commit().ok());
  // Nothing beside the store: no -wal, no -shm, no journal.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()),
                          std::filesystem::directory_iterator()),
            1);
}

TEST(SnapshotOpenTest, AWriteRefusalCarriesTheReasonsErrno) {
  test::ScratchDir dir("snapshot_open");
  const std::string path = dir.File("s.db");
  {
    auto store = Store::Open(path, Options{});
    ASSERT_TRUE(store.has_value()) << store.error().ToString();
  }
  for (const int why_errno : {EACCES, ENOSPC}) {
    Db db;
    ASSERT_TRUE(db.OpenSnapshot(path, "because of the test", why_errno).ok());
    Transaction write(&db);
    Status refused = write.Begin();
    // A full filesystem reads as the disk filling under a writer would.
    EXPECT_EQ(refused.code(), why_errno == ENOSPC ? StatusCode::kNoSpace : StatusCode::kReadOnly);
    EXPECT_EQ(refused.sys_errno(), why_errno);
    EXPECT_EQ(refused.message(), "the store cannot be written: because of the test");
  }
}

TEST(SnapshotOpenTest, AMissingFileIsAnErrorNotANewDatabase) {
  test::ScratchDir dir("snapshot_open");
  Db db;
  EXPECT_FALSE(db.OpenSnapshot(dir.File("missing.db"), "why").ok());
  EXPECT_FALSE(std::filesystem::exists(dir.File("missing.db")));
}

}  // namespace
}  // namespace grainstore
