#include "inode_table.h"

#include <cstdlib>

#include "log.h"

namespace fusefs {

namespace {
constexpr std::uint64_t kPinned = std::uint64_t{1} << 62;
}  // namespace

std::shared_ptr<Inode> InodeTable::Remember(const grainstore::NodeInfo& node) {
  std::shared_ptr<Inode> inode;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto& slot = map_[node.id];
    const bool created = !slot;
    if (created) slot = std::make_shared<Inode>(node);
    ++slot->nlookup;
    if (created) return slot;
    inode = slot;
  }
  // The inode's own lock without the table's: a save of this file may hold
  // it while it waits for another process's write lock (up to the busy
  // timeout), and every request on every other file needs the table.
  // The lookup counted above keeps the inode in the table meanwhile.
  std::lock_guard<std::mutex> inode_lock(inode->mu);
  // Never step back to an older snapshot (a readdir listing taken earlier).
  if (!inode->dirty && !inode->unlinked && node.ctime_ns >= inode->info.ctime_ns) {
    if (inode->info.size != node.size || inode->info.mtime_ns != node.mtime_ns) {
      inode->Unload();
    }
    inode->info = node;
  }
  return inode;
}

std::shared_ptr<Inode> InodeTable::Pin(const grainstore::NodeInfo& node) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = map_[node.id];
  if (!slot) slot = std::make_shared<Inode>(node);
  slot->nlookup = kPinned;
  return slot;
}

std::shared_ptr<Inode> InodeTable::Find(grainstore::NodeId id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = map_.find(id);
  return it == map_.end() ? nullptr : it->second;
}

void InodeTable::Forget(grainstore::NodeId id, std::uint64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = map_.find(id);
  if (it == map_.end()) {
    Log(LogLevel::kError, "INTERNAL ERROR: forget of unknown inode {}", id);
    std::abort();
  }
  Inode& inode = *it->second;
  if (inode.nlookup >= kPinned) return;
  if (inode.nlookup < n) {
    Log(LogLevel::kError, "INTERNAL ERROR: lookup count underflow on inode {}", id);
    std::abort();
  }
  inode.nlookup -= n;
  MaybeEraseLocked(id);
}

void InodeTable::MaybeErase(grainstore::NodeId id) {
  std::lock_guard<std::mutex> lock(mu_);
  MaybeEraseLocked(id);
}

void InodeTable::MaybeEraseLocked(grainstore::NodeId id) {
  auto it = map_.find(id);
  if (it == map_.end() || it->second->nlookup != 0) return;
  bool keep;
  {
    // An inode being saved (its lock held while the save waits for another
    // process's write lock) is kept rather than waited for, which would hold
    // up the whole table; the release after its save looks again.
    std::unique_lock<std::mutex> inode_lock(it->second->mu, std::defer_lock);
    if (!it->second->saving.load()) {
      inode_lock.lock();
    } else if (!inode_lock.try_lock()) {
      return;
    }
    // A draft whose seal failed where nobody could be told stays until a
    // later seal of the file or unmount's (SealAll) stores it.
    keep = it->second->handles > 0 || (it->second->dirty && !it->second->unlinked);
  }
  if (!keep) map_.erase(it);
}

std::vector<std::shared_ptr<Inode>> InodeTable::All() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::shared_ptr<Inode>> out;
  out.reserve(map_.size());
  for (const auto& [id, inode] : map_) out.push_back(inode);
  return out;
}

std::size_t InodeTable::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return map_.size();
}

}  // namespace fusefs
