#include "read_cache.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "db.h"
#include "grainstore/store.h"
#include "store_fixture.h"
#include "test_util.h"

namespace grainstore {
namespace {

TEST(ReadCacheTest, KeepsEntriesOnlyForTheStateTheyWereReadAt) {
  ReadCache cache;
  cache.Observe({.data_version = 1, .commits = 0});
  cache.Put(1, "/memories/a", "alpha");
  ASSERT_NE(cache.Find(1, "/memories/a"), nullptr);
  EXPECT_EQ(cache.Find(1, "/memories/a")->body, "alpha");
  EXPECT_EQ(cache.Find(2, "/memories/a"), nullptr);  // namespaces are apart
  cache.Observe({.data_version = 1, .commits = 0});
  EXPECT_NE(cache.Find(1, "/memories/a"), nullptr);
  cache.Observe({.data_version = 1, .commits = 1});  // this connection committed
  EXPECT_EQ(cache.Find(1, "/memories/a"), nullptr);
  cache.Put(1, "/memories/a", "beta");
  cache.Observe({.data_version = 2, .commits = 1});  // another connection committed
  EXPECT_EQ(cache.Find(1, "/memories/a"), nullptr);
}

TEST(ReadCacheTest, PutBeforeAnyObserveKeepsNothing) {
  ReadCache cache;
  cache.Put(1, "/memories/a", "alpha");
  EXPECT_EQ(cache.size(), 0u);
}

TEST(ReadCacheTest, StaysWithinItsBounds) {
  ReadCache cache;
  cache.Observe({});
  cache.Put(1, "/memories/big", std::string(ReadCache::kMaxBodyBytes + 1, 'x'));
  EXPECT_EQ(cache.Find(1, "/memories/big"), nullptr);
  const std::string body(ReadCache::kMaxBodyBytes, 'y');
  std::size_t most = 0;
  for (int i = 0; i < 40; ++i) {
    cache.Put(1, "/memories/f" + std::to_string(i), body);
    most = std::max(most, cache.size());
  }
  EXPECT_LE(most * ReadCache::kMaxBodyBytes, ReadCache::kMaxBytes);
  EXPECT_NE(cache.Find(1, "/memories/f39"), nullptr);  // the newest is kept
  for (int i = 0; i < static_cast<int>(ReadCache::kMaxEntries) + 10; ++i) {
    cache.Put(1, "/memories/s" + std::to_string(i), "s");
    ASSERT_LE(cache.size(), ReadCache::kMaxEntries);
  }
}

TEST(DbCommitsTest, CountsWritesNotReads) {
  test::ScratchDir dir("read_cache_test");
  Db db;
  ASSERT_TRUE(db.Open(dir.File("c.db"), true).ok());
  ASSERT_TRUE(db.Exec("PRAGMA journal_mode = WAL").ok());
  ASSERT_TRUE(db.Exec("CREATE TABLE t(x INTEGER)").ok());
  const std::uint64_t after_create = db.commits();
  EXPECT_GE(after_create, 1u);
  {
    Transaction txn(&db);
    ASSERT_TRUE(txn.Begin(Transaction::Kind::kRead).ok());
    ASSERT_TRUE(db.QueryInt("SELECT count(*) FROM t").has_value());
    ASSERT_TRUE(txn.Commit().ok());
  }
  EXPECT_EQ(db.commits(), after_create);
  ASSERT_TRUE(db.Exec("INSERT INTO t VALUES (1)").ok());
  EXPECT_EQ(db.commits(), after_create + 1);
  {
    Transaction txn(&db);
    ASSERT_TRUE(txn.Begin().ok());
    ASSERT_TRUE(db.Exec("INSERT INTO t VALUES (2)").ok());
  }  // rolled back: nothing committed
  EXPECT_EQ(db.commits(), after_create + 1);
}

// ReadFile serves repeated reads from the cache; each of these changes must
// still be seen by the very next read.
class ReadFileCoherenceTest : public test::StoreFixture {
 protected:
  void SetUp() override {
    test::StoreFixture::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_TRUE(store_->PutFile(ns_, "/memories/a.md", "one\n").has_value());
    ASSERT_EQ(Read("/memories/a.md"), "one\n");
    ASSERT_EQ(Read("/memories/a.md"), "one\n");  // now cached
  }
};

TEST_F(ReadFileCoherenceTest, SeesItsOwnWrites) {
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/a.md", "two\n").has_value());
  EXPECT_EQ(Read("/memories/a.md"), "two\n");
  ASSERT_TRUE(store_->RenameKey(ns_, "/memories/a.md", "/memories/b.md").ok());
  EXPECT_EQ(Read("/memories/a.md").rfind("<", 0), 0u);
  EXPECT_EQ(Read("/memories/b.md"), "two\n");
  ASSERT_TRUE(store_->DeleteKey(ns_, "/memories/b.md").ok());
  EXPECT_EQ(Read("/memories/b.md").rfind("<", 0), 0u);
}

TEST_F(ReadFileCoherenceTest, SeesAnotherStoresWrites) {
  auto other = Store::Open(path_);
  ASSERT_TRUE(other.has_value());
  NsId ons = *(*other)->Namespace("default");
  ASSERT_TRUE((*other)->PutFile(ons, "/memories/a.md", "three\n").has_value());
  EXPECT_EQ(Read("/memories/a.md"), "three\n");
  ASSERT_TRUE((*other)->DeleteKey(ons, "/memories/a.md").ok());
  EXPECT_EQ(Read("/memories/a.md").rfind("<", 0), 0u);
}

TEST_F(ReadFileCoherenceTest, SeesAnotherProgramsWrites) {
  NodeInfo before;
  ASSERT_EQ(Read("/memories/a.md", &before), "one\n");
  // A program using SQLite's default VFS, as the sqlite3 shell would.
  ASSERT_TRUE(test::PlainExec(
      path_, "UPDATE nodes SET mtime_ns = mtime_ns + 7 WHERE key = '/memories/a.md'"));
  NodeInfo after;
  ASSERT_EQ(Read("/memories/a.md", &after), "one\n");
  EXPECT_EQ(after.mtime_ns, before.mtime_ns + 7);
}

// Store::DataVersion moves for other connections' commits only, including
// one that lands right after a run of this Store's own.
TEST_F(ReadFileCoherenceTest, DataVersionSeesOthersBetweenOwnCommits) {
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/a.md", "own 1\n").has_value());
  auto v0 = store_->DataVersion();
  ASSERT_TRUE(v0.has_value());
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/a.md", "own 2\n").has_value());
  EXPECT_EQ(*store_->DataVersion(), *v0);  // only its own commit since
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/a.md", "own 3\n").has_value());
  auto other = Store::Open(path_);
  ASSERT_TRUE(other.has_value());
  NsId ons = *(*other)->Namespace("default");
  ASSERT_TRUE((*other)->PutFile(ons, "/memories/b.md", "theirs\n").has_value());
  auto v1 = store_->DataVersion();
  ASSERT_TRUE(v1.has_value());
  EXPECT_NE(*v1, *v0);
  EXPECT_EQ(Read("/memories/b.md"), "theirs\n");
}

// The lock-free fingerprint holds still across reads and moves with every
// commit, this Store's own and another connection's.
TEST_F(ReadFileCoherenceTest, CommitFingerprintMovesWithEveryCommit) {
  const std::uint64_t f0 = store_->CommitFingerprint();
  ASSERT_NE(f0, 0u);
  EXPECT_EQ(Read("/memories/a.md"), "one\n");
  ASSERT_TRUE(store_->StatKey(ns_, "/memories").has_value());
  EXPECT_EQ(store_->CommitFingerprint(), f0);
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/a.md", "two\n").has_value());
  const std::uint64_t f1 = store_->CommitFingerprint();
  EXPECT_NE(f1, 0u);
  EXPECT_NE(f1, f0);
  auto other = Store::Open(path_);
  ASSERT_TRUE(other.has_value());
  NsId ons = *(*other)->Namespace("default");
  ASSERT_TRUE((*other)->PutFile(ons, "/memories/b.md", "theirs\n").has_value());
  const std::uint64_t f2 = store_->CommitFingerprint();
  EXPECT_NE(f2, 0u);
  EXPECT_NE(f2, f1);
}

// Read from another thread while this Store commits, as the mount's request
// threads do (a ThreadSanitizer build would report a race); once the writes
// stop it is available and holds still.
TEST_F(ReadFileCoherenceTest, CommitFingerprintIsReadFromAnyThread) {
  std::atomic<bool> done{false};
  std::atomic<int> readings{0};
  std::thread reader([&] {
    while (!done.load()) {
      (void)store_->CommitFingerprint();
      readings.fetch_add(1);
    }
  });
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(store_->PutFile(ns_, "/memories/a.md", "v" + std::to_string(i) + "\n").has_value());
  }
  done = true;
  reader.join();
  EXPECT_GT(readings.load(), 0);
  const std::uint64_t last = store_->CommitFingerprint();
  EXPECT_NE(last, 0u);
  EXPECT_EQ(store_->CommitFingerprint(), last);
}

}  // namespace
}  // namespace grainstore
