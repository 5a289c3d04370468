// Held reads (Db, "Held reads"; ReadReleaser): a read transaction kept open
// between reads must never show a connection anything older than a new one
// would, never swallow a write, and never pin the WAL once idle.
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdarg>
#include <functional>
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "db.h"
#include "grainstore/store.h"
#include "store_fixture.h"
#include "test_util.h"

namespace grainstore {
namespace {

bool HoldAlways(void*) { return true; }
bool HoldNever(void*) { return false; }

// Tries a TRUNCATE checkpoint through SQLite's default VFS every 10 ms, with
// no busy timeout, until one succeeds or `limit` passes.
bool TruncatesWithin(const std::string& path, std::chrono::milliseconds limit) {
  sqlite3* raw = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  // A connection checkpoints only a WAL it has opened, which takes a read.
  EXPECT_EQ(sqlite3_exec(raw, "SELECT count(*) FROM sqlite_schema", nullptr, nullptr, nullptr),
            SQLITE_OK);
  bool truncated = false;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!truncated && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    int rc = sqlite3_wal_checkpoint_v2(raw, nullptr, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr);
    EXPECT_TRUE(rc == SQLITE_OK || rc == SQLITE_BUSY) << sqlite3_errstr(rc);
    truncated = rc == SQLITE_OK;
  }
  sqlite3_close(raw);
  return truncated;
}

class HeldReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(a_.Open(path_, true).ok());
    ASSERT_TRUE(a_.Exec("PRAGMA journal_mode = WAL").ok());
    ASSERT_TRUE(a_.Exec("CREATE TABLE t(x INTEGER)").ok());
    ASSERT_TRUE(b_.Open(path_, false).ok());
    a_.SetHoldHook(&HoldAlways, nullptr, std::chrono::hours(1));
  }

  // count(*) of t through a read Transaction on `db`.
  static std::int64_t CountInTxn(Db* db) {
    Transaction txn(db);
    EXPECT_TRUE(txn.Begin(Transaction::Kind::kRead).ok());
    const std::int64_t n = Count(db);  // the Statement ends before Commit
    EXPECT_TRUE(txn.Commit().ok());
    return n;
  }

  // count(*) of t by one statement, in the transaction open on `db` if any.
  static std::int64_t Count(Db* db) {
    auto st = db->Prepare(kCount);
    EXPECT_TRUE(st.has_value());
    EXPECT_EQ(st->Step(), StepResult::kRow);
    return st->ColumnInt64(0);
  }

  static constexpr char kCount[] = "SELECT count(*) FROM t";
  static constexpr char kInsert[] = "INSERT INTO t VALUES (1)";

  test::ScratchDir dir_{"held_read_test"};
  std::string path_ = dir_.File("h.db");
  Db a_;
  Db b_;
};

TEST_F(HeldReadTest, OnlyAHookHoldsARead) {
  Db plain;
  ASSERT_TRUE(plain.Open(path_, false).ok());
  EXPECT_EQ(CountInTxn(&plain), 0);
  EXPECT_FALSE(plain.holding_read());
  plain.SetHoldHook(&HoldNever, nullptr, std::chrono::hours(1));
  EXPECT_EQ(CountInTxn(&plain), 0);
  EXPECT_FALSE(plain.holding_read());
  EXPECT_EQ(CountInTxn(&a_), 0);
  EXPECT_TRUE(a_.holding_read());
  EXPECT_TRUE(a_.EndHeldRead().ok());
  EXPECT_FALSE(a_.holding_read());
}

TEST_F(HeldReadTest, EveryReadSeesWhatOthersCommitted) {
  for (int i = 1; i <= 20; ++i) {
    ASSERT_TRUE(b_.Exec(kInsert).ok());
    EXPECT_EQ(CountInTxn(&a_), i) << "read transaction " << i;
    EXPECT_TRUE(a_.holding_read());
    EXPECT_EQ(Count(&a_), i) << "statement " << i;
  }
}

TEST_F(HeldReadTest, ACurrentHeldReadServesReadOnlyStatements) {
  ASSERT_TRUE(b_.Exec(kInsert).ok());
  EXPECT_EQ(CountInTxn(&a_), 1);
  EXPECT_EQ(Count(&a_), 1);
  EXPECT_TRUE(a_.holding_read());  // nothing committed: still held
  EXPECT_EQ(CountInTxn(&a_), 1);
  EXPECT_TRUE(a_.holding_read());
  ASSERT_TRUE(b_.Exec(kInsert).ok());
  EXPECT_EQ(Count(&a_), 2);
  EXPECT_FALSE(a_.holding_read());  // moved: the statement ran on its own
}

