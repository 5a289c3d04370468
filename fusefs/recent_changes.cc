#include "recent_changes.h"

#include <algorithm>

namespace fusefs {

void RecentChanges::Note(std::string_view key, std::int64_t now_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = changed_.find(key);
  if (it != changed_.end()) {
    it->second = now_ns;
  } else {
    changed_.emplace(std::string(key), now_ns);
  }
  if (changed_.size() < sweep_at_) return;
  std::erase_if(changed_, [&](const auto& entry) { return now_ns - entry.second >= window_ns_; });
  // Many paths changed within one window: sweep again only once the map
  // has doubled, so that a burst costs linear time, not quadratic.
  sweep_at_ = std::max(kSweepAt, 2 * changed_.size());
}

bool RecentChanges::Recent(std::string_view key, std::int64_t now_ns) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = changed_.find(key);
  return it != changed_.end() && now_ns - it->second < window_ns_;
}

std::size_t RecentChanges::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return changed_.size();
}

}  // namespace fusefs
