#include "wal_commits.h"

#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "test_util.h"

namespace grainstore {
namespace {

// A database in WAL mode through SQLite's default VFS, its -wal kept at the
// close, with a cache of a few pages: a transaction larger than that writes
// frames to the -wal before it commits, as one does that fails for want of
// room.
class WalDb {
 public:
  explicit WalDb(const std::string& path) : wal_(path + "-wal") {
    EXPECT_EQ(sqlite3_open(path.c_str(), &db_), SQLITE_OK);
    sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
    Exec("PRAGMA journal_mode = WAL");
    Exec("PRAGMA cache_size = 4");
    Exec("CREATE TABLE IF NOT EXISTS t (b BLOB)");
  }
  ~WalDb() { sqlite3_close(db_); }
  WalDb(const WalDb&) = delete;
  WalDb& operator=(const WalDb&) = delete;

  void Exec(const std::string& sql) {
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
        << sql << ": " << (error ? error : "");
    sqlite3_free(error);
  }
  const std::string& wal() const { return wal_; }

 private:
  sqlite3* db_ = nullptr;
  std::string wal_;
};

// A WITH clause naming `c`, the numbers 1 to n, for a statement that
// follows it to select n rows from (a 3 KiB blob per row fills a page).
std::string Rows(int n) {
  return "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < " +
         std::to_string(n) + ") ";
}

// Inserts n rows of 3 KiB.
void InsertRows(WalDb* db, int n) {
  db->Exec(Rows(n) + "INSERT INTO t SELECT zeroblob(3000) FROM c");
}

TEST(WalCommitsTest, NoWalHoldsNone) {
  test::ScratchDir dir("wal_commits");
  EXPECT_EQ(ReadWalCommits(dir.File("absent.db-wal")), WalCommits::kNone);
}

TEST(WalCommitsTest, ACommittedTransactionIsSome) {
  test::ScratchDir dir("wal_commits");
  WalDb db(dir.File("s.db"));  // the CREATE TABLE committed
  EXPECT_EQ(ReadWalCommits(db.wal()), WalCommits::kSome);
}

TEST(WalCommitsTest, FramesOfATransactionNotYetCommittedAreNone) {
  test::ScratchDir dir("wal_commits");
  const std::string path = dir.File("s.db");
  {
    // Page 1 in WAL mode, then nothing committed through the -wal.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  ASSERT_FALSE(std::filesystem::exists(path + "-wal"));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const std::string begin =
      "PRAGMA cache_size = 4; BEGIN; CREATE TABLE t (b BLOB); " + Rows(40) +
      "INSERT INTO t SELECT zeroblob(3000) FROM c";
  ASSERT_EQ(sqlite3_exec(db, begin.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  // The transaction's pages spilled into the -wal, none of them a commit.
  ASSERT_GT(std::filesystem::file_size(path + "-wal"), 10u * 4096u);
  EXPECT_EQ(ReadWalCommits(path + "-wal"), WalCommits::kNone);
  ASSERT_EQ(sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  EXPECT_EQ(ReadWalCommits(path + "-wal"), WalCommits::kSome);
  sqlite3_close(db);
}

TEST(WalCommitsTest, CommitsOfAnEarlierGenerationPastARestartAreNone) {
  test::ScratchDir dir("wal_commits");
  WalDb db(dir.File("s.db"));
  InsertRows(&db, 60);  // a long -wal of committed frames
  const auto long_wal = std::filesystem::file_size(db.wal());
  db.Exec("PRAGMA wal_checkpoint(PASSIVE)");  // all copied: the next writer restarts it
  db.Exec("BEGIN");
  InsertRows(&db, 12);  // spills over the first frames, under new salts
  ASSERT_EQ(std::filesystem::file_size(db.wal()), long_wal);  // the old frames stay past them
  EXPECT_EQ(ReadWalCommits(db.wal()), WalCommits::kNone);
  db.Exec("COMMIT");
  EXPECT_EQ(ReadWalCommits(db.wal()), WalCommits::kSome);
}

TEST(WalCommitsTest, AShortWalIsNoneAndAnotherFileIsUnknown) {
  test::ScratchDir dir("wal_commits");
  std::ofstream(dir.File("short-wal"), std::ios::binary) << std::string(31, '\x37');
  EXPECT_EQ(ReadWalCommits(dir.File("short-wal")), WalCommits::kNone);
  std::ofstream(dir.File("text-wal"), std::ios::binary) << std::string(4200, 'x');
  EXPECT_EQ(ReadWalCommits(dir.File("text-wal")), WalCommits::kUnknown);
  std::filesystem::create_directory(dir.File("dir-wal"));
  EXPECT_EQ(ReadWalCommits(dir.File("dir-wal")), WalCommits::kUnknown);
}

}  // namespace
}  // namespace grainstore
