#include "read_releaser.h"

#include <algorithm>
#include <system_error>

namespace grainstore {

ReadReleaser::~ReadReleaser() {
  if (!worker_) return;
  if (ProcessForkCount() != worker_->forks) {
    (void)worker_.release();  // forked child: see the header
    return;
  }
  {
    std::lock_guard lock(worker_->mu);
    worker_->stop = true;
  }
  worker_->cv.notify_one();
  worker_->thread.join();
}

void ReadReleaser::Attach() { db_->SetHoldHook(&ReadReleaser::OnHold, this); }

bool ReadReleaser::OnHold(void* self) {
  auto* r = static_cast<ReadReleaser*>(self);
  if (!r->worker_) {
    if (r->no_thread_) return false;
    auto w = std::make_unique<Worker>();
    w->forks = ProcessForkCount();
    try {
      w->thread = std::thread([r, raw = w.get()] { r->Run(raw); });
    } catch (const std::system_error&) {
      r->no_thread_ = true;
      return false;
    }
    r->worker_ = std::move(w);
  }
  Worker* w = r->worker_.get();
  if (ProcessForkCount() != w->forks) return false;
  if (w->watching.load(std::memory_order_relaxed)) return true;  // read under store_mu_
  std::lock_guard lock(w->mu);
  w->watching.store(true, std::memory_order_relaxed);
  w->cv.notify_one();
  return true;
}

bool ReadReleaser::EndIfDue(std::chrono::steady_clock::time_point* next) {
  if (!db_->holding_read()) return false;
  const auto due = std::min(db_->held_last_use() + kIdle, db_->held_since() + kMaxAge);
  if (std::chrono::steady_clock::now() < due) {
    *next = due;
    return true;
  }
  (void)db_->EndHeldRead();  // a failure has left the transaction all the same
  return false;
}

void ReadReleaser::Run(Worker* w) {
  std::unique_lock lock(w->mu);
  for (;;) {
    w->cv.wait(lock, [w] { return w->watching || w->stop; });
    auto next = std::chrono::steady_clock::now() + kIdle;
    while (!w->stop) {
      w->cv.wait_until(lock, next, [w] { return w->stop; });
      if (w->stop) break;
      lock.unlock();
      bool held;
      {
        std::lock_guard store(*store_mu_);
        held = EndIfDue(&next);
        // Cleared under the store's mutex, which OnHold runs under: a hold
        // that starts after this sees watching == false and wakes the thread.
        if (!held) {
          std::lock_guard again(w->mu);
          w->watching.store(false, std::memory_order_relaxed);
        }
      }
      lock.lock();
      if (!held) break;
    }
    if (w->stop) return;
  }
}

}  // namespace grainstore
