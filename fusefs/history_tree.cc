#include "history_tree.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "errno_map.h"
#include "grainstore/path.h"
#include "history_names.h"
#include "log.h"
#include "ops.h"
#include "versioning_policy.h"

namespace fusefs {

using grainstore::NodeKind;
using grainstore::VersionInfo;

namespace {

// A version file never changes: let the kernel keep it as long as it likes.
constexpr double kVersionTimeout = 86400.0;
// Directories gain versions and children; keep their cache short.
constexpr double kDirTimeout = 1.0;
// Most names a directory that no longer exists lists.
constexpr std::size_t kMaxPastChildren = 100000;

}  // namespace

HistoryTree::HistoryTree(grainstore::Store* store, grainstore::NsId ns, grainstore::NodeId root,
                         std::int64_t mount_ns)
    : store_(store), ns_(ns), root_(root), mount_ns_(mount_ns) {
  Node top;
  top.kind = Kind::kDir;
  top.key = std::string(grainstore::kMemoriesRoot);
  std::lock_guard<std::mutex> lock(mu_);
  index_.emplace(IdOf(top), kRootIno);
  nodes_.emplace(kRootIno, std::move(top));
}

std::string HistoryTree::IdOf(const Node& node) {
  return (node.kind == Kind::kDir ? "d:" : "v:") + node.key + '\0' + node.version.grain_id;
}

fuse_ino_t HistoryTree::Intern(const Node& node, bool looked_up) {
  std::string id = IdOf(node);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(id);
  if (it != index_.end()) {
    if (looked_up) ++nodes_.at(it->second).lookups;
    return it->second;
  }
  if (nodes_.size() >= drop_at_) DropUnheldLocked();
  // The same number at every mount: bit 63 and a hash of what the entry
  // names (64-bit FNV-1a); a collision, which takes the next free number,
  // is the only way two mounts can number an entry differently.
  std::uint64_t hash = 0xcbf29ce484222325u;
  for (unsigned char c : id) hash = (hash ^ c) * 0x100000001b3u;
  fuse_ino_t ino = kVirtualBit | hash;
  while (ino == (kVirtualBit | 0) || nodes_.contains(ino)) ino = kVirtualBit | (ino + 1);
  nodes_.emplace(ino, node).first->second.lookups = looked_up ? 1 : 0;
  index_.emplace(std::move(id), ino);
  return ino;
}

void HistoryTree::DropUnheldLocked() {
  for (auto it = nodes_.begin(); it != nodes_.end();) {
    if (it->second.lookups != 0 || it->first == kRootIno) {
      ++it;
      continue;
    }
    it = EraseLocked(it);
  }
  drop_at_ = std::max(kMinDropAt, 2 * nodes_.size());
}

bool HistoryTree::CountLookup(fuse_ino_t ino) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = nodes_.find(ino);
  if (it == nodes_.end()) return false;
  ++it->second.lookups;
  return true;
}

void HistoryTree::Forget(fuse_ino_t ino, std::uint64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = nodes_.find(ino);
  if (it == nodes_.end() || ino == kRootIno) return;
  it->second.lookups -= std::min(n, it->second.lookups);
  if (it->second.lookups != 0) return;
  EraseLocked(it);
}

HistoryTree::NodeMap::iterator HistoryTree::EraseLocked(NodeMap::iterator it) {
  index_.erase(IdOf(it->second));
  return nodes_.erase(it);
}

bool HistoryTree::Find(fuse_ino_t ino, Node* node) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = nodes_.find(ino);
  if (it == nodes_.end()) return false;
  *node = it->second;
  return true;
}

void HistoryTree::FillAttr(fuse_ino_t ino, const Node& node, struct stat* st) const {
  *st = {};
  st->st_ino = ino;
  st->st_uid = getuid();
  st->st_gid = getgid();
  st->st_blksize = 4096;
  st->st_nlink = 1;
  // Owner-only, like the mount's own user's view of its history: with
  // `-o allow_other` other users would otherwise read every version of a
  // file its mode keeps from them (the kernel checks these modes:
  // default_permissions).
  if (node.kind == Kind::kDir) {
    st->st_mode = S_IFDIR | 0500;
    st->st_atim = st->st_mtim = st->st_ctim = ToTimespec(mount_ns_);
  } else {
    st->st_mode = S_IFREG | 0400;
    st->st_size = static_cast<off_t>(node.version.size);
    st->st_blocks = (st->st_size + 511) / 512;
    st->st_atim = st->st_mtim = st->st_ctim = ToTimespec(node.version.created_ns);
  }
}

