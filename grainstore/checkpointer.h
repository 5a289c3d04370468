// Keeps WAL checkpoints off the committing thread. SQLite's autocheckpoint
// copies the whole WAL into the database inside the commit that crosses its
// threshold, so one write in a few hundred pays for all of them. Here each
// commit that grows the WAL by another kBackgroundFrames wakes a thread that
// runs a PASSIVE checkpoint on its own connection while writers go on (one
// pass per step, not per commit: each pass syncs the WAL and the database);
// a commit
// that finds it past kInlineFrames checkpoints inline, which copies only
// what the thread has not yet copied and lets the next writer restart the
// WAL from its beginning (a checkpoint running beside a busy writer never
// catches up fully on its own). The inline bound also keeps the WAL finite
// when no thread runs (a checkpoint that failed to start, a forked child).
#ifndef GRAINSTORE_CHECKPOINTER_H_
#define GRAINSTORE_CHECKPOINTER_H_

#include <sys/types.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "db.h"

namespace grainstore {

class Checkpointer {
 public:
  static constexpr int kBackgroundFrames = 1024;
  static constexpr int kInlineFrames = 8192;

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
  static void OnCommit(void* self, int frames);
  void Wake();
  void Run();

  const std::string path_;
  Db* writer_ = nullptr;
  std::mutex mu_;
  std::condition_variable cv_;
  bool wanted_ = false;  // guarded by mu_
  bool stop_ = false;    // guarded by mu_
  // Touched only on the writer's thread (under its Store mutex):
  bool started_ = false;
  pid_t owner_ = 0;  // the process the thread runs in (a forked child has none)
  int woken_at_ = 0;  // WAL frames at the last wake; a smaller count means a restart
  std::thread thread_;
};

}  // namespace grainstore

#endif  // GRAINSTORE_CHECKPOINTER_H_
