// The coalescing VFS and the background checkpointer, on real files: data
// written through them must look exactly as SQLite's own VFS would have
// left it, to other connections and to the default VFS.
#include "wal_vfs.h"

#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "checkpointer.h"
#include "db.h"
#include "grainstore/store.h"
#include "test_util.h"

namespace grainstore {
namespace {

class WalVfsTest : public ::testing::Test {
 protected:
  test::ScratchDir dir_{"wal_vfs_test"};
  std::string path_ = dir_.File("t.db");
};

TEST_F(WalVfsTest, RegistersBesideTheDefault) {
  const char* name = CoalescingVfsName();
  ASSERT_NE(name, nullptr);
  EXPECT_NE(sqlite3_vfs_find(name), nullptr);
  EXPECT_NE(sqlite3_vfs_find(nullptr), sqlite3_vfs_find(name));  // not made the default
}

// Commits bigger than one write call of the underlying VFS (128 KiB) and
// bigger than the buffer cap (1 MiB) land whole.
TEST_F(WalVfsTest, LargeCommitsAreReadableThroughTheDefaultVfs) {
  Db db;
  ASSERT_TRUE(db.Open(path_, true).ok());
  ASSERT_TRUE(db.Exec("PRAGMA journal_mode = WAL").ok());
  ASSERT_TRUE(db.Exec("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)").ok());
  for (int size : {100, 200 << 10, 3 << 20}) {
    std::string sql = fmt::format("INSERT INTO t(v) VALUES(zeroblob({}))", size);
    ASSERT_TRUE(db.Exec(sql.c_str()).ok());
  }
  EXPECT_EQ(test::PlainInt(path_, "SELECT sum(length(v)) FROM t"), 100 + (200 << 10) + (3 << 20));
  EXPECT_EQ(test::PlainText(path_, "PRAGMA integrity_check"), "ok");
}

// A transaction that spills frames into the WAL and then rolls back must
// not leave them buffered: another writer reuses the same WAL offsets, and a
// late flush of the stale frames would overwrite its committed ones.
TEST_F(WalVfsTest, SpilledFramesOfARolledBackTransactionNeverOverwriteLaterCommits) {
  Db a, b;
  ASSERT_TRUE(a.Open(path_, true).ok());
  ASSERT_TRUE(a.Exec("PRAGMA journal_mode = WAL").ok());
  ASSERT_TRUE(a.Exec("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)").ok());
  ASSERT_TRUE(b.Open(path_, false).ok());
  ASSERT_TRUE(b.Exec("PRAGMA busy_timeout = 5000").ok());
  ASSERT_TRUE(a.Exec("PRAGMA cache_size = 10").ok());  // pages: forces spills
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(a.Exec("BEGIN IMMEDIATE").ok());
    ASSERT_TRUE(a.Exec("INSERT INTO t(v) SELECT randomblob(3000) FROM "
                       "(WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                       "WHERE x < 400) SELECT x FROM c)")
                    .ok());
    ASSERT_TRUE(a.Exec("ROLLBACK").ok());
    std::string sql =
        fmt::format("INSERT INTO t(v) VALUES(zeroblob(5000)), (randomblob({}))", 100 + round);
    ASSERT_TRUE(b.Exec(sql.c_str()).ok());
  }
  EXPECT_EQ(test::PlainInt(path_, "SELECT count(*) FROM t"), 6);
  EXPECT_EQ(test::PlainText(path_, "PRAGMA integrity_check"), "ok");
  auto n = a.QueryInt("SELECT count(*) FROM t");
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(*n, 6);
}

