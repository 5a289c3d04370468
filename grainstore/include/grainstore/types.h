// Record types shared by grainstore's API: tree nodes, grain versions, chains,
// facts and op-log entries. Plain values; no SQLite types.
#ifndef GRAINSTORE_TYPES_H_
#define GRAINSTORE_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>

namespace grainstore {

using NodeId = std::uint64_t;   // stable node id; the mount uses it as st_ino
using ChainId = std::uint64_t;  // 0 means "no chain"
using NsId = std::int64_t;

enum class NodeKind : std::uint8_t { kDirectory = 1, kFile = 2, kSymlink = 3 };

// Whether sealing new content of a file appends a version to its chain
// (kVersioned) or only replaces the current body (kUnversioned: temp, swap,
// lock and backup files, everything under .git/).
enum class Versioning : std::uint8_t { kVersioned = 0, kUnversioned = 1 };

enum class GrainType : std::uint8_t { kFact = 1, kEvent = 2 };

enum class ChainState : std::uint8_t { kLive = 1, kDeleted = 2, kPurged = 3 };

// "live", "deleted" or "purged": how the CLI and the bindings name a state.
inline constexpr const char* ChainStateName(ChainState state) {
  switch (state) {
    case ChainState::kDeleted: return "deleted";
    case ChainState::kPurged: return "purged";
    case ChainState::kLive: break;
  }
  return "live";
}

// The relation of every memory-file grain.
inline constexpr const char kMemoryFileRelation[] = "memory_file";

// One entry of a namespace's /memories tree.
struct NodeInfo {
  NodeId id = 0;
  NodeId parent_id = 0;  // 0 for the namespace root
  NsId ns = 0;
  std::string name;      // "" for the root
  std::string key;       // "/memories/a/b.txt"
  NodeKind kind = NodeKind::kFile;
  std::uint32_t mode = 0;  // permission bits only (07777)
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::uint64_t size = 0;  // body bytes; symlink target bytes; 4096 for directories
  std::int64_t atime_ns = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  ChainId chain_id = 0;  // 0 until a versioned file is first sealed
  // The store's body id of the content (0: empty), as BodyBase::body: which
  // version a node held when it was last seen, after it is replaced.
  std::int64_t body_id = 0;
  Versioning versioning = Versioning::kVersioned;
  std::string symlink_target;  // symlinks only
};

// Which body a file had when it was read (Store::ReadBody) or written
// (WriteResult::base), to tell at a later write whether another writer
// replaced it meanwhile, and what a write that only appended to it began with.
struct BodyBase {
  std::int64_t body = -1;  // the store's body id (0: empty); -1: not known
  std::uint64_t size = 0;  // its length in bytes
  std::string hash;        // its raw content hash; empty: not known
};

// One entry of a listing of a subtree (Store::ListTree).
struct TreeEntry {
  std::string path;  // below the listed directory: "name", "dir/name", ...
  NodeId id = 0;
  NodeKind kind = NodeKind::kFile;
  std::uint64_t size = 0;  // as NodeInfo::size
};

// One version (grain) of a chain.
struct VersionInfo {
  std::string grain_id;      // 64 lowercase hex chars (BLAKE2b-256 of the canonical encoding)
  ChainId chain_id = 0;
  std::uint32_t seq = 0;     // 1-based version number within the chain
  std::string subject;       // the file's key when this version was written
  std::string relation;
  std::int64_t created_ns = 0;
  std::uint64_t size = 0;
  std::string op;            // "create", "edit", "rename", "recovered", ...
  std::string supersedes;    // grain id (hex) of the previous version, or ""
  std::string derived_from;  // provenance (hex), e.g. the head before a rename, or ""
  bool transient = false;    // coalesced away: hidden from default listings
  bool purged = false;       // body erased
};

struct ChainInfo {
  ChainId id = 0;
  NsId ns = 0;
  std::string subject;
  std::string relation;
  ChainState state = ChainState::kLive;
  std::uint32_t head_seq = 0;
  std::string head_grain_id;
  std::int64_t created_ns = 0;
  std::int64_t deleted_ns = 0;  // 0 unless deleted or purged (then when it was deleted)
  std::int64_t purged_ns = 0;   // 0 unless purged
};

// When the chain came to its state, as the CLI names it beside "deleted" or
// "purged": a purged chain's purge, a deleted chain's deletion (0 if live).
inline std::int64_t ChainEndNs(const ChainInfo& c) {
  return c.state == ChainState::kPurged ? c.purged_ns : c.deleted_ns;
}

// A fact or event grain, as `areev add` writes and `areev recall` reads it.
struct Fact {
  std::string grain_id;
  GrainType type = GrainType::kFact;
  std::string subject;
  std::string relation;
  std::string object;
  std::string context;  // free text (for memory files: the body)
  std::int64_t created_ns = 0;
  ChainId chain_id = 0;
  std::uint32_t seq = 0;
  bool live = true;  // head of a live chain (facts) / always true for events
};

// One op-log entry.
struct OpRecord {
  std::uint64_t seq = 0;  // strictly increasing cursor
  std::string ns;
  std::int64_t at_ns = 0;
  std::string op;  // add, supersede, mkdir, rename, delete, restore, purge, write, ...
  std::string subject;
  std::string new_subject;  // rename target, else ""
  NodeId node_id = 0;
  ChainId chain_id = 0;
  std::string grain_id;     // hex, or ""
  std::uint64_t origin = 0; // the Store instance that wrote it (Store::origin())
};

}  // namespace grainstore

#endif  // GRAINSTORE_TYPES_H_
