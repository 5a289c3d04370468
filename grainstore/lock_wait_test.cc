// A write waiting for another connection's write lock (a process stopped
// while it holds it) does not hold the Store's mutex all the while: the
// Store's other callers' reads answer at once, and its other writes wait
// alongside it, each up to the busy timeout from its own start.
#include <sqlite3.h>

#include <chrono>
#include <future>
#include <thread>
#include <utility>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "grainstore/store.h"
#include "test_util.h"

namespace grainstore {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

TEST(LockWaitTest, WritesWaitingForAnotherConnectionDoNotQueueTheStore) {
  test::ScratchDir dir("grainstore_lock_wait");
  const std::string path = dir.File("agent.db");
  Options options;
  options.busy_timeout_ms = 1000;
  auto opened = Store::Open(path, options);
  ASSERT_TRUE(opened.has_value()) << opened.error().ToString();
  Store& store = **opened;
  auto ns = store.Namespace("default");
  ASSERT_TRUE(ns.has_value());
  ASSERT_TRUE(store.PutFile(*ns, "/memories/a.md", "a\n").has_value());

  sqlite3* holder = nullptr;  // another program, stopped mid-write
  ASSERT_EQ(sqlite3_open(path.c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);

  const auto start = Clock::now();
  std::vector<std::future<std::pair<StatusCode, double>>> writers;
  for (int i = 0; i < 3; ++i) {
    writers.push_back(std::async(std::launch::async, [&, i] {
      auto put = store.PutFile(*ns, "/memories/w" + std::to_string(i) + ".md", "w\n");
      return std::make_pair(put ? StatusCode::kOk : put.error().code(), Since(start));
    }));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the writers wait
  const auto read_start = Clock::now();
  auto read = store.ReadFile(*ns, "/memories/a.md");
  const double read_took = Since(read_start);
  ASSERT_TRUE(read.has_value()) << read.error().ToString();
  EXPECT_EQ(*read, "a\n");
  EXPECT_LT(read_took, 0.5);  // it waited out a writer's whole timeout before
  for (auto& w : writers) {
    auto [code, took] = w.get();
    EXPECT_EQ(code, StatusCode::kBusy);
    EXPECT_GE(took, 0.9);
    EXPECT_LT(took, 1.8) << "each write waits its own timeout, not the one before it too";
  }
  ASSERT_EQ(sqlite3_exec(holder, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(holder);
  ASSERT_TRUE(store.PutFile(*ns, "/memories/w0.md", "w\n").has_value());  // it goes on
  auto w0 = store.ReadFile(*ns, "/memories/w0.md");
  ASSERT_TRUE(w0.has_value());
  EXPECT_EQ(*w0, "w\n");
}

// A write that finds the lock taken succeeds once the holder lets go within
// the timeout.
TEST(LockWaitTest, AWriteWaitsForTheLockToBeFreed) {
  test::ScratchDir dir("grainstore_lock_wait");
  const std::string path = dir.File("agent.db");
  auto opened = Store::Open(path);
  ASSERT_TRUE(opened.has_value());
  Store& store = **opened;
  auto ns = store.Namespace("default");
  ASSERT_TRUE(ns.has_value());
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  auto writer = std::async(std::launch::async, [&] {
    return store.PutFile(*ns, "/memories/late.md", "late\n").has_value();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(sqlite3_exec(holder, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(holder);
  EXPECT_TRUE(writer.get());
  auto late = store.ReadFile(*ns, "/memories/late.md");
  ASSERT_TRUE(late.has_value());
  EXPECT_EQ(*late, "late\n");
}

}  // namespace
}  // namespace grainstore
