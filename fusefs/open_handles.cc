// OpenHandles: the directory and version handles the kernel holds, freed at
// release or with the filesystem.
#include "open_handles.h"

#include <utility>

namespace fusefs {

OpenHandles::~OpenHandles() {
  for (auto& [object, deleter] : owned_) deleter(object);
}

void OpenHandles::Keep(void* object, Deleter deleter) {
  std::lock_guard<std::mutex> lock(mu_);
  owned_.emplace(object, deleter);
}

void OpenHandles::Remove(std::uint64_t handle) {
  void* object = reinterpret_cast<void*>(handle);
  Deleter deleter = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = owned_.find(object);
    if (it == owned_.end()) return;
    deleter = it->second;
    owned_.erase(it);
  }
  deleter(object);
}

std::size_t OpenHandles::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return owned_.size();
}

}  // namespace fusefs
