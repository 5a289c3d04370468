#include "checkpointer.h"

#include <unistd.h>

#include <new>
#include <system_error>

namespace grainstore {

Checkpointer::~Checkpointer() {
  if (!thread_.joinable()) return;
  if (getpid() != owner_) {
    // A forked child holds a copy of the handle but not the thread; joining
    // would wait forever. Forget the handle without running its destructor.
    new (&thread_) std::thread();
    return;
  }
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

void Checkpointer::Attach(Db* writer) {
  writer_ = writer;
  writer->SetWalHook(&Checkpointer::OnCommit, this);
}

void Checkpointer::OnCommit(void* self, int frames) {
  auto* c = static_cast<Checkpointer*>(self);
  if (frames >= kInlineFrames) {
    // Best effort: a failed checkpoint leaves the WAL as it was, and the
    // commit that called us has already succeeded.
    (void)c->writer_->CheckpointPassive();
  } else if (frames < c->woken_at_) {
    c->woken_at_ = 0;  // the WAL restarted
  } else if (frames - c->woken_at_ >= kBackgroundFrames) {
    c->woken_at_ = frames;
    c->Wake();
  }
}

void Checkpointer::Wake() {
  if (started_ && getpid() != owner_) return;  // forked: the inline bound applies
  if (!started_) {
    started_ = true;
    owner_ = getpid();
    try {
      thread_ = std::thread([this] { Run(); });
    } catch (const std::system_error&) {
      return;  // no thread: the inline bound keeps the WAL finite
    }
  }
  {
    std::lock_guard lock(mu_);
    wanted_ = true;
  }
  cv_.notify_one();
}

void Checkpointer::Run() {
  Db db;
  // A connection checkpoints only a WAL it has opened, which takes a read.
  if (!db.Open(path_, false).ok() || !db.QueryInt("SELECT count(*) FROM sqlite_schema")) return;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return wanted_ || stop_; });
      if (stop_) return;
      wanted_ = false;
    }
    (void)db.CheckpointPassive();
  }
}

}  // namespace grainstore
