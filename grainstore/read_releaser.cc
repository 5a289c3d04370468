#include "read_releaser.h"

namespace grainstore {

void ReadReleaser::Attach() { db_->SetHoldHook(&ReadReleaser::OnHold, this, kMaxAge); }

bool ReadReleaser::OnHold(void* self) {
  auto* r = static_cast<ReadReleaser*>(self);
  if (!r->thread_.Start([r] { r->Run(); })) return false;
  if (r->watching_.load(std::memory_order_relaxed)) return true;  // read under store_mu_
  std::lock_guard lock(r->thread_.mu());
  r->watching_.store(true, std::memory_order_relaxed);
  r->thread_.cv().notify_one();
  return true;
}

bool ReadReleaser::EndIfDue(std::chrono::steady_clock::time_point* next) {
  if (!db_->holding_read()) return false;
  const auto due = db_->held_last_use() + kIdle;
  if (std::chrono::steady_clock::now() < due) {
    *next = due;
    return true;
  }
  (void)db_->EndHeldRead();  // a failure has left the transaction all the same
  return false;
}

void ReadReleaser::Run() {
  std::unique_lock lock(thread_.mu());
  for (;;) {
    thread_.cv().wait(lock, [this] { return watching_ || thread_.stopping(); });
    auto next = std::chrono::steady_clock::now() + kIdle;
    while (!thread_.stopping()) {
      thread_.cv().wait_until(lock, next, [this] { return thread_.stopping(); });
      if (thread_.stopping()) break;
      lock.unlock();
      // A Store in use is not idle. Waiting for its mutex would queue this
      // thread behind every call, and each release would then pay a wake-up
      // system call, so look again later instead.
      std::unique_lock store(*store_mu_, std::try_to_lock);
      bool held = true;
      if (!store.owns_lock()) {
        next = std::chrono::steady_clock::now() + kIdle;
      } else {
        held = EndIfDue(&next);
        // Cleared under the store's mutex, which OnHold runs under: a hold
        // that starts after this sees watching_ == false and wakes the thread.
        if (!held) {
          std::lock_guard again(thread_.mu());
          watching_.store(false, std::memory_order_relaxed);
        }
        store.unlock();
      }
      lock.lock();
      if (!held) break;
    }
    if (thread_.stopping()) return;
  }
}

}  // namespace grainstore
