// StopSignals: the stop signals wake a thread through a pipe, and that thread
// ends the session loop once the caller's `before_exit` has run.
#include "stop_signals.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iterator>
#include <utility>

#include <fmt/format.h>

namespace fusefs {
namespace {

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};
// Ignored: a reader gone from a pipe (as libfuse does), and a write past the
// process's file-size limit (ulimit -f), which then fails with EFBIG and
// fails one save instead of ending the mount with every unsaved draft.
constexpr int kIgnoredSignals[] = {SIGPIPE, SIGXFSZ};
constexpr int kStops = std::size(kStopSignals);

int HandledSignal(int i) { return i < kStops ? kStopSignals[i] : kIgnoredSignals[i - kStops]; }
// Written by Finish; no signal has the number 0.
constexpr unsigned char kFinishByte = 0;
// How often the loop's thread is woken again until its loop returns: a wake
// that lands just before the loop goes to sleep is lost.
constexpr int kRewakeMs = 20;

volatile sig_atomic_t g_write_fd = -1;

void OnStopSignal(int sig) {
  const int saved = errno;
  const unsigned char byte = static_cast<unsigned char>(sig);
  // A full pipe already holds a stop; nothing is lost by dropping this one.
  ssize_t written = write(g_write_fd, &byte, 1);
  (void)written;
  errno = saved;
}

// Moves `fd` above the standard descriptors: a daemon started with one of
// them closed would get the pipe there, and fuse_daemonize points 0-2 at
// /dev/null. -1 on failure (errno set); `fd` is closed either way.
int AboveStandardFds(int fd) {
  if (fd > STDERR_FILENO) return fd;
  const int moved = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
  const int saved = errno;
  close(fd);
  errno = saved;
  return moved;
}

}  // namespace

std::unique_ptr<StopSignals> StopSignals::Install(fuse_session* se, std::string* error) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    *error = fmt::format("cannot make the stop signals' pipe: {}", std::strerror(errno));
    return nullptr;
  }
  fds[0] = AboveStandardFds(fds[0]);
  const int read_errno = errno;
  fds[1] = AboveStandardFds(fds[1]);
  if (fds[0] < 0 || fds[1] < 0) {
    const int why = fds[0] < 0 ? read_errno : errno;
    if (fds[0] >= 0) close(fds[0]);
    if (fds[1] >= 0) close(fds[1]);
    *error = fmt::format("cannot make the stop signals' pipe: {}", std::strerror(why));
    return nullptr;
  }
  std::unique_ptr<StopSignals> stop(new StopSignals(se, fds[0], fds[1]));
  g_write_fd = fds[1];
  struct sigaction on_stop {};
  on_stop.sa_handler = OnStopSignal;
  sigemptyset(&on_stop.sa_mask);
  on_stop.sa_flags = 0;  // no SA_RESTART: the signal must end the loop's wait
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  static_assert(std::size(kStopSignals) + std::size(kIgnoredSignals) == kHandled);
  for (int i = 0; i < kHandled; ++i) {
    const int sig = HandledSignal(i);
    if (sigaction(sig, i < kStops ? &on_stop : &ignore, &stop->old_[i]) != 0) {
      *error = fmt::format("cannot handle signal {}: {}", sig, std::strerror(errno));
      return nullptr;  // the destructor puts back those already set
    }
    stop->installed_ = i + 1;
  }
  return stop;
}

StopSignals::StopSignals(fuse_session* se, int read_fd, int write_fd)
    : se_(se), read_fd_(read_fd), write_fd_(write_fd) {}

StopSignals::~StopSignals() {
  Finish();
  for (int i = 0; i < installed_; ++i) {
    sigaction(HandledSignal(i), &old_[i], nullptr);
  }
  g_write_fd = -1;
  close(read_fd_);
  close(write_fd_);
}

void StopSignals::Start(std::function<void()> before_exit) {
  before_exit_ = std::move(before_exit);
  loop_thread_ = pthread_self();
  thread_ = std::thread([this] { Run(); });
}

bool StopSignals::Finish() {
  if (thread_.joinable()) {
    const unsigned char byte = kFinishByte;
    // EAGAIN: a pipe full of signals, which the thread is draining.
    while (write(write_fd_, &byte, 1) != 1) {
      if (errno != EINTR && errno != EAGAIN) break;
      if (errno == EAGAIN) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    thread_.join();
  }
  return signalled_.load();
}

bool StopSignals::Wait(int timeout_ms, bool* signalled) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    int wait_ms = -1;
    if (timeout_ms >= 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      wait_ms = static_cast<int>(left.count());
    }
    pollfd pfd{read_fd_, POLLIN, 0};
    if (poll(&pfd, 1, wait_ms) < 0 && errno != EINTR) return false;
    unsigned char bytes[64];
    ssize_t n;
    while ((n = read(read_fd_, bytes, sizeof bytes)) > 0) {
      for (ssize_t i = 0; i < n; ++i) {
        if (bytes[i] == kFinishByte) return true;
        *signalled = true;
      }
    }
    // The write end is ours while this runs, so the pipe cannot end; if it
    // did, waiting on would spin.
    if (n == 0) return true;
    // Without a deadline, any signal ends the wait; with one (the rewake
    // loop, whose own wakes write bytes here), only the deadline does.
    if (timeout_ms < 0 && *signalled) return false;
  }
}

void StopSignals::Run() {
  // Process-wide stop signals go to the loop's thread, whose wait they end.
  sigset_t stops;
  sigemptyset(&stops);
  for (int sig : kStopSignals) sigaddset(&stops, sig);
  pthread_sigmask(SIG_BLOCK, &stops, nullptr);
  bool signalled = false;
  if (Wait(-1, &signalled)) return;  // the loop ended first (an unmount)
  signalled_.store(true);
  if (before_exit_) before_exit_();
  fuse_session_exit(se_);
  // The request loop's watcher sleeps in poll(2), libfuse's single-threaded
  // loop (-s) in a read of /dev/fuse; a signal to that thread ends either.
  for (;;) {
    pthread_kill(loop_thread_, SIGTERM);
    bool ignored = false;
    if (Wait(kRewakeMs, &ignored)) return;
  }
}

}  // namespace fusefs
