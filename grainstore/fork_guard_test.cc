// fork() against Stores that other threads are opening and closing: the
// child must be able to open the store (fork_guard.h).
#include "fork_guard.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "grainstore/store.h"
#include "test_util.h"

namespace grainstore {
namespace {

// Waits up to `limit` for child `pid`; true if it exited with status 0. A
// child still running then is killed and counts as hung.
bool ChildSucceeded(pid_t pid, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = -1;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Issue: fork() waited only for registered Stores, so a Store still opening
// or already closing on another thread could hold SQLite's global or
// shared-memory mutex at the fork, and the child's first open hung (14 and
// 16 of these 60 children in two runs, unfixed).
TEST(ForkGuardTest, AChildForkedWhileOtherThreadsOpenAndCloseStoresCanOpenOne) {
  test::ScratchDir dir("fork_guard_test");
  const std::string path = dir.File("t.db");
  ASSERT_TRUE(Store::Open(path).has_value());
  std::atomic<bool> stop{false};
  std::vector<std::thread> churn;
  for (int i = 0; i < 2; ++i) {
    churn.emplace_back([&] {
      while (!stop) (void)Store::Open(path);  // opened, then closed at once
    });
  }
  int failed = 0;
  constexpr int kForks = 60;
  for (int i = 0; i < kForks; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const pid_t pid = fork();
    if (pid == 0) _exit(Store::Open(path).has_value() ? 0 : 1);
    if (pid < 0) {
      ADD_FAILURE() << "fork failed";
      break;
    }
    if (!ChildSucceeded(pid, std::chrono::seconds(3))) ++failed;
  }
  stop = true;
  for (std::thread& t : churn) t.join();
  EXPECT_EQ(failed, 0) << "of " << kForks << " children";
}

}  // namespace
}  // namespace grainstore
