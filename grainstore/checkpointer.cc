#include "checkpointer.h"

#include <system_error>

namespace grainstore {

Checkpointer::~Checkpointer() {
  if (!worker_) return;
  if (ProcessForkCount() != worker_->forks) {
    (void)worker_.release();  // forked child: see Worker
    return;
  }
  {
    std::lock_guard lock(worker_->mu);
    worker_->stop = true;
  }
  worker_->cv.notify_one();
  worker_->thread.join();
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
  if (!worker_) {
    if (no_thread_) return;  // the inline bound keeps the WAL finite
    auto w = std::make_unique<Worker>();
    w->forks = ProcessForkCount();
    try {
      w->thread = std::thread([this, raw = w.get()] { Run(raw); });
    } catch (const std::system_error&) {
      no_thread_ = true;
      return;
    }
    worker_ = std::move(w);
  }
  if (ProcessForkCount() != worker_->forks) return;  // forked child: no thread to wake
  {
    std::lock_guard lock(worker_->mu);
    worker_->wanted = true;
  }
  worker_->cv.notify_one();
}

void Checkpointer::Run(Worker* w) {
  Db db;
  // A connection checkpoints only a WAL it has opened, which takes a read.
  const bool ready =
      db.Open(path_, false).ok() && db.QueryInt("SELECT count(*) FROM sqlite_schema").has_value();
  for (;;) {
    {
      std::unique_lock lock(w->mu);
      w->cv.wait(lock, [w] { return w->wanted || w->stop; });
      if (w->stop) return;
      w->wanted = false;
    }
    if (ready) (void)db.CheckpointPassive();
  }
}

}  // namespace grainstore
