// Keeps WAL checkpoints off the committing thread. SQLite's autocheckpoint
// copies the whole WAL into the database inside the commit that crosses its
// threshold, so one write in a few hundred pays for all of them. Here each
// commit that grows the WAL by another kBackgroundFrames wakes a thread that
// runs a PASSIVE checkpoint on its own connection while writers go on (one
// pass per step, not per commit: each pass syncs the WAL and the database);
// a commit that finds it past kInlineFrames checkpoints inline, which copies
// only what the thread has not yet copied and lets the next writer restart
// the WAL from its beginning (a checkpoint running beside a busy writer never
// catches up fully on its own). An inline checkpoint first waits for a pass
// the thread is running, since SQLite lets one checkpoint run at a time and
// turns the other away at once: so within one process, while no other
// reader pins an older snapshot, the WAL stays under kInlineFrames plus one
// commit. After an inline checkpoint that a reader held back (an older
// snapshot, or a read running at that moment), the next is tried after
// another kBackgroundFrames, not at the next commit: each reads the index of
// the whole WAL. A pass run by another process still turns
// the inline checkpoint away, and the next commit tries again. The inline
// bound also keeps the WAL finite when no thread runs (a checkpoint that
// failed to start, a forked child).
#ifndef GRAINSTORE_CHECKPOINTER_H_
#define GRAINSTORE_CHECKPOINTER_H_

#include <memory>
#include <string>

#include "background_thread.h"
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
  ~Checkpointer();

  // Installs the commit hook on the writer connection, which must outlive
  // this object's use of it (destroy the Checkpointer first).
  void Attach(Db* writer);

  // fork() (fork_guard.h), with the writer's Store mutex held: waits out a
  // pass on the thread and holds its mutex, so none starts, until ForkDone,
  // which runs in the parent and in the child.
  void HoldForFork();
  void ForkDone();

 private:
  static void OnCommit(void* self, int frames);
  // Whether a reader held the checkpoint back from the WAL's end.
  bool CheckpointInline();
  // Ends a pass begun by either thread (passing_ set) and wakes the other.
  void EndPass();
  void Wake();
  void Run();

  const std::string path_;
  Db* writer_ = nullptr;
  int woken_at_ = 0;     // WAL frames at the last wake; a smaller count means a restart
  int inline_at_ = kInlineFrames;  // WAL frames at which a commit checkpoints inline
  bool wanted_ = false;   // a pass is due (guarded by thread_.mu())
  bool passing_ = false;  // a checkpoint runs, on either thread (guarded by thread_.mu())
  bool held_for_fork_ = false;  // HoldForFork holds thread_.mu()
  // The thread's own connection, used on the thread only. A forked child
  // leaks it rather than close it in the destructor: a thread running
  // without HoldForFork may have been inside it at the fork. (Under a Store
  // it is idle then, and the child's first statement closes it: Db, "A
  // connection opened before a fork()".)
  std::unique_ptr<Db> conn_ = std::make_unique<Db>();
  // Started on the first wake; started and woken only on the writer's thread
  // (under its Store mutex). Last: its thread reads the members above, and
  // destroying it stops the thread and waits for it.
  BackgroundThread thread_;
};

}  // namespace grainstore

#endif  // GRAINSTORE_CHECKPOINTER_H_
