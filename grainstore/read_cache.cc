#include "read_cache.h"

#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

namespace grainstore {

namespace {

// Bytes an entry accounts for: its body, its key, the entry itself.
std::size_t Cost(std::string_view key, std::string_view body) {
  return body.size() + key.size() + sizeof(ReadCache::Entry);
}

}  // namespace

std::string ReadCache::MapKey(NsId ns, std::string_view key) {
  std::string k(sizeof ns + key.size(), '\0');
  std::memcpy(k.data(), &ns, sizeof ns);
  std::memcpy(k.data() + sizeof ns, key.data(), key.size());
  return k;
}

void ReadCache::Observe(Stamp now) {
  if (observed_ && now == stamp_) return;
  Clear();
  stamp_ = now;
  observed_ = true;
}

const ReadCache::Entry* ReadCache::Find(NsId ns, std::string_view key) const {
  if (entries_.empty()) return nullptr;
  auto it = entries_.find(MapKey(ns, key));
  return it == entries_.end() ? nullptr : &it->second;
}

void ReadCache::Put(NsId ns, std::string_view key, std::string_view body) {
  if (!observed_ || body.size() > kMaxBodyBytes) return;
  const std::size_t cost = Cost(key, body);
  if (bytes_ + cost > kMaxBytes || entries_.size() >= kMaxEntries) {
    entries_.clear();
    bytes_ = 0;
  }
  auto [it, inserted] = entries_.try_emplace(MapKey(ns, key));
  if (!inserted) bytes_ -= Cost(key, it->second.body);
  it->second.body.assign(body.data(), body.size());
  bytes_ += cost;
}

void ReadCache::Abandon() {
  static auto* mu = new std::mutex;
  static auto* kept = new std::vector<std::unordered_map<std::string, Entry>>;
  {
    std::lock_guard lock(*mu);
    kept->push_back(std::move(entries_));
  }
  Clear();
}

void ReadCache::Clear() {
  entries_.clear();
  bytes_ = 0;
  observed_ = false;
}

}  // namespace grainstore
