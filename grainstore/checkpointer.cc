#include "checkpointer.h"

#include <limits>
#include <mutex>

namespace grainstore {

void Checkpointer::Attach(Db* writer) {
  writer_ = writer;
  writer->SetWalHook(&Checkpointer::OnCommit, this);
}

void Checkpointer::OnCommit(void* self, int frames) {
  auto* c = static_cast<Checkpointer*>(self);
  if (frames < kInlineFrames) c->inline_at_ = kInlineFrames;  // a new WAL, or a short one
  if (frames >= c->inline_at_) {
    // Each try reads the index of the whole WAL. A try that a reader held
    // back (an older snapshot, or a read that was running at that moment)
    // is not made again at every commit but after another kBackgroundFrames:
    // a reader pinning a snapshot for long costs a scan per 1,024 frames,
    // not one per commit. Readers that keep a read open most of the time
    // delay the WAL's restart by as many steps as tries they hold back (the
    // WAL measured 74-204 MB beside 10 ms reads every 20 ms, against 74 MB
    // when every commit tried).
    const bool held_back = c->CheckpointInline();
    c->inline_at_ = !held_back ? kInlineFrames
                    : frames > std::numeric_limits<int>::max() - kBackgroundFrames
                        ? std::numeric_limits<int>::max()
                        : frames + kBackgroundFrames;
  } else if (frames < c->woken_at_) {
    c->woken_at_ = 0;  // the WAL restarted
  } else if (frames - c->woken_at_ >= kBackgroundFrames) {
    c->woken_at_ = frames;
    c->Wake();
  }
}

bool Checkpointer::CheckpointInline() {
  // Best effort: a failed checkpoint leaves the WAL as it was, and the
  // commit that called us has already succeeded.
  bool held_back = false;
  if (!thread_.Start([this] { Run(); })) {
    (void)writer_->CheckpointPassive(&held_back);
    return held_back;
  }
  {
    std::unique_lock lock(thread_.mu());
    thread_.cv().wait(lock, [this] { return !passing_; });
    passing_ = true;
    wanted_ = false;  // this pass copies what the thread's would have
  }
  (void)writer_->CheckpointPassive(&held_back);
  EndPass();
  return held_back;
}

void Checkpointer::HoldForFork() {
  if (!thread_.started()) return;
  std::unique_lock lock(thread_.mu());
  thread_.cv().wait(lock, [this] { return !passing_; });
  (void)lock.release();  // held across fork(); ForkDone unlocks it
  held_for_fork_ = true;
}

void Checkpointer::ForkDone() {
  if (!held_for_fork_) return;
  held_for_fork_ = false;
  thread_.mu().unlock();  // locked by this thread before the fork, in both processes
}

Checkpointer::~Checkpointer() {
  if (thread_.forked_away()) (void)conn_.release();
}

void Checkpointer::EndPass() {
  {
    std::lock_guard lock(thread_.mu());
    passing_ = false;
  }
  thread_.cv().notify_all();  // the thread, or a writer waiting its turn
}

void Checkpointer::Wake() {
  // No thread (none could start, or a forked child): the inline bound keeps
  // the WAL finite.
  if (!thread_.Start([this] { Run(); })) return;
  {
    std::lock_guard lock(thread_.mu());
    wanted_ = true;
  }
  thread_.cv().notify_all();
}

void Checkpointer::Run() {
  Db& db = *conn_;
  {
    // Opening the connection takes SQLite's global and shared-memory
    // mutexes: it is a pass, so that fork() waits it out (HoldForFork).
    std::unique_lock lock(thread_.mu());
    thread_.cv().wait(lock, [this] { return !passing_; });
    passing_ = true;
  }
  // A connection checkpoints only a WAL it has opened, which takes a read.
  const bool ready =
      db.Open(path_, false).ok() && db.QueryInt("SELECT count(*) FROM sqlite_schema").has_value();
  EndPass();
  for (;;) {
    {
      std::unique_lock lock(thread_.mu());
      thread_.cv().wait(lock,
                        [this] { return (wanted_ && !passing_) || thread_.stopping(); });
      if (thread_.stopping()) return;
      wanted_ = false;
      passing_ = true;
    }
    if (ready) (void)db.CheckpointPassive();
    EndPass();
  }
}

}  // namespace grainstore
