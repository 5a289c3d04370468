#include "sent_back.h"

#include <algorithm>

namespace fusefs {

bool SentBack::Admit(std::int64_t tid, std::int64_t now_ns, std::uint64_t parent,
                     std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(passes_, [&](const Pass& p) { return now_ns - p.at_ns >= window_ns_; });
  auto it = std::find_if(passes_.begin(), passes_.end(),
                         [&](const Pass& p) { return p.tid == tid; });
  if (it != passes_.end()) {
    // The lookup that set the pass aside was the retry's own look at the
    // name this request makes.
    const bool own_miss = parent != 0 && it->missed_parent == parent && it->missed_name == name;
    const bool in_force = it->in_force || own_miss;
    passes_.erase(it);
    if (in_force) return true;
  }
  if (passes_.size() >= kMaxPasses) passes_.erase(passes_.begin());
  passes_.push_back({tid, now_ns});
  return false;
}

void SentBack::Looked(std::int64_t tid, std::uint64_t parent, std::string_view name,
                      bool found) {
  std::lock_guard<std::mutex> lock(mu_);
  if (passes_.empty()) return;
  for (Pass& p : passes_) {
    if (p.tid != tid) continue;
    if (!found && p.in_force) {
      p.in_force = false;
      p.missed_parent = parent;
      p.missed_name = name;
    } else if (found && !p.in_force && p.missed_parent == parent && p.missed_name == name) {
      p.in_force = true;  // the kernel dropped the name and found it again
    }
  }
}

bool SentBack::Holds(std::int64_t tid, std::int64_t now_ns, std::uint64_t parent,
                     std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  return std::any_of(passes_.begin(), passes_.end(), [&](const Pass& p) {
    return p.tid == tid && now_ns - p.at_ns < window_ns_ &&
           (p.in_force || (p.missed_parent == parent && p.missed_name == name));
  });
}

void SentBack::UseUp(std::int64_t tid) {
  std::lock_guard<std::mutex> lock(mu_);
  if (passes_.empty()) return;
  std::erase_if(passes_, [&](const Pass& p) { return p.tid == tid; });
}

}  // namespace fusefs