TEST_F(HeldReadTest, AnOldHeldReadIsNotReused) {
  // A connection that reads without pause must still let its read go now
  // and then, so that other connections can restart the WAL.
  a_.SetHoldHook(&HoldAlways, nullptr, std::chrono::milliseconds(50));
  EXPECT_EQ(CountInTxn(&a_), 0);
  EXPECT_EQ(Count(&a_), 0);
  EXPECT_TRUE(a_.holding_read());  // young: reused
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  EXPECT_EQ(Count(&a_), 0);
  EXPECT_FALSE(a_.holding_read());  // old: ended, the statement ran on its own
}

TEST_F(HeldReadTest, WritesEndTheHeldReadAndCommitAtOnce) {
  EXPECT_EQ(CountInTxn(&a_), 0);
  ASSERT_TRUE(a_.holding_read());
  // A statement that writes runs outside the held read, so it commits now.
  {
    auto st = a_.Prepare(kInsert);
    ASSERT_TRUE(st.has_value());
    ASSERT_TRUE(st->Run().ok());
  }
  EXPECT_FALSE(a_.holding_read());
  EXPECT_EQ(Count(&b_), 1);
  // So does a write transaction begun while a read is held.
  EXPECT_EQ(CountInTxn(&a_), 1);
  ASSERT_TRUE(a_.holding_read());
  {
    Transaction txn(&a_);
    ASSERT_TRUE(txn.Begin().ok());
    ASSERT_TRUE(a_.Exec(kInsert).ok());
    ASSERT_TRUE(txn.Commit().ok());
  }
  EXPECT_FALSE(a_.holding_read());
  EXPECT_EQ(Count(&b_), 2);
  // And SQL text run outside a transaction.
  EXPECT_EQ(CountInTxn(&a_), 2);
  ASSERT_TRUE(a_.holding_read());
  ASSERT_TRUE(a_.Exec(kInsert).ok());
  EXPECT_FALSE(a_.holding_read());
  EXPECT_EQ(Count(&b_), 3);
}

TEST_F(HeldReadTest, ARolledBackReadHoldsNothing) {
  EXPECT_EQ(CountInTxn(&a_), 0);
  ASSERT_TRUE(a_.holding_read());
  {
    Transaction txn(&a_);
    ASSERT_TRUE(txn.Begin(Transaction::Kind::kRead).ok());  // reuses the held read
  }  // rolled back
  EXPECT_FALSE(a_.holding_read());
  ASSERT_TRUE(b_.Exec(kInsert).ok());
  EXPECT_EQ(CountInTxn(&a_), 1);
}

// A Store's idle held read is ended by its ReadReleaser, so another program
// can then restart the WAL: files read and then left alone do not pin it.
class StoreHeldReadTest : public test::StoreFixture {};

TEST_F(StoreHeldReadTest, AnIdleStoreLetsOthersTruncateTheWal) {
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(
        store_->PutFile(ns_, "/memories/f" + std::to_string(i) + ".md", "body\n").has_value());
  }
  auto other = Store::Open(path_);
  ASSERT_TRUE(other.has_value());
  NsId ons = *(*other)->Namespace("default");
  ASSERT_TRUE((*other)->PutFile(ons, "/memories/g.md", "theirs\n").has_value());
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(store_->ReadFile(ns_, "/memories/f" + std::to_string(i) + ".md").has_value());
  }
  EXPECT_EQ(*store_->ReadFile(ns_, "/memories/g.md"), "theirs\n");
  EXPECT_TRUE(TruncatesWithin(path_, std::chrono::seconds(5)));
  struct stat wal {};
  ASSERT_EQ(stat((path_ + "-wal").c_str(), &wal), 0);
  EXPECT_EQ(wal.st_size, 0);
}

// A Store that reads without pause still lets its held read go every
// kMaxAge, so another program's TRUNCATE gets through.
TEST_F(StoreHeldReadTest, ABusyReaderLetsOthersTruncateTheWal) {
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/a.md", "mine\n").has_value());
  auto other = Store::Open(path_);
  ASSERT_TRUE(other.has_value());
  NsId ons = *(*other)->Namespace("default");
  ASSERT_TRUE((*other)->PutFile(ons, "/memories/g.md", "theirs\n").has_value());
  ASSERT_EQ(*store_->ReadFile(ns_, "/memories/g.md"), "theirs\n");  // holds a read
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done.load()) {  // read-only statements keep a current held read in use
      if (!store_->StatKey(ns_, "/memories/a.md").has_value()) ADD_FAILURE();
    }
  });
  EXPECT_TRUE(TruncatesWithin(path_, std::chrono::seconds(3)));
  done = true;
  reader.join();
}

