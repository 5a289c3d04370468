#include "coherence.h"

#include <cerrno>
#include <chrono>
#include <exception>
#include <initializer_list>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "filesystem.h"
#include "grainstore/path.h"
#include "log.h"

namespace fusefs {

using grainstore::NodeKind;
using grainstore::Status;

Coherence::Coherence(Filesystem* fs) : fs_(fs) {}

Coherence::~Coherence() { Stop(); }

Status Coherence::Init() {
  auto version = fs_->store().DataVersion();
  if (!version) return version.error();
  auto last = fs_->store().LastOpSeq();
  if (!last) return last.error();
  std::lock_guard<std::mutex> lock(mu_);
  data_version_ = *version;
  cursor_ = *last;
  return Status::Ok();
}

void Coherence::Start(int interval_ms) {
  stopping_.store(false);
  thread_ = std::thread([this, interval_ms] { Run(interval_ms); });
  std::string error;
  if (!watch_.Start(fs_->db_path(), [this] { CatchUp(); }, &error)) {
    Log(LogLevel::kWarning, "{}; changes by other processes show within {} ms", error,
        interval_ms);
  }
}

void Coherence::Stop() {
  watch_.Stop();  // first: its catch-ups wake the poller
  {
    // Set under the mutex, so that the thread cannot miss it between its
    // check and its wait.
    std::lock_guard<std::mutex> lock(mu_);
    stopping_.store(true);
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool Coherence::CatchUp() {
  // Read before the check below: a commit landing after this reading moves
  // the fingerprint again, so the next call looks for itself.
  const std::uint64_t fingerprint = fs_->store().CommitFingerprint();
  if (fingerprint != 0 && fingerprint == caught_up_at_.load(std::memory_order_acquire)) {
    return false;
  }
  bool changed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    bool checked = false;
    changed = CatchUpLocked(&checked);
    if (changed && !pending_.empty()) wake_ = true;
    caught_up_at_.store(checked ? fingerprint : 0, std::memory_order_release);
  }
  if (changed) cv_.notify_all();
  return changed;
}

void Coherence::Run(int interval_ms) {
  for (;;) {
    try {
      RunOnce(interval_ms);
    } catch (const std::exception& e) {  // bad_alloc: a thread's escape would end the daemon
      Log(LogLevel::kError, "the op-log poller failed a round: {}", e.what());
    }
    if (stopping_.load()) return;
  }
}

void Coherence::RunOnce(int interval_ms) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(interval_ms),
                 [this] { return stopping_.load() || wake_; });
    if (stopping_.load()) return;
    wake_ = false;
    RefreshDeferred();
    CatchUpLocked();
    const std::int64_t now = NowNs();
    std::erase_if(drops_, [&](const auto& drop) {
      if (drop.second > now) return false;
      InvalidateKey(drop.first);
      return true;
    });
  }
  SendNotices();
  fs_->DropStaleAttrs();  // of seals by requests that do not drop them themselves
}

bool Coherence::CatchUpLocked(bool* checked) {
  auto version = fs_->store().DataVersion();
  if (!version) {
    LogFailureLocked(fmt::format("data_version check failed: {}", version.error().ToString()));
    return false;
  }
  if (checked != nullptr) *checked = true;
  if (*version == data_version_) {
    last_failure_.clear();
    return false;
  }
  const std::uint64_t own = fs_->store().origin();
  for (;;) {
    auto ops = fs_->store().ReadOps(fs_->ns(), cursor_, 512);
    if (!ops) {
      // The version stays as it was, so the next call reads from the cursor
      // again, whether or not anything else commits meanwhile.
      LogFailureLocked(fmt::format("reading the op-log failed: {}", ops.error().ToString()));
      if (checked != nullptr) *checked = false;
      return true;
    }
    for (const auto& op : *ops) {
      cursor_ = op.seq;
      if (op.origin != own) Apply(op);
    }
    if (ops->size() < 512) break;
  }
  data_version_ = *version;
  last_failure_.clear();
  return true;
}

