// Db::OpenSnapshot: the store read as it is in its file, for a user who
// cannot create its -shm (Store::Open picks it; the CLI tests cover that
// choice as another user).
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "db.h"
#include "grainstore/store.h"
#include "schema.h"
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

// Writes one more file into the store at `path` through a Store of its own,
// which leaves the store file changed and no -wal or -shm beside it.
void AddFile(const std::string& path, const std::string& key) {
  auto store = Store::Open(path, Options{});
  ASSERT_TRUE(store.has_value()) << store.error().ToString();
  auto ns = (*store)->Namespace("default");
  ASSERT_TRUE(ns.has_value());
  ASSERT_TRUE((*store)->PutFile(*ns, key, "x\n").has_value());
}

constexpr char kCountFiles[] = "SELECT count(*) FROM nodes WHERE kind = 2";

// Issue: a reader that may not write the store opened it as a snapshot while
// no process had it open; when the owner wrote it before the reader's open
// had configured its connection, the configuration retried the snapshot's
// Busy for the whole busy timeout (30 s by default) before Store::Open opened
// it again, though no wait could make the snapshot current.
TEST(SnapshotOpenTest, ConfiguringASnapshotAWriterChangedAnswersBusyAtOnce) {
  test::ScratchDir dir("snapshot_open");
  const std::string path = dir.File("s.db");
  AddFile(path, "/memories/a.md");
  Db db;
  ASSERT_TRUE(db.OpenSnapshot(path, "because of the test").ok());
  AddFile(path, "/memories/b.md");
  Options options;
  options.busy_timeout_ms = 20000;
  const auto start = std::chrono::steady_clock::now();
  const Status configured = ConfigureConnection(&db, options);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(configured.code(), StatusCode::kBusy) << configured.ToString();
  EXPECT_LT(took, std::chrono::seconds(5));  // not the 20 s busy timeout
}

TEST(SnapshotOpenTest, AChangedFileIsOpenedAgainBetweenStatementsOnly) {
  test::ScratchDir dir("snapshot_open");
  const std::string path = dir.File("s.db");
  AddFile(path, "/memories/a.md");
  Db db;
  ASSERT_TRUE(db.OpenSnapshot(path, "because of the test").ok());
  int reopens = 0;
  db.SetReopen([&reopens](Db* d, const std::string& absolute) {
    ++reopens;
    return d->OpenSnapshot(absolute, "opened again");
  });
  {
    auto in_scope = db.Prepare(kCountFiles);
    ASSERT_TRUE(in_scope.has_value());
    AddFile(path, "/memories/b.md");
    // Closing the connection would finalize the statement in scope.
    auto count = db.QueryInt(kCountFiles);
    ASSERT_FALSE(count.has_value());
    EXPECT_EQ(count.error().code(), StatusCode::kBusy);
    EXPECT_EQ(reopens, 0);
  }
  auto count = db.QueryInt(kCountFiles);
  ASSERT_TRUE(count.has_value()) << count.error().ToString();
  EXPECT_EQ(*count, 2);
  EXPECT_EQ(reopens, 1);
  EXPECT_EQ(db.snapshot_why(), "opened again");
  // Unchanged since: read as it is, not opened again.
  ASSERT_TRUE(db.QueryInt(kCountFiles).has_value());
  EXPECT_EQ(reopens, 1);
}

TEST(SnapshotOpenTest, AWriteOpensTheFileAgainAndWritesWhenItMayNow) {
  test::ScratchDir dir("snapshot_open");
  const std::string path = dir.File("s.db");
  AddFile(path, "/memories/a.md");
  Db db;
  ASSERT_TRUE(db.OpenSnapshot(path, "the disk was full", ENOSPC).ok());
  const std::uint64_t opens = db.opens();
  db.SetReopen([](Db* d, const std::string& absolute) { return d->Open(absolute, false); });
  {
    Transaction write(&db);
    ASSERT_TRUE(write.Begin().ok());
    ASSERT_TRUE(db.Exec("UPDATE nodes SET mode = mode WHERE kind = 2").ok());
    ASSERT_TRUE(write.Commit().ok());
  }
  EXPECT_FALSE(db.snapshot());
  EXPECT_EQ(db.opens(), opens + 1);
  EXPECT_EQ(db.commits(), 1u);
}

TEST(SnapshotOpenTest, AMissingFileIsAnErrorNotANewDatabase) {
  test::ScratchDir dir("snapshot_open");
  Db db;
  EXPECT_FALSE(db.OpenSnapshot(dir.File("missing.db"), "why").ok());
  EXPECT_FALSE(std::filesystem::exists(dir.File("missing.db")));
}

}  // namespace
}  // namespace grainstore
