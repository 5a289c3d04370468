// HistoryTree: the read-only .history/ directory of the mount root. It is not
// listed by readdir of the root but reachable by name. `.history/<dir>/` lists
// the children of a live directory as directories; `.history/<file>/` lists
// one read-only file per version of that file (deleted files too). A
// directory that no longer exists (deleted or renamed away) is reachable
// while files that lay in it keep a history there, and lists those names.
#ifndef FUSEFS_HISTORY_TREE_H_
#define FUSEFS_HISTORY_TREE_H_

#include <sys/stat.h>

#include <fuse_lowlevel.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "filesystem.h"
#include "grainstore/store.h"

namespace fusefs {

// Thread-safe. Virtual inode numbers (kVirtualBit set) are derived from what
// an entry names, so they are the same at every mount, and an entry dropped
// comes back under its number when it is looked up again. An entry is kept
// while the kernel holds lookups of it (Lookup, CountLookup, Forget); those
// only listed are dropped once they are many, so a mount that lists a
// history of a million versions does not keep a million entries.
class HistoryTree {
 public:
  static constexpr fuse_ino_t kRootIno = kVirtualBit | 1;

  HistoryTree(grainstore::Store* store, grainstore::NsId ns, grainstore::NodeId root,
              std::int64_t mount_ns);
  HistoryTree(const HistoryTree&) = delete;
  HistoryTree& operator=(const HistoryTree&) = delete;

  // Fills the entry of .history itself.
  void RootEntry(fuse_entry_param* entry);
  // Looks up `name` in the virtual directory `parent`. Returns 0 or an errno
  // (ENOENT, ENOTDIR when `parent` is a version file).
  int Lookup(fuse_ino_t parent, std::string_view name, fuse_entry_param* entry);
  // 0 or ENOENT.
  int GetAttr(fuse_ino_t ino, struct stat* st);
  // Snapshot of a virtual directory. 0, ENOENT, ENOTDIR.
  int List(fuse_ino_t dir, std::vector<DirEntry>* out);
  bool IsDirectory(fuse_ino_t ino);
  // Counts one lookup of `ino`, sent to the kernel in a READDIRPLUS reply.
  // False when the entry was dropped since it was listed: send it without a
  // number then (the kernel looks the name up when it needs it).
  bool CountLookup(fuse_ino_t ino);
  // The kernel forgets `n` lookups of `ino`; an entry it holds no more is
  // dropped (.history itself never is).
  void Forget(fuse_ino_t ino, std::uint64_t n);
  // The body of a version file: 0 or an errno (EISDIR, ENOENT, EIO...).
  int ReadBody(fuse_ino_t ino, std::string* body);
  // The grain id of a version file, without reading the store: 0, ENOENT,
  // EISDIR.
  int VersionId(fuse_ino_t ino, std::string* grain_id);
  // Whether a version file's body can still be read (it may have been
  // purged since it was listed): 0, ENOENT, EIO...
  int CheckReadable(fuse_ino_t ino);

 private:
  enum class Kind { kDir, kVersion };
  struct Node {
    Kind kind = Kind::kDir;
    std::string key;  // the store key this directory or version belongs to
    grainstore::VersionInfo version;  // kVersion only
    std::uint64_t lookups = 0;        // held by the kernel
  };
  // Entries only listed are dropped when there are this many entries, or
  // twice as many as after the last drop.
  static constexpr std::size_t kMinDropAt = 65536;

  // What an entry names: its kind, key and (versions) grain id.
  static std::string IdOf(const Node& node);
  // The number of `node`'s entry, made if needed; with `looked_up`, one
  // more lookup of it is counted.
  fuse_ino_t Intern(const Node& node, bool looked_up);
  using NodeMap = std::unordered_map<fuse_ino_t, Node>;
  // Drops every entry the kernel holds no lookup of. With mu_ held.
  void DropUnheldLocked();
  // Drops the entry at `it` from both maps; the next one. With mu_ held.
  NodeMap::iterator EraseLocked(NodeMap::iterator it);
  bool Find(fuse_ino_t ino, Node* node);
  void FillAttr(fuse_ino_t ino, const Node& node, struct stat* st) const;
  void FillEntry(fuse_ino_t ino, const Node& node, fuse_entry_param* entry) const;
  // Appends `node` to a listing under `name`, interned and with its attributes.
  void AppendEntry(std::string name, const Node& node, std::vector<DirEntry>* out);
  // Live directory id for key (root included), or 0.
  grainstore::NodeId LiveDirectory(const std::string& key);
  // True when files with a history (not purged) lay under key.
  bool WasDirectory(const std::string& key);
  int ListPastChildren(const std::string& key, std::vector<DirEntry>* out);
  int ListChildren(grainstore::NodeId dir, std::vector<DirEntry>* out);
  int ListVersions(const std::string& key, std::vector<DirEntry>* out);

  grainstore::Store* store_;
  grainstore::NsId ns_;
  grainstore::NodeId root_;
  std::int64_t mount_ns_;
  std::mutex mu_;  // guards nodes_ and index_
  NodeMap nodes_;
  std::unordered_map<std::string, fuse_ino_t> index_;  // IdOf(node) -> ino
  std::size_t drop_at_ = kMinDropAt;
};

}  // namespace fusefs

#endif  // FUSEFS_HISTORY_TREE_H_
