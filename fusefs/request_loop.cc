// RequestLoop: one reader at a time on a non-blocking /dev/fuse, workers
// parked on a condition variable, and a watcher on the calling thread
// (request_loop.h).
#include "request_loop.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "log.h"

namespace fusefs {
namespace {

using Clock = std::chrono::steady_clock;

// The watcher looks every tick while a handler runs or a request came within
// kWatchAfterRequest; otherwise it sleeps until a handler starts.
constexpr int kWatchTickMs = 1;
constexpr auto kWatchAfterRequest = std::chrono::milliseconds(20);
// Each worker's thread name (top -H, /proc/PID/task/TID/comm).
constexpr char kWorkerName[] = "areev-worker";
// How many requests in a row a reader must find waiting as soon as it looks
// before it calls in another reader.
constexpr unsigned kQueuedRun = 3;

void Post(int event_fd) {
  const std::uint64_t one = 1;
  (void)!write(event_fd, &one, sizeof one);
}

void Drain(int event_fd) {
  std::uint64_t count;
  (void)!read(event_fd, &count, sizeof count);
}

class RequestLoop {
 public:
  RequestLoop(fuse_session* se, const RequestLoopOptions& options)
      : se_(se), options_(options), fd_(fuse_session_fd(se)) {}
  RequestLoop(const RequestLoop&) = delete;
  RequestLoop& operator=(const RequestLoop&) = delete;
  ~RequestLoop() {
    if (stop_fd_ >= 0) close(stop_fd_);
    if (watch_fd_ >= 0) close(watch_fd_);
  }

  int Run();

 private:
  // One worker: parked until called in, then a reader until it finishes a
  // handler while another worker reads.
  void Work();
  // The next request into `buf` (its size), 0 once the loop ends, or a
  // negative errno. `look`: look for it for options_.look_for before
  // sleeping. `*at_once`: it was there at the first look.
  int Receive(fuse_buf* buf, bool look, bool* at_once);
  // The calling thread, until the loop ends.
  void Watch();
  // Whether a request waits on /dev/fuse.
  bool RequestWaiting() const;
  void CallInReaderLocked();
  bool StartWorkerLocked();
  void EndLocked(int error);

  fuse_session* const se_;
  const RequestLoopOptions options_;
  const int fd_;
  int stop_fd_ = -1;   // eventfd, readable once the loop ends
  int watch_fd_ = -1;  // eventfd, wakes the watcher
  std::atomic<bool> stopping_{false};  // stop_, read by readers without the lock

  std::mutex mu_;
  std::condition_variable parked_cv_;
  // Guarded by mu_.
  std::vector<std::thread> threads_;
  unsigned parked_ = 0;    // workers waiting on parked_cv_
  unsigned calls_ = 0;     // workers called in to read, not yet reading
  unsigned looking_ = 0;   // readers reading, or waiting for a request
  unsigned handling_ = 0;  // workers in a handler
  Clock::time_point last_start_{};  // when the latest handler started
  bool watcher_asleep_ = false;
  bool start_failed_ = false;
  bool stop_ = false;
  int error_ = 0;
};

int RequestLoop::Run() {
  const int flags = fcntl(fd_, F_GETFL);
  if (flags < 0 || fcntl(fd_, F_SETFL, flags | O_NONBLOCK) != 0) return -errno;
  stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  watch_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd_ < 0 || watch_fd_ < 0) {
    const int err = errno;
    (void)fcntl(fd_, F_SETFL, flags);
    return -err;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++calls_;
    if (!StartWorkerLocked()) EndLocked(-EAGAIN);
  }
  Watch();
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    threads = std::move(threads_);  // none starts once stop_ is set
  }
  for (std::thread& t : threads) t.join();
  (void)fcntl(fd_, F_SETFL, flags);
  fuse_session_reset(se_);
  return error_;
}

