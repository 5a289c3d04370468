#include "version_bodies.h"

#include <algorithm>
#include <iterator>
#include <utility>

namespace fusefs {

VersionBodies::Body VersionBodies::Find(const std::string& grain_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = bodies_.find(grain_id);
  return it == bodies_.end() ? nullptr : it->second.lock();
}

VersionBodies::Body VersionBodies::Share(const std::string& grain_id, std::string body) {
  std::lock_guard<std::mutex> lock(mu_);
  std::weak_ptr<const std::string>& slot = bodies_[grain_id];
  if (Body kept = slot.lock()) return kept;
  Body made = std::make_shared<const std::string>(std::move(body));
  slot = made;
  SweepLocked();
  return made;
}

std::size_t VersionBodies::held() {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<std::size_t>(std::count_if(
      bodies_.begin(), bodies_.end(), [](const auto& entry) { return !entry.second.expired(); }));
}

std::size_t VersionBodies::remembered() {
  std::lock_guard<std::mutex> lock(mu_);
  return bodies_.size();
}

void VersionBodies::SweepLocked() {
  if (bodies_.size() < sweep_at_) return;
  std::erase_if(bodies_, [](const auto& entry) { return entry.second.expired(); });
  sweep_at_ = std::max(kMinSweepAt, 2 * bodies_.size());
}

}  // namespace fusefs
