// Keeps WAL checkpoints off the committing thread. SQLite's autocheckpoint
// copies the whole WAL into the database inside the commit that crosses its
// threshold, so one write in a few hundred pays for all of them. Here each
// commit that grows the WAL by another kBackgroundFrames wakes a thread that
// runs a PASSIVE checkpoint on its own connection while writers go on (one
// pass per step, not per commit: each pass syncs the WAL and the database);
// a commit that finds it past kInlineFrames checkpoints inline, which copies
// only what the thread has not yet copied and lets the next writer restart
// the WAL from its beginning (a checkpoint running beside a busy writer never
// catches up fully on its own). The inline bound also keeps the WAL finite
// when no thread runs (a checkpoint that failed to start, a forked child).
#ifndef GRAINSTORE_CHECKPOINTER_H_
#define GRAINSTORE_CHECKPOINTER_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "db.h"

namespace grainstore {

class Checkpointer {
 public:
  static constexpr int kBackgroundFrames = 1024;
  static constexpr int kInlineFrames = 16384;

  // `path` is the database the writer has open; the thread opens its own
  // connection to it on first use.
  explicit Checkpointer(std::string path) : path_(std::move(path)) {}
  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;
  ~Checkpointer();  // stops the thread, if it runs, and waits for it

  // Installs the commit hook on the writer connection, which must outlive
  // this object's use of it (destroy the Checkpointer first).
  void Attach(Db* writer);

 private:
  // The thread and what it waits on. Created on the first wake; a forked
  // child, which has a copy of it but not the thread, leaks it rather than
  // destroy a condition variable the thread was waiting on (that waits
  // forever) or join a thread that is not there.
  struct Worker {
    unsigned forks = 0;  // ProcessForkCount() in the process the thread runs in
    std::mutex mu;
    std::condition_variable cv;
    bool wanted = false;  // guarded by mu
    bool stop = false;    // guarded by mu
    std::thread thread;
  };

  static void OnCommit(void* self, int frames);
  void Wake();
  void Run(Worker* w);

  const std::string path_;
  Db* writer_ = nullptr;
  // Touched only on the writer's thread (under its Store mutex):
  std::unique_ptr<Worker> worker_;
  bool no_thread_ = false;  // a thread could not be started
  int woken_at_ = 0;  // WAL frames at the last wake; a smaller count means a restart
};

}  // namespace grainstore

#endif  // GRAINSTORE_CHECKPOINTER_H_
