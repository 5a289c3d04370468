#include "stop_signals.h"

#include <fuse_lowlevel.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>

namespace fusefs {
namespace {

// A session that is never mounted: enough for fuse_session_exit/exited.
class Session {
 public:
  Session() {
    fuse_opt_add_arg(&args_, "stop_signals_test");
    const fuse_lowlevel_ops ops{};
    se_ = fuse_session_new(&args_, &ops, sizeof ops, nullptr);
  }
  ~Session() {
    if (se_) fuse_session_destroy(se_);
    fuse_opt_free_args(&args_);
  }
  fuse_session* get() const { return se_; }

 private:
  fuse_args args_ = FUSE_ARGS_INIT(0, nullptr);
  fuse_session* se_ = nullptr;
};

void (*HandlerOf(int sig))(int) {
  struct sigaction now {};
  sigaction(sig, nullptr, &now);
  return now.sa_handler;
}

class StopSignalsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(session_.get(), nullptr);
    std::string error;
    stop_ = StopSignals::Install(session_.get(), &error);
    ASSERT_TRUE(stop_) << error;
  }

  // Waits as the request loop's watcher does while no request comes: in
  // poll(2) on an eventfd that nothing posts, so only a signal to this thread
  // ends each wait.
  void WaitAsTheLoopDoes() {
    const int never = eventfd(0, EFD_CLOEXEC);
    ASSERT_GE(never, 0);
    while (!fuse_session_exited(session_.get())) {
      pollfd woken{never, POLLIN, 0};
      poll(&woken, 1, -1);
    }
    close(never);
  }

  Session session_;
  std::unique_ptr<StopSignals> stop_;
  std::atomic<int> calls_{0};
};

TEST_F(StopSignalsTest, ASignalRunsBeforeExitThenEndsTheLoopsWait) {
  std::atomic<bool> exited_first{true};
  stop_->Start([&] {
    exited_first = fuse_session_exited(session_.get()) != 0;
    ++calls_;
  });
  kill(getpid(), SIGTERM);
  WaitAsTheLoopDoes();
  EXPECT_TRUE(stop_->Finish());
  EXPECT_EQ(calls_.load(), 1);
  EXPECT_FALSE(exited_first.load()) << "the session was told to exit before before_exit ran";
}

TEST_F(StopSignalsTest, WithoutASignalFinishLeavesTheSessionAlone) {
  stop_->Start([&] { ++calls_; });
  EXPECT_FALSE(stop_->Finish());  // the loop ended first, as on an unmount
  EXPECT_EQ(calls_.load(), 0);
  EXPECT_EQ(fuse_session_exited(session_.get()), 0);
}

TEST_F(StopSignalsTest, ASignalBeforeStartIsActedOnAtStart) {
  raise(SIGHUP);  // before the daemon forks and starts the thread
  EXPECT_EQ(fuse_session_exited(session_.get()), 0);
  stop_->Start([&] { ++calls_; });
  WaitAsTheLoopDoes();
  EXPECT_TRUE(stop_->Finish());
  EXPECT_EQ(calls_.load(), 1);
}

TEST(StopSignalsHandlersTest, TheHandlersFoundAreRestored) {
  Session session;
  ASSERT_NE(session.get(), nullptr);
  const auto term = HandlerOf(SIGTERM);
  const auto pipe = HandlerOf(SIGPIPE);
  const auto fsize = HandlerOf(SIGXFSZ);
  {
    std::string error;
    std::unique_ptr<StopSignals> stop = StopSignals::Install(session.get(), &error);
    ASSERT_TRUE(stop) << error;
    EXPECT_NE(HandlerOf(SIGTERM), term);
    EXPECT_EQ(HandlerOf(SIGPIPE), SIG_IGN);
    EXPECT_EQ(HandlerOf(SIGXFSZ), SIG_IGN);
  }
  EXPECT_EQ(HandlerOf(SIGTERM), term);
  EXPECT_EQ(HandlerOf(SIGPIPE), pipe);
  EXPECT_EQ(HandlerOf(SIGXFSZ), fsize);
}

}  // namespace
}  // namespace fusefs