// Frames a transaction spilled stay its own until it ends: another thread's
// connections change locks (here, a read on another thread) without writing
// them out, so they never wait on that transaction's buffer; the
// transaction's own commit or rollback writes them before it lets go of the
// write lock.
TEST_F(WalVfsTest, SpilledFramesWaitForTheirOwnTransaction) {
  Db a;
  ASSERT_TRUE(a.Open(path_, true).ok());
  ASSERT_TRUE(a.Exec("PRAGMA journal_mode = WAL").ok());
  ASSERT_TRUE(a.Exec("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)").ok());
  ASSERT_TRUE(a.Exec("PRAGMA cache_size = 10").ok());  // pages: forces spills
  const std::string wal = path_ + "-wal";
  auto read_on_another_thread = [&](std::int64_t* rows) {
    std::thread([&] {
      Db b;
      ASSERT_TRUE(b.Open(path_, false).ok());
      auto n = b.QueryInt("SELECT count(*) FROM t");
      ASSERT_TRUE(n.has_value());
      *rows = *n;
    }).join();
  };
  for (const char* end : {"ROLLBACK", "COMMIT"}) {
    ASSERT_TRUE(a.Exec("BEGIN IMMEDIATE").ok());
    ASSERT_TRUE(a.Exec("INSERT INTO t(v) SELECT randomblob(3000) FROM "
                       "(WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                       "WHERE x < 40) SELECT x FROM c)")
                    .ok());
    const auto before = std::filesystem::file_size(wal);
    std::int64_t rows = -1;
    read_on_another_thread(&rows);
    EXPECT_EQ(rows, 0);
    EXPECT_EQ(std::filesystem::file_size(wal), before) << end;
    ASSERT_TRUE(a.Exec(end).ok());
    EXPECT_GT(std::filesystem::file_size(wal), before) << end;  // written by its own end
  }
  std::int64_t rows = -1;
  read_on_another_thread(&rows);
  EXPECT_EQ(rows, 40);
  EXPECT_EQ(test::PlainText(path_, "PRAGMA integrity_check"), "ok");
}

// Writes through the Store keep the WAL bounded without SQLite's
// autocheckpoint, and every write stays readable.
TEST_F(WalVfsTest, CheckpointerKeepsTheWalBounded) {
  {
    auto store = Store::Open(path_);
    ASSERT_TRUE(store.has_value()) << store.error().ToString();
    auto ns = (*store)->Namespace("default");
    ASSERT_TRUE(ns.has_value());
    const std::string body(3000, 'x');
    std::uintmax_t max_wal = 0;
    for (int i = 0; i < 6000; ++i) {
      auto w = (*store)->PutFile(*ns, fmt::format("/memories/f{}.md", i % 50),
                                 body + std::to_string(i));
      ASSERT_TRUE(w.has_value()) << w.error().ToString();
      // After every write: the peak lasts one commit (the next one restarts
      // the WAL and cuts the file back to journal_size_limit).
      max_wal = std::max(max_wal, std::filesystem::file_size(path_ + "-wal"));
    }
    // Frames of 4 KiB pages plus headers. The inline bound is checked after
    // each commit, and an inline checkpoint waits for a background pass that
    // is already running rather than let the WAL grow while that pass copies,
    // so the WAL passes the bound by one commit's frames at most (a few here).
    // Without checkpoints it would pass 40,000 frames here.
    EXPECT_LT(max_wal, static_cast<std::uintmax_t>(Checkpointer::kInlineFrames + 64) * 4120);
    EXPECT_GT(max_wal, 0u);
    auto r = (*store)->ReadFile(*ns, "/memories/f49.md");
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(*r, body + "5999");
  }
  EXPECT_EQ(test::PlainText(path_, "PRAGMA integrity_check"), "ok");
}

// A forked child holds a copy of the Checkpointer but not its thread:
// destroying the copy must not wait for a thread that does not exist there.
TEST_F(WalVfsTest, ACheckpointerCopiedByForkIsDestroyedWithoutJoining) {
  Db db;
  ASSERT_TRUE(db.Open(path_, true).ok());
  ASSERT_TRUE(db.Exec("PRAGMA journal_mode = WAL").ok());
  ASSERT_TRUE(db.Exec("PRAGMA synchronous = OFF").ok());
  // The checkpoint thread's connection may hold the WAL write lock for a
  // moment when it reads a header a commit is rewriting.
  ASSERT_TRUE(db.Exec("PRAGMA busy_timeout = 5000").ok());
  ASSERT_TRUE(db.Exec("CREATE TABLE t(v BLOB)").ok());
  auto checkpointer = std::make_unique<Checkpointer>(path_);
  checkpointer->Attach(&db);
  for (int i = 0; i < 3 * Checkpointer::kBackgroundFrames; ++i) {
    Status s = db.Exec("INSERT INTO t VALUES(randomblob(3000))");  // starts the thread
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  pid_t pid = fork();
  if (pid == 0) {
    checkpointer.reset();
    _exit(0);
  }
  ASSERT_GT(pid, 0);
  int status = -1;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      FAIL() << "the child hung destroying its Checkpointer";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  checkpointer.reset();  // the parent's thread stops and joins
}

}  // namespace
}  // namespace grainstore
