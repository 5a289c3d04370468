// AppendBases: the append run of each recently sealed file (the bodies
// sealed since its last whole body, and the content of the newest), kept so
// that a seal which only appends to it can store just the new bytes (a delta
// row on an earlier body of the run) and continue its hash instead of hashing
// the whole file again. See docs/storage-format.md ("Delta bodies").
//
// An entry is a hint: before relying on one, the caller checks it against the
// store (the file still points at the run's newest body, and the base row's
// hash is the remembered one), so an entry left behind by a rolled-back
// transaction or outdated by another process is simply not used. Not
// thread-safe: the Store's mutex guards it.
#ifndef GRAINSTORE_APPEND_BASES_H_
#define GRAINSTORE_APPEND_BASES_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <vector>

#include "grain_id.h"
#include "grainstore/types.h"

namespace grainstore {

class AppendBases {
 public:
  // A body sealed in the current append run of a file.
  struct Version {
    std::int64_t body_id = 0;
    std::size_t size = 0;
    std::string hash;  // raw hash of the body
  };
  struct Entry {
    // The file's append run: run[0] was stored whole, run[i] is the i-th
    // append after it, and run.back() is the file's current body.
    std::vector<Version> run;
    // run.back()'s whole content, kept while the entry's Cost() stays within
    // kMaxEntryBytes; past that the entry keeps none, and a new body is then
    // recognised as an append by the hash of its first run.back().size bytes
    // (HasContent false).
    std::string content;
    BodyHasher hasher;  // has been fed run.back()'s content

    bool HasContent() const { return !run.empty() && content.size() == run.back().size; }
    // Bytes charged against kMaxBytes.
    std::size_t Cost() const { return content.size() + run.size() * kVersionCost; }
  };

  static constexpr std::size_t kVersionCost = 96;
  static constexpr std::size_t kMaxEntries = 64;
  static constexpr std::size_t kMaxBytes = 16u << 20;
  static constexpr std::size_t kMaxEntryBytes = 4u << 20;

  // The entry kept for `node`, or null.
  const Entry* Find(NodeId node) const;
  // Keeps `entry` for `node` in place of any earlier one, dropping the
  // least recently kept entries past the limits. An entry costing over
  // kMaxEntryBytes is not kept (the node then has no entry).
  void Keep(NodeId node, Entry entry);
  void Forget(NodeId node);
  // Removes and returns `node`'s entry, for the caller to update and Keep
  // again (an append extends the content in place instead of copying it).
  std::optional<Entry> Take(NodeId node);

  std::size_t size() const { return entries_.size(); }
  std::size_t bytes() const { return bytes_; }

 private:
  std::list<std::pair<NodeId, Entry>> entries_;  // most recently kept first
  std::size_t bytes_ = 0;
};

}  // namespace grainstore

#endif  // GRAINSTORE_APPEND_BASES_H_