void Coherence::LogFailureLocked(std::string message) {
  if (message == last_failure_) return;
  Log(LogLevel::kWarning, "{}", message);
  last_failure_ = std::move(message);
}

void Coherence::Apply(const grainstore::OpRecord& op) {
  Log(LogLevel::kDebug, "external op {} {} {}", op.op, op.subject, op.new_subject);
  const std::int64_t now = NowNs();
  // A new version of a file changes its content, not its name: the inode's
  // invalidation is enough. A name's invalidation waits for its directory's
  // lock, which a process looking a name up there holds until this daemon
  // answers; killed in that wait, the daemon cannot exit, nor its mount go
  // (only aborting the connection frees both), so names are invalidated only
  // when they change. Except in writeback mode: there the kernel never takes
  // a cached regular file's size from the daemon (fuse_get_cache_mask), so a
  // new version longer or shorter than the last would be read cut to the old
  // size, or padded with NULs, and appended to at the old end; only dropping
  // the name lets the kernel evict the inode and look the file up afresh.
  // A mode or owner change (setattr) leaves the name as it was too.
  const bool content_only = op.node_id != 0 && op.new_subject.empty() &&
                            (op.op == "supersede" || op.op == "write" || op.op == "setattr") &&
                            !fs_->writeback();
  if (!content_only) fs_->NoteNameMayBeGone();
  for (const std::string* key : {&op.subject, &op.new_subject}) {
    if (key->empty()) continue;  // no new path: not a move
    recent_.Note(*key, now);
    if (!content_only) InvalidateKey(*key);
  }
  if (op.node_id != 0 && !op.new_subject.empty()) {
    // Moved: the kernel may reach the node by its old name, whatever key the
    // inode holds by now (a seal or a lookup may have read the new one from
    // the store before this, so RefreshNode would find nothing moved), and
    // also while a seal holds the inode and its refresh waits.
    if (auto inode = fs_->inodes().Find(op.node_id)) {
      inode->name_stale_until_ns.store(now + kStaleNameNs, std::memory_order_release);
    }
  }
  if (op.node_id != 0) RefreshNode(op.node_id);
}

void Coherence::DropNameLater(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!stopping_.load()) drops_.emplace_back(key, NowNs() + kDropNameDelayNs);
}

// Drops the kernel's dentry for `key` (positive or negative) and refreshes the
// parent directory's attributes.
void Coherence::InvalidateKey(const std::string& key) {
  const auto root = grainstore::kMemoriesRoot;
  if (!grainstore::IsStrictlyInside(key, root)) return;
  std::string parent_key = grainstore::ParentKey(key);
  grainstore::NodeId parent = 0;
  if (parent_key == root) {
    parent = fs_->root();
  } else if (auto node = fs_->store().StatKey(fs_->ns(), parent_key)) {
    parent = node->id;
  } else {
    // Moved or deleted by a later entry of this batch, not applied yet: the
    // kernel still knows the directory by that key, if it knows it at all.
    parent = KnownDirectoryAt(parent_key);
    if (parent == 0) return;  // no dentry under it to drop
  }
  pending_.push_back({true, fs_->ToFuse(parent), std::string(grainstore::BaseName(key))});
  if (fs_->inodes().Find(parent)) {
    RefreshNode(parent);
  }
  auto child = fs_->store().StatKey(fs_->ns(), key);
  if (child) RefreshNode(child->id);
}