// Counts the fcntl calls SQLite's unix VFS makes (its lock calls) while it
// is alive, through the VFS's own system-call override.
class FcntlCounter {
 public:
  FcntlCounter() : vfs_(sqlite3_vfs_find("unix")) {
    real_ = vfs_->xGetSystemCall(vfs_, "fcntl");
    calls_ = 0;
    EXPECT_EQ(vfs_->xSetSystemCall(vfs_, "fcntl", reinterpret_cast<sqlite3_syscall_ptr>(&Count)),
              SQLITE_OK);
  }
  ~FcntlCounter() { vfs_->xSetSystemCall(vfs_, "fcntl", nullptr); }
  int calls() const { return calls_.load(); }

 private:
  static int Count(int fd, int op, ...) {
    va_list ap;
    va_start(ap, op);
    void* arg = va_arg(ap, void*);
    va_end(ap);
    ++calls_;
    return reinterpret_cast<int (*)(int, int, ...)>(real_)(fd, op, arg);
  }
  sqlite3_vfs* vfs_;
  static inline sqlite3_syscall_ptr real_ = nullptr;
  static inline std::atomic<int> calls_{0};
};

// The mount's lookups, attribute reads, listings and body reads run in read
// transactions, so a stream of any one of them reuses one held read instead
// of taking and dropping a lock for each call (git stats every file of a
// tree at once, and nothing else starts a read then).
TEST_F(StoreHeldReadTest, AStreamOfNodeReadsTakesNoLockPerCall) {
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/a.md", "body\n").has_value());
  const NodeId dir = *store_->RootId(ns_);  // the node of /memories
  auto a = store_->Lookup(dir, "a.md");
  ASSERT_TRUE(a.has_value()) << a.error().ToString();
  const NodeId file = a->id;
  const std::vector<std::pair<std::string, std::function<bool()>>> reads = {
      {"Lookup", [&] { return store_->Lookup(dir, "a.md").has_value(); }},
      {"Lookup of a missing name", [&] { return store_->Lookup(dir, "no.md").error().IsNotFound(); }},
      {"GetNode", [&] { return store_->GetNode(file).has_value(); }},
      {"ReadDir", [&] { return store_->ReadDir(dir, "", 10)->size() == 2; }},
      {"ReadBody", [&] { return *store_->ReadBody(file) == "body\n"; }},
      {"StatKey", [&] { return store_->StatKey(ns_, "/memories/a.md").has_value(); }},
  };
  constexpr int kCalls = 200;
  for (const auto& [name, read] : reads) {
    // A commit ends any held read: the stream starts without one.
    ASSERT_TRUE(store_->PutFile(ns_, "/memories/b.md", name).has_value());
    FcntlCounter counter;
    for (int i = 0; i < kCalls; ++i) ASSERT_TRUE(read()) << name;
    // A read of its own takes a lock and drops it: two calls each. A held
    // read is renewed every ReadReleaser::kMaxAge, or after kIdle.
    EXPECT_LT(counter.calls(), kCalls / 4) << name;
  }
}

// Issue: a read that reused the held read took the header as it was after
// BEGIN for what it had seen; a commit landing in between was then counted as
// seen while the read's snapshot (and its data_version) came from before it,
// and the Store's read cache served the old body until the next commit.
TEST_F(HeldReadTest, AReusedHeldReadNamesTheHeaderFromBeforeItsSnapshot) {
  ASSERT_TRUE(b_.Exec(kInsert).ok());
  EXPECT_EQ(CountInTxn(&a_), 1);
  ASSERT_TRUE(a_.holding_read());
  const WalStamp held = a_.SnapshotStamp();  // outside a transaction: the header now
  Transaction txn(&a_);
  ASSERT_TRUE(txn.Begin(Transaction::Kind::kRead).ok());  // reuses the held read
  ASSERT_TRUE(b_.Exec(kInsert).ok());
  EXPECT_EQ(Count(&a_), 1);  // the snapshot is from before b_'s second insert
  const WalStamp now = a_.ReadWalStamp();
  ASSERT_TRUE(now.valid);
  EXPECT_FALSE(SameWalState(now, held));
  EXPECT_TRUE(SameWalState(a_.SnapshotStamp(), held));
  ASSERT_TRUE(txn.Commit().ok());
  EXPECT_TRUE(SameWalState(a_.SnapshotStamp(), now));  // outside again
  EXPECT_EQ(CountInTxn(&a_), 2);
}

}  // namespace
}  // namespace grainstore