void HistoryTree::FillEntry(fuse_ino_t ino, const Node& node, fuse_entry_param* entry) const {
  *entry = {};
  entry->ino = ino;
  entry->generation = kGeneration;
  FillAttr(ino, node, &entry->attr);
  double timeout = node.kind == Kind::kDir ? kDirTimeout : kVersionTimeout;
  entry->attr_timeout = timeout;
  entry->entry_timeout = timeout;
}

void HistoryTree::RootEntry(fuse_entry_param* entry) {
  Node node;
  Find(kRootIno, &node);
  FillEntry(kRootIno, node, entry);
}

bool HistoryTree::WasDirectory(const std::string& key) {
  auto names = store_->ChainNamesUnder(ns_, key, 1);
  return names && !names->empty();
}

void HistoryTree::AppendEntry(std::string name, const Node& node, std::vector<DirEntry>* out) {
  DirEntry entry;
  entry.name = std::move(name);
  entry.ino = Intern(node, false);
  FillAttr(entry.ino, node, &entry.st);
  out->push_back(std::move(entry));
}

int HistoryTree::ListPastChildren(const std::string& key, std::vector<DirEntry>* out) {
  auto names = store_->ChainNamesUnder(ns_, key, kMaxPastChildren);
  if (!names) return StatusToErrno(names.error());
  for (const std::string& name : *names) {
    if (IsVcsDirName(name)) continue;
    AppendEntry(name, Node{Kind::kDir, grainstore::JoinKey(key, name), {}}, out);
  }
  return 0;
}

grainstore::NodeId HistoryTree::LiveDirectory(const std::string& key) {
  if (key == grainstore::kMemoriesRoot) return root_;
  auto node = store_->StatKey(ns_, key);
  if (!node || node->kind != NodeKind::kDirectory) return 0;
  return node->id;
}

int HistoryTree::Lookup(fuse_ino_t parent, std::string_view name, fuse_entry_param* entry) {
  Node dir;
  if (!Find(parent, &dir)) return ENOENT;
  if (dir.kind != Kind::kDir) return ENOTDIR;
  if (IsVcsDirName(name)) return ENOENT;
  if (LiveDirectory(dir.key) == 0) {
    // The key is a file's (live or deleted), a gone directory's, or both:
    // a file deleted at /memories/k, then a directory k made and deleted.
    // The name says its version's number: one version is read, however
    // long the history (a name matches only if everything in it does).
    if (auto seq = VersionSeqOfName(name)) {
      auto v = store_->FindVersion(ns_, dir.key, std::to_string(*seq));
      if (v && !v->purged && VersionFileName(*v, grainstore::BaseName(dir.key)) == name) {
        Node node{Kind::kVersion, dir.key, std::move(*v)};
        fuse_ino_t ino = Intern(node, true);
        FillEntry(ino, node, entry);
        return 0;
      }
    }
    if (!WasDirectory(dir.key)) return ENOENT;
  }
  std::string child = grainstore::JoinKey(dir.key, name);
  auto stat = store_->StatKey(ns_, child);
  bool ok = false;
  if (stat && stat->kind == NodeKind::kDirectory) {
    ok = true;
  } else {  // nothing, a file, or a symlink made where a file was deleted
    // The chain History would list, not its versions: one probe however
    // long the history (a listing of 100,000 versions took 0.1 s and held
    // the store meanwhile).
    auto chain = store_->FindChain(ns_, child);
    ok = chain && chain->head_seq != 0;
  }
  // A directory that is gone (deleted, or renamed away) while files that
  // lay in it keep their history there; a symlink may lie there now (stow).
  if (!ok && (!stat || stat->kind != NodeKind::kDirectory)) ok = WasDirectory(child);
  if (!ok) return ENOENT;
  Node node{Kind::kDir, child, {}};
  fuse_ino_t ino = Intern(node, true);
  FillEntry(ino, node, entry);
  return 0;
}