namespace {

// Locks `inode` into `lock` unless a seal holds it while it writes to the
// store, which may wait up to the busy timeout for another process's write
// lock: then false, and the caller leaves the inode for later. Waits out a
// shorter holder.
bool LockUnlessSaving(Inode& inode, std::unique_lock<std::mutex>& lock) {
  while (!lock.try_lock()) {
    if (inode.saving.load(std::memory_order_acquire)) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return true;
}

}  // namespace

grainstore::NodeId Coherence::KnownDirectoryAt(const std::string& key) {
  for (const std::shared_ptr<Inode>& inode : fs_->inodes().All()) {
    std::unique_lock<std::mutex> lock(inode->mu, std::defer_lock);
    if (!LockUnlessSaving(*inode, lock)) continue;  // a file's seal
    if (inode->info.kind == NodeKind::kDirectory && inode->info.key == key) return inode->id;
  }
  return 0;
}

void Coherence::RefreshNode(grainstore::NodeId id) {
  auto inode = fs_->inodes().Find(id);
  if (!inode) return;
  // Waiting for a seal here would hold mu_, and every request that catches
  // up, on any file, would wait with it; the seal leaves the inode as the
  // store has it, but for a move's key, which the next round reads.
  std::unique_lock<std::mutex> lock(inode->mu, std::defer_lock);
  if (!LockUnlessSaving(*inode, lock)) {
    deferred_.insert(id);
    any_deferred_.store(true, std::memory_order_release);
    return;
  }
  auto node = fs_->store().GetNode(id);
  std::string moved_from;  // a directory's old key, when it moved
  if (!node && node.error().IsNotFound()) {
    // Deleted by another process. As after an unlink through the mount,
    // open handles keep the content they had and their writes succeed but
    // are never sealed (they would bring the path back).
    if (inode->handles > 0 && !inode->loaded && inode->info.kind == NodeKind::kFile) {
      LoadDeletedLocked(*inode);
    }
    NodeGoneLocked(*inode);
    if (inode->handles == 0) {
      inode->Unload();
      inode->dirty = false;
    }
  } else {
    if (node && node->key != inode->info.key) {  // moved away, maybe with a draft open
      MarkNameStaleLocked(*inode);
      if (node->kind == NodeKind::kDirectory) moved_from = inode->info.key;
      inode->info.key = node->key;
    }
    if (!inode->dirty) {
      if (node) inode->info = *node;
      inode->Unload();
      inode->stale_pages = true;
    }
    if (fs_->writeback() && inode->handles > 0 && inode->info.kind == NodeKind::kFile) {
      inode->kernel_attrs_stale = true;
    }
  }
  lock.unlock();
  if (!moved_from.empty()) MoveKeysUnderLocked(moved_from, node->key, /*send_back=*/true);
  pending_.push_back({false, fs_->ToFuse(id), {}});
}

void Coherence::RefreshDeferred() {
  std::vector<grainstore::NodeId> ids(deferred_.begin(), deferred_.end());
  deferred_.clear();
  for (grainstore::NodeId id : ids) RefreshNode(id);
  any_deferred_.store(!deferred_.empty(), std::memory_order_release);
}

void Coherence::Settle(grainstore::NodeId id) {
  // A few tries: each waits out the seal that held the inode, and a new
  // seal may take it again before the refresh does.
  for (int attempt = 0; attempt < 8; ++attempt) {
    if (!any_deferred_.load(std::memory_order_acquire)) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!deferred_.contains(id)) return;
    }
    auto inode = fs_->inodes().Find(id);
    if (!inode) return;
    { std::lock_guard<std::mutex> wait(inode->mu); }  // the seal ends (not under mu_)
    bool refreshed = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (deferred_.erase(id) == 0) return;  // the poller refreshed it meanwhile
      RefreshNode(id);
      refreshed = !deferred_.contains(id);
      any_deferred_.store(!deferred_.empty(), std::memory_order_release);
      if (refreshed && !pending_.empty()) wake_ = true;
    }
    if (refreshed) {
      cv_.notify_all();  // the poller sends the kernel what the refresh found
      return;
    }
  }
}

void Coherence::MoveKeysUnder(const std::string& old_key, const std::string& new_key,
                              bool send_back) {
  std::lock_guard<std::mutex> lock(mu_);
  MoveKeysUnderLocked(old_key, new_key, send_back);
}

