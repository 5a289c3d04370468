#include "sent_back.h"

#include <algorithm>

namespace fusefs {

bool SentBack::Admit(std::int64_t tid, grainstore::NodeId node, std::int64_t now_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(records_, [&](const Record& r) { return now_ns - r.at_ns >= window_ns_; });
  auto it = std::find_if(records_.begin(), records_.end(),
                         [&](const Record& r) { return r.tid == tid && r.node == node; });
  if (it != records_.end()) {
    records_.erase(it);
    return true;
  }
  if (records_.size() >= kMaxRecords) records_.erase(records_.begin());
  records_.push_back({tid, node, now_ns});
  return false;
}

}  // namespace fusefs