void RequestLoop::Work() {
  pthread_setname_np(pthread_self(), kWorkerName);
  fuse_buf buf{};
  bool reader = false;
  bool look = false;
  unsigned queued_run = 0;  // requests in a row found at the first look
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (!reader) {
      ++parked_;
      parked_cv_.wait(lock, [this] { return stop_ || calls_ > 0; });
      --parked_;
      if (stop_) break;
      --calls_;
      reader = true;
      look = false;
      queued_run = 0;
    }
    ++looking_;
    lock.unlock();
    bool at_once = false;
    const int got = Receive(&buf, look, &at_once);
    lock.lock();
    --looking_;
    if (got <= 0) {
      EndLocked(got);
      break;
    }
    ++handling_;
    last_start_ = Clock::now();
    // Requests were there each time this reader looked: clients send in
    // parallel, and a second reader shares the queue. (One at a time is
    // common with a single client: 1,197 in 1,000 open-append-close cycles.)
    queued_run = at_once ? queued_run + 1 : 0;
    if (queued_run >= kQueuedRun && looking_ + calls_ == 0) CallInReaderLocked();
    if (watcher_asleep_) {
      watcher_asleep_ = false;
      Post(watch_fd_);
    }
    lock.unlock();
    fuse_session_process_buf(se_, &buf);
    lock.lock();
    --handling_;
    look = true;
    if (looking_ + calls_ > 0) reader = false;  // another worker reads
  }
  lock.unlock();
  std::free(buf.mem);
}

int RequestLoop::Receive(fuse_buf* buf, bool look, bool* at_once) {
  const Clock::time_point until = look ? Clock::now() + options_.look_for : Clock::time_point{};
  for (bool first = true;; first = false) {
    const int got = fuse_session_receive_buf(se_, buf);
    if (got > 0) {
      *at_once = look && first;
      return got;
    }
    // 0: the session exited (an unmount, or fuse_session_exit).
    if (got == 0 || (got != -EAGAIN && got != -EINTR)) return got;
    if (stopping_.load(std::memory_order_relaxed)) return 0;
    if (got == -EINTR) continue;
    if (look && Clock::now() < until) {
      sched_yield();  // another runnable thread on this CPU (the client) goes first
      continue;
    }
    pollfd fds[2] = {{fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0 && errno != EINTR) return -errno;
    // The read says what woke it: a request, another reader's (EAGAIN), an
    // unmount (ENODEV, the session then exited) or the loop's end.
  }
}

void RequestLoop::Watch() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    // A stop signal set this, then interrupted the poll below (StopSignals).
    if (fuse_session_exited(se_)) {
      EndLocked(0);
      break;
    }
    const Clock::time_point now = Clock::now();
    const bool active = handling_ > 0 || now - last_start_ < kWatchAfterRequest;
    if (handling_ > 0 && looking_ + calls_ == 0 && now - last_start_ >= options_.stuck_after &&
        RequestWaiting()) {
      CallInReaderLocked();
    }
    watcher_asleep_ = !active;
    lock.unlock();
    pollfd woken{watch_fd_, POLLIN, 0};
    (void)poll(&woken, 1, active ? kWatchTickMs : -1);
    Drain(watch_fd_);
    lock.lock();
    watcher_asleep_ = false;
  }
}

bool RequestLoop::RequestWaiting() const {
  pollfd device{fd_, POLLIN, 0};
  return poll(&device, 1, 0) > 0 && (device.revents & POLLIN) != 0;
}

void RequestLoop::CallInReaderLocked() {
  if (stop_) return;
  ++calls_;
  if (parked_ >= calls_) {
    parked_cv_.notify_one();
    return;
  }
  if (threads_.size() < options_.max_workers && StartWorkerLocked()) return;
  --calls_;  // every worker is busy: the readers there are keep reading
}

bool RequestLoop::StartWorkerLocked() {
  // Workers take no signals: a stop signal must reach the watcher, whose
  // wait it ends (StopSignals), as libfuse's workers block them all.
  sigset_t all;
  sigset_t old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  bool started = true;
  try {
    threads_.emplace_back([this] { Work(); });
  } catch (const std::system_error& e) {
    started = false;
    if (!start_failed_) {
      Log(LogLevel::kWarning, "request loop: cannot start a worker ({} running): {}",
          threads_.size(), e.what());
    }
    start_failed_ = true;
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return started;
}

void RequestLoop::EndLocked(int error) {
  if (error < 0 && error_ == 0) error_ = error;
  if (stop_) return;
  stop_ = true;
  stopping_.store(true, std::memory_order_relaxed);
  fuse_session_exit(se_);  // a reader that reads a request now drops it, as libfuse's do
  Post(stop_fd_);
  Post(watch_fd_);
  parked_cv_.notify_all();
}

}  // namespace

int RunRequestLoop(fuse_session* se, const RequestLoopOptions& options) {
  RequestLoop loop(se, options);
  return loop.Run();
}

}  // namespace fusefs
