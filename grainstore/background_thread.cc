#include "background_thread.h"

#include <system_error>

#include "db.h"

namespace grainstore {

BackgroundThread::~BackgroundThread() {
  if (!state_) return;
  if (ProcessForkCount() != state_->forks) {
    (void)state_.release();  // forked child: see the header
    return;
  }
  {
    std::lock_guard lock(state_->mu);
    state_->stop = true;
  }
  state_->cv.notify_all();
  state_->thread.join();
}

bool BackgroundThread::forked_away() const {
  return state_ != nullptr && ProcessForkCount() != state_->forks;
}

bool BackgroundThread::Start(std::function<void()> run) {
  if (!state_) {
    if (failed_) return false;
    // Installed before the thread starts, so the thread finds mu() and cv().
    state_ = std::make_unique<State>();
    state_->forks = ProcessForkCount();
    try {
      state_->thread = std::thread(std::move(run));
    } catch (const std::system_error&) {
      state_.reset();
      failed_ = true;
      return false;
    }
  }
  return ProcessForkCount() == state_->forks;
}

}  // namespace grainstore