int HistoryTree::GetAttr(fuse_ino_t ino, struct stat* st) {
  Node node;
  if (!Find(ino, &node)) return ENOENT;
  FillAttr(ino, node, st);
  return 0;
}

bool HistoryTree::IsDirectory(fuse_ino_t ino) {
  Node node;
  return Find(ino, &node) && node.kind == Kind::kDir;
}

int HistoryTree::ListChildren(grainstore::NodeId dir, std::vector<DirEntry>* out) {
  std::string after;
  std::string parent_key;
  for (;;) {
    auto page = store_->ReadDir(dir, after, 1024);
    if (!page) return StatusToErrno(page.error());
    for (const auto& child : *page) {
      // A version-control tool's name is hidden whatever it names, as a
      // lookup of it is (Lookup).
      bool show = !IsVcsDirName(child.name) &&
                  (child.kind == NodeKind::kDirectory ||
                   (child.kind == NodeKind::kFile && child.chain_id != 0));
      if (!show) continue;
      AppendEntry(child.name, Node{Kind::kDir, child.key, {}}, out);
    }
    if (page->size() < 1024) return 0;
    after = page->back().name;
  }
}

int HistoryTree::ListVersions(const std::string& key, std::vector<DirEntry>* out) {
  auto chain = store_->FindChain(ns_, key);
  if (!chain) return StatusToErrno(chain.error());
  std::string_view base = grainstore::BaseName(key);
  // Page by page, so a long history is held once, as entries, not twice.
  const grainstore::Status read = store_->ForEachVersion(chain->id, [&](const VersionInfo& v) {
    // Transient versions (saves coalesced into a later one) are reachable
    // by name, like `areev history --all` shows them, but not listed.
    if (!v.purged && !v.transient) {
      AppendEntry(VersionFileName(v, base), Node{Kind::kVersion, key, v}, out);
    }
    return true;
  });
  return read.ok() ? 0 : StatusToErrno(read);
}

int HistoryTree::List(fuse_ino_t dir, std::vector<DirEntry>* out) {
  Node node;
  if (!Find(dir, &node)) return ENOENT;
  if (node.kind != Kind::kDir) return ENOTDIR;
  grainstore::NodeId live = LiveDirectory(node.key);
  if (live != 0) return ListChildren(live, out);
  // A file's versions, a gone directory's names, or both (see Lookup).
  int listed = ListVersions(node.key, out);
  if (listed != 0 && listed != ENOENT) return listed;
  if (!WasDirectory(node.key)) return listed;
  return ListPastChildren(node.key, out);
}

int HistoryTree::ReadBody(fuse_ino_t ino, std::string* body) {
  Node node;
  if (!Find(ino, &node)) return ENOENT;
  if (node.kind != Kind::kVersion) return EISDIR;
  // By chain and number: one index probe (a grain id would be matched
  // against the whole chain).
  auto read = store_->ReadChainVersion(node.version.chain_id, node.key,
                                       std::to_string(node.version.seq));
  if (!read) {
    // A version purged since its name was looked up is ENOENT, which any
    // caller may meet; FailureErrno logs only failures of the store.
    return FailureErrno("reading a version", read.error());
  }
  *body = std::move(read).value();
  return 0;
}

int HistoryTree::VersionId(fuse_ino_t ino, std::string* grain_id) {
  Node node;
  if (!Find(ino, &node)) return ENOENT;
  if (node.kind != Kind::kVersion) return EISDIR;
  *grain_id = node.version.grain_id;
  return 0;
}

int HistoryTree::CheckReadable(fuse_ino_t ino) {
  Node node;
  if (!Find(ino, &node)) return ENOENT;
  if (node.kind != Kind::kVersion) return EISDIR;
  auto found = store_->FindChainVersion(node.version.chain_id, node.key,
                                        std::to_string(node.version.seq));
  if (!found) return FailureErrno("finding a version", found.error());
  return found->purged ? ENOENT : 0;
}

}  // namespace fusefs
