// Db::ReadWalStamp: the shared WAL-index header moves with every commit, from
// any connection or program, and with nothing else.
#include <sqlite3.h>

#include <gtest/gtest.h>

#include "db.h"
#include "test_util.h"

namespace grainstore {
namespace {

class WalStampTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(a_.Open(path_, true).ok());
    ASSERT_TRUE(a_.Exec("PRAGMA journal_mode = WAL").ok());
    ASSERT_TRUE(a_.Exec("CREATE TABLE t(x INTEGER)").ok());
  }

  WalStamp Stamp() {
    WalStamp s = a_.ReadWalStamp();
    EXPECT_TRUE(s.valid);
    return s;
  }

  test::ScratchDir dir_{"wal_stamp_test"};
  std::string path_ = dir_.File("w.db");
  Db a_;
};

TEST_F(WalStampTest, StaysPutWithoutCommits) {
  const WalStamp before = Stamp();
  EXPECT_TRUE(SameWalState(before, Stamp()));
  {
    Transaction txn(&a_);
    ASSERT_TRUE(txn.Begin(Transaction::Kind::kRead).ok());
    ASSERT_TRUE(a_.QueryInt("SELECT count(*) FROM t").has_value());
    ASSERT_TRUE(txn.Commit().ok());
  }
  {
    Transaction txn(&a_);
    ASSERT_TRUE(txn.Begin().ok());
    ASSERT_TRUE(a_.Exec("INSERT INTO t VALUES (1)").ok());
  }  // rolled back
  EXPECT_TRUE(SameWalState(before, Stamp()));
  // A checkpoint copies pages but commits nothing.
  Db b;
  ASSERT_TRUE(b.Open(path_, false).ok());
  ASSERT_TRUE(b.QueryInt("SELECT count(*) FROM t").has_value());
  ASSERT_TRUE(b.CheckpointPassive().ok());
  EXPECT_TRUE(SameWalState(before, Stamp()));
}

TEST_F(WalStampTest, MovesWithThisConnectionsCommits) {
  WalStamp last = Stamp();
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(a_.Exec("INSERT INTO t VALUES (1)").ok());
    const WalStamp now = Stamp();
    EXPECT_FALSE(SameWalState(last, now)) << i;
    last = now;
  }
}

TEST_F(WalStampTest, MovesWithAnotherConnectionsCommits) {
  const WalStamp before = Stamp();
  Db b;
  ASSERT_TRUE(b.Open(path_, false).ok());
  ASSERT_TRUE(b.Exec("INSERT INTO t VALUES (2)").ok());
  EXPECT_FALSE(SameWalState(before, Stamp()));
}

TEST_F(WalStampTest, MovesWithAnotherProgramsCommitsAndWalRestarts) {
  WalStamp last = Stamp();
  // SQLite's default VFS, as the sqlite3 shell uses.
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "INSERT INTO t VALUES (3)", nullptr, nullptr, nullptr), SQLITE_OK);
  EXPECT_FALSE(SameWalState(last, Stamp()));
  last = Stamp();
  // A full checkpoint resets the WAL; the next commit starts it over.
  ASSERT_EQ(sqlite3_wal_checkpoint_v2(raw, nullptr, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "INSERT INTO t VALUES (4)", nullptr, nullptr, nullptr), SQLITE_OK);
  EXPECT_FALSE(SameWalState(last, Stamp()));
  sqlite3_close(raw);
}

TEST_F(WalStampTest, OwnCommitsSpanARunOfThisConnectionsCommits) {
  a_.RestartOwnCommits();  // the run so far holds SetUp's CREATE TABLE
  const WalStamp start = Stamp();
  EXPECT_TRUE(SameWalState(a_.own_commits().from, start));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(a_.Exec("INSERT INTO t VALUES (5)").ok());
  EXPECT_TRUE(SameWalState(a_.own_commits().from, start));
  EXPECT_TRUE(SameWalState(a_.own_commits().to, Stamp()));
  a_.RestartOwnCommits();
  EXPECT_TRUE(SameWalState(a_.own_commits().from, Stamp()));
}

TEST_F(WalStampTest, AnotherConnectionsCommitStartsANewRun) {
  const WalStamp start = Stamp();
  ASSERT_TRUE(a_.Exec("INSERT INTO t VALUES (6)").ok());
  Db b;
  ASSERT_TRUE(b.Open(path_, false).ok());
  ASSERT_TRUE(b.Exec("INSERT INTO t VALUES (7)").ok());
  // Our run ended before b's commit: it does not reach the header now.
  EXPECT_FALSE(SameWalState(a_.own_commits().to, Stamp()));
  const WalStamp after_b = Stamp();
  ASSERT_TRUE(a_.Exec("INSERT INTO t VALUES (8)").ok());
  EXPECT_TRUE(SameWalState(a_.own_commits().from, after_b));
  EXPECT_FALSE(SameWalState(a_.own_commits().from, start));
  EXPECT_TRUE(SameWalState(a_.own_commits().to, Stamp()));
}

TEST(WalStampPairTest, InvalidStampsNeverMatch) {
  WalStamp none;
  EXPECT_FALSE(SameWalState(none, none));
  WalStamp valid;
  valid.valid = true;
  EXPECT_FALSE(SameWalState(none, valid));
  EXPECT_TRUE(SameWalState(valid, valid));
}

}  // namespace
}  // namespace grainstore
