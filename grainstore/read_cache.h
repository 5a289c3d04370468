// File contents read by key, kept for the next read of the same key while the
// database is unchanged: the memory tool views the same files over and over,
// and a hash lookup costs the same at 100 files as at 100,000, where the
// three B-tree descents of a read from SQLite do not.
//
// Entries belong to one state of the database, named by a Stamp: PRAGMA
// data_version (changes when another connection commits) together with the
// number of commits this connection has made. A stamp read in the same read
// transaction as an entry's row names exactly the state the row came from;
// any other stamp empties the cache first. Bounded in bytes and entries; a
// full cache starts over rather than tracking recency.
#ifndef GRAINSTORE_READ_CACHE_H_
#define GRAINSTORE_READ_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "grainstore/types.h"

namespace grainstore {

class ReadCache {
 public:
  struct Stamp {
    std::int64_t data_version = 0;
    std::uint64_t commits = 0;
    bool operator==(const Stamp&) const = default;
  };

  struct Entry {
    std::string body;
  };

  static constexpr std::size_t kMaxBytes = 16 << 20;
  static constexpr std::size_t kMaxEntries = 8192;
  static constexpr std::size_t kMaxBodyBytes = 1 << 20;  // larger bodies are not kept

  // Empties the cache unless its entries were read at `now`; later calls
  // describe the state `now` names.
  void Observe(Stamp now);
  // The entry for `key` in namespace `ns`, or null.
  const Entry* Find(NsId ns, std::string_view key) const;
  // Keeps `body` of `key` in namespace `ns` as read at the last observed
  // stamp. No-op for large bodies.
  void Put(NsId ns, std::string_view key, std::string_view body);
  void Clear();
  // Empties the cache without freeing its entries, which stay allocated (and
  // reachable) for good: in a child of fork() they are the parent's memory
  // too, and freeing them would copy every page the frees write to.
  void Abandon();

  std::size_t size() const { return entries_.size(); }

 private:
  static std::string MapKey(NsId ns, std::string_view key);

  bool observed_ = false;
  Stamp stamp_;
  std::unordered_map<std::string, Entry> entries_;
  std::size_t bytes_ = 0;
};

}  // namespace grainstore

#endif  // GRAINSTORE_READ_CACHE_H_
