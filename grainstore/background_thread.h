// A thread a Store component starts on first use and stops with itself: the
// checkpoint thread (checkpointer.h) and the held-read releaser
// (read_releaser.h). Its owner keeps its own flags under mu() and waits on
// cv() for them or for stopping().
//
// A forked child has a copy of the object but not the thread: Start() then
// reports false, and the destructor leaks the copy rather than destroy a
// condition variable the thread was waiting on (that waits forever) or join a
// thread that is not there.
#ifndef GRAINSTORE_BACKGROUND_THREAD_H_
#define GRAINSTORE_BACKGROUND_THREAD_H_

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace grainstore {

class BackgroundThread {
 public:
  BackgroundThread() = default;
  BackgroundThread(const BackgroundThread&) = delete;
  BackgroundThread& operator=(const BackgroundThread&) = delete;
  // Sets stopping(), wakes the thread and waits for it. Declare this object
  // after everything `run` uses, so that it goes first.
  ~BackgroundThread();

  // Starts `run` on a thread the first time; afterwards `run` is ignored.
  // True while the thread runs in this process; false in a forked child and,
  // for good, once a thread could not be started.
  bool Start(std::function<void()> run);

  // Whether Start has created the thread (in this process or, for a forked
  // child, in its parent).
  bool started() const { return state_ != nullptr; }
  // Whether Start created the thread in an ancestor of this process (a
  // forked child has the copy, not the thread).
  bool forked_away() const;
  // Valid once Start has returned true.
  std::mutex& mu() { return state_->mu; }
  std::condition_variable& cv() { return state_->cv; }
  bool stopping() const { return state_->stop; }  // with mu() held

 private:
  struct State {
    unsigned forks = 0;  // ProcessForkCount() in the process the thread runs in
    std::mutex mu;
    std::condition_variable cv;
    bool stop = false;  // guarded by mu
    std::thread thread;
  };

  std::unique_ptr<State> state_;
  bool failed_ = false;  // a thread could not be started
};

}  // namespace grainstore

#endif  // GRAINSTORE_BACKGROUND_THREAD_H_
