// How the daemon stops on SIGINT, SIGTERM and SIGHUP. libfuse's own handlers
// end the session loop at once, and the loop then cancels its workers. The
// poller (coherence.h) may at that moment be in the kernel, dropping a name
// another process changed: that waits for the directory's lock, which a
// lookup holds until the daemon answers it, and no worker is left to answer,
// so the daemon could never exit (docs/fusefs.md, "Crash safety"). Here a
// signal only wakes a thread of ours, which runs the caller's `before_exit`
// (stopping the poller) while the workers still answer requests, and only
// then ends the loop.
#ifndef FUSEFS_STOP_SIGNALS_H_
#define FUSEFS_STOP_SIGNALS_H_

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace fusefs {

class StopSignals {
 public:
  // Installs the handlers of the three stop signals, and ignores SIGPIPE (as
  // libfuse does) and SIGXFSZ (a save past `ulimit -f` fails with EFBIG).
  // Null, with the reason in `*error`, if that fails. One instance at a time.
  static std::unique_ptr<StopSignals> Install(fuse_session* se, std::string* error);

  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  // Finishes, then restores the handlers found at Install.
  ~StopSignals();

  // Starts the thread that waits for a stop signal (after fuse_daemonize:
  // threads do not cross fork). A signal that came earlier is acted on at
  // once. `before_exit` runs on that thread, before the session is told to
  // exit; the thread that runs the session loop must be the caller of Start.
  void Start(std::function<void()> before_exit);

  // Ends the thread; called once the session loop has returned. Whether a
  // signal stopped the daemon.
  bool Finish();

 private:
  StopSignals(fuse_session* se, int read_fd, int write_fd);
  void Run();
  // Waits up to `timeout_ms` (-1: without end) for bytes on the pipe; true if
  // they include the byte Finish writes.
  bool Wait(int timeout_ms, bool* signalled);

  fuse_session* const se_;
  const int read_fd_;
  const int write_fd_;
  // The signals it handles: SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ.
  static constexpr int kHandled = 5;
  struct sigaction old_[kHandled] = {};
  int installed_ = 0;              // how many of old_ to put back
  pthread_t loop_thread_{};
  std::function<void()> before_exit_;
  std::thread thread_;
  std::atomic<bool> signalled_{false};
};

}  // namespace fusefs

#endif  // FUSEFS_STOP_SIGNALS_H_