void Coherence::MoveKeysUnderLocked(const std::string& old_key, const std::string& new_key,
                                    bool send_back) {
  // One pass over the inodes the kernel knows; another process moving a
  // directory is rare, and the files under it are not in the op-log entry.
  const std::string prefix = old_key + "/";
  for (const std::shared_ptr<Inode>& inode : fs_->inodes().All()) {
    std::unique_lock<std::mutex> lock(inode->mu, std::defer_lock);
    if (!LockUnlessSaving(*inode, lock)) {
      deferred_.insert(inode->id);  // its refresh reads its key from the store
      any_deferred_.store(true, std::memory_order_release);
      continue;
    }
    if (!inode->info.key.starts_with(prefix)) continue;
    if (send_back) MarkNameStaleLocked(*inode);
    inode->info.key = new_key + inode->info.key.substr(old_key.size());
  }
}

bool Coherence::ChangedLately(std::string_view key) const { return recent_.Recent(key, NowNs()); }

void Coherence::NodeGoneLocked(Inode& inode) {
  if (!inode.unlinked) MarkNameStaleLocked(inode);
  inode.unlinked = true;
}

void Coherence::MarkNameStaleLocked(Inode& inode) {
  const std::int64_t until = NowNs() + kStaleNameNs;
  inode.name_stale_until_ns = until;
  if (inode.info.kind == NodeKind::kDirectory) {
    dirs_gone_until_ns_.store(until, std::memory_order_release);
  }
}

bool Coherence::DirectoryGoneLately(grainstore::NodeId id, std::int64_t now) const {
  if (!AnyDirectoryGoneLately(now)) return false;
  // Up to the root: a directory the kernel first looked up after the one
  // above it moved was reached through that one's old name, and is not
  // marked itself.
  for (int depth = 0; id != 0 && id != fs_->root() && depth < kMaxDepth; ++depth) {
    auto dir = fs_->inodes().Find(id);
    if (!dir) return false;  // not known to the kernel: it reached the file otherwise
    std::lock_guard<std::mutex> lock(dir->mu);
    if (dir->info.kind != NodeKind::kDirectory) return false;
    if (now < dir->name_stale_until_ns) return true;
    id = dir->info.parent_id;
  }
  return false;
}

void Coherence::LoadDeletedLocked(Inode& inode) {
  // A deleted file's versions stay readable until purged. The one to read is
  // the body the inode last showed (the size the kernel holds is that
  // body's): a file replaced by a rename has a chain that goes on in the
  // node that replaced it, so the chain's last version may be the new file.
  // Found by chain and body id, not path: the path may name another file.
  // Purged (or its chain discarded): nothing is read.
  if (inode.info.chain_id == 0) return;  // unversioned: no body outlives the node
  auto body = fs_->store().ReadChainBody(inode.info.chain_id, inode.info.body_id);
  if (!body) return;
  inode.data = std::move(body).value();
  inode.loaded = true;
  inode.NoteClean(grainstore::BodyBase{});  // not the node's body: nothing to append to
}

void Coherence::SendNotices() {
  std::vector<Notice> notices;
  {
    std::lock_guard<std::mutex> lock(mu_);
    notices.swap(pending_);
  }
  fuse_session* se = fs_->session();
  if (se == nullptr) return;
  // One inode invalidation per inode and batch (an op refreshes its node
  // twice, a burst of edits many times): each one makes the kernel drop the
  // size a read or an attribute reply on its way brings.
  std::unordered_set<fuse_ino_t> told;
  for (const Notice& n : notices) {
    // Each name's notice waits for its directory's lock; a batch of
    // thousands, against processes busy in that directory, takes seconds.
    if (stopping_.load(std::memory_order_relaxed)) return;
    if (!n.entry && !told.insert(n.ino).second) continue;
    int rc = n.entry ? fuse_lowlevel_notify_inval_entry(se, n.ino, n.name.c_str(), n.name.size())
                     : fuse_lowlevel_notify_inval_inode(se, n.ino, 0, 0);
    if (rc != 0 && rc != -ENOENT) {
      Log(LogLevel::kWarning, "kernel invalidation failed: {}", rc);
    }
  }
}

}  // namespace fusefs
