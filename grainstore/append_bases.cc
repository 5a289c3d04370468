#include "append_bases.h"

#include <utility>

namespace grainstore {

const AppendBases::Entry* AppendBases::Find(NodeId node) const {
  for (const auto& [id, entry] : entries_) {
    if (id == node) return &entry;
  }
  return nullptr;
}

void AppendBases::Keep(NodeId node, Entry entry) {
  Forget(node);
  if (entry.Cost() > kMaxEntryBytes) return;
  bytes_ += entry.Cost();
  entries_.emplace_front(node, std::move(entry));
  while (entries_.size() > kMaxEntries || bytes_ > kMaxBytes) {
    bytes_ -= entries_.back().second.Cost();
    entries_.pop_back();
  }
}

void AppendBases::Forget(NodeId node) { Take(node); }

std::optional<AppendBases::Entry> AppendBases::Take(NodeId node) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->first == node) {
      Entry entry = std::move(it->second);
      bytes_ -= entry.Cost();
      entries_.erase(it);
      return entry;
    }
  }
  return std::nullopt;
}

}  // namespace grainstore
