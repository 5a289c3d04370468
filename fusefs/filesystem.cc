#include "filesystem.h"

#include <time.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "coherence.h"
#include "errno_map.h"
#include "grainstore/path.h"
#include "history_tree.h"
#include "log.h"
#include "versioning_policy.h"

namespace fusefs {

using grainstore::NodeInfo;
using grainstore::NodeKind;
using grainstore::Status;

std::int64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

timespec ToTimespec(std::int64_t ns) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(ns % 1'000'000'000);
  if (ts.tv_nsec < 0) {
    ts.tv_nsec += 1'000'000'000;
    --ts.tv_sec;
  }
  return ts;
}

Filesystem::Filesystem() = default;

std::uint64_t Filesystem::UsedNodes() {
  std::lock_guard lock(used_mu_);
  const std::int64_t now = NowNs();
  if (used_counted_ns_ == 0 || now - used_counted_ns_ >= kUsedNodesTtlNs) {
    auto counted = store_->CountNodes(ns_);
    // A store that cannot be read now: the inodes the kernel holds, at least.
    used_nodes_ = counted ? *counted : inodes_.size();
    used_counted_ns_ = now;
  }
  return used_nodes_;
}

Filesystem::~Filesystem() {
  if (coherence_) coherence_->Stop();
}

Status Filesystem::Attach(std::unique_ptr<grainstore::Store> store, grainstore::NsId ns,
                          grainstore::NodeId root, std::string db_path) {
  store_ = std::move(store);
  ns_ = ns;
  root_ = root;
  db_path_ = std::move(db_path);
  history_ = std::make_unique<HistoryTree>(store_.get(), ns_, root_, NowNs());
  coherence_ = std::make_unique<Coherence>(this);
  space_ = std::make_unique<SpaceGuard>(SpaceGuard::FreeBytesOf(db_path_));
  auto root_node = store_->GetNode(root_);
  if (!root_node) return root_node.error();
  inodes_.Pin(*root_node);
  return coherence_->Init();
}

std::shared_ptr<Inode> Filesystem::Get(fuse_ino_t ino) {
  auto inode = inodes_.Find(FromFuse(ino));
  if (!inode) Log(LogLevel::kError, "INTERNAL ERROR: request for unknown inode {}", ino);
  return inode;
}

void Filesystem::FillAttrFromNode(const NodeInfo& node, struct stat* st) {
  *st = {};
  st->st_ino = node.id;
  switch (node.kind) {
    case NodeKind::kDirectory:
      st->st_mode = S_IFDIR;
      st->st_nlink = 1;  // unknown subdirectory count (as btrfs): find must not optimise
      break;
    case NodeKind::kSymlink:
      st->st_mode = S_IFLNK;
      st->st_nlink = 1;
      break;
    case NodeKind::kFile:
      st->st_mode = S_IFREG;
      st->st_nlink = 1;
      break;
  }
  st->st_mode |= node.mode & 07777;
  st->st_uid = node.uid;
  st->st_gid = node.gid;
  st->st_size = static_cast<off_t>(node.kind == NodeKind::kSymlink ? node.symlink_target.size()
                                                                    : node.size);
  st->st_blksize = 4096;
  st->st_blocks = (st->st_size + 511) / 512;
  st->st_atim = ToTimespec(node.atime_ns);
  st->st_mtim = ToTimespec(node.mtime_ns);
  st->st_ctim = ToTimespec(node.ctime_ns);
}

void Filesystem::FillAttrLocked(const Inode& inode, struct stat* st) const {
  FillAttrFromNode(inode.info, st);
  if (inode.info.kind == NodeKind::kFile && inode.loaded) {
    st->st_size = static_cast<off_t>(inode.data.size());
    st->st_blocks = (st->st_size + 511) / 512;
  }
  if (inode.unlinked) st->st_nlink = 0;
}

void Filesystem::MakeEntry(const NodeInfo& node, fuse_entry_param* entry) {
  *entry = {};
  auto inode = inodes_.Remember(node);
  {
    std::lock_guard<std::mutex> lock(inode->mu);
    FillAttrLocked(*inode, &entry->attr);
  }
  entry->ino = ToFuse(node.id);
  entry->generation = kGeneration;
  entry->attr_timeout = kAttrTimeout;
  entry->entry_timeout = kEntryTimeout;
}

Status Filesystem::LoadLocked(Inode& inode) {
  if (inode.loaded) return Status::Ok();
  if (inode.unlinked) {
    // Replaced or deleted before this inode's content was read, or after a
    // change by another process dropped it (an open can race the rename that
    // replaces the file, and the poller can drop what the rename loaded): the
    // node is gone, so a handle reads the body the inode last showed (the
    // size the kernel holds is that body's), as open handles of a deleted
    // file do. An unversioned file has none: empty.
    coherence_->LoadDeletedLocked(inode);
    inode.loaded = true;
    return Status::Ok();
  }
  // The node is read with the body, from one snapshot: a commit by another
  // process between two reads would pair a new body with the old size.
  NodeInfo node;
  grainstore::BodyBase base;
  auto body = store_->ReadBody(inode.info.id, &node, &base);
  if (!body && body.error().IsNotFound()) {
    // The node is gone: replaced or deleted by a rename or unlink through
    // the mount that has not marked this inode yet, or by another process
    // not caught up yet. Loaded as any unlinked inode, above.
    coherence_->NodeGoneLocked(inode);
    return LoadLocked(inode);
  }
  if (!body) return body.error();
  if (node.size != inode.info.size || node.mtime_ns != inode.info.mtime_ns) {
    inode.stale_pages = true;  // what the kernel holds is older: the next open drops it
  }
  inode.info = std::move(node);
  inode.data = std::move(body).value();
  inode.loaded = true;
  inode.NoteClean(base);
  return Status::Ok();
}

Status Filesystem::SealLocked(Inode& inode, std::uint64_t handle) {
  if (!inode.dirty) return Status::Ok();
  if (inode.unlinked) {  // writes to an unlinked file never resurrect its path
    inode.dirty = false;
    inode.ClearDraftHandles();
    return Status::Ok();
  }
  const std::int64_t now = NowNs();
  // With the writeback cache the kernel writes dirty pages back through any
  // writable handle of the file, so a WRITE's handle need not be the one that
  // wrote: while another writable handle is open, no seal is one handle's own.
  const bool own = inode.DraftIsOwnedBy(handle) && inode.writers <= 1;
  const bool amends = own && inode.provisional_by == handle &&
                      now - inode.provisional_since_ns < kCoalesceWindowNs;
  // A save needs about its new bytes in the store's WAL. One that cannot fit
  // fails before it writes any: SQLite keeps the WAL file at the size a
  // failed commit grew it to, so the disk would stay full, and every later
  // write through the mount be refused, until a remount.
  const std::uint64_t new_bytes = inode.appended_only && inode.base.size <= inode.data.size()
                                      ? inode.data.size() - inode.base.size
                                      : inode.data.size();
  const auto steady = std::chrono::steady_clock::now().time_since_epoch();
  if (space_->Lacks(new_bytes,
                    std::chrono::duration_cast<std::chrono::nanoseconds>(steady).count())) {
    return Status::NoSpace(fmt::format(
        "database or disk is full: the store's filesystem has {} bytes free, too few to save "
        "{} bytes of {}",
        space_->last_free(), new_bytes, inode.info.key));
  }
  const SavingMark saving(inode);
  auto written = store_->WriteBody(inode.info.id, inode.data, inode.info.mtime_ns,
                                   amends ? std::string_view(inode.provisional_grain)
                                          : std::string_view(),
                                   inode.appended_only ? &inode.base : nullptr);
  auto gone = [&] {
    auto node = store_->GetNode(inode.info.id);
    return !node && node.error().IsNotFound();
  };
  if (!written && written.error().IsNotFound() && gone()) {
    // Deleted by another process before coherence caught up: as for an
    // unlink through the mount, the writes stay readable, unsealed. The
    // kernel still holds the name: opens by it are sent back, as when
    // coherence finds the node gone (it then finds it unlinked already).
    coherence_->NodeGoneLocked(inode);
    inode.dirty = false;
    return Status::Ok();
  }
  if (!written) return written.error();
  inode.dirty = false;
  inode.pristine = false;
  inode.ClearDraftHandles();
  inode.info = written->node;
  inode.NoteClean(written->base);
  if (written->rebased) {
    // Another writer's body now precedes these appends: the kernel's cached
    // pages of this file are stale, and the next open drops them; its size,
    // which it may have asked for while the draft was open, DropStaleAttrs.
    inode.data = std::move(written->body);
    inode.stale_pages = true;
    {
      std::lock_guard<std::mutex> lock(stale_attrs_mu_);
      stale_attrs_.push_back(ToFuse(inode.info.id));
      stale_attrs_waiting_.store(true, std::memory_order_release);
    }
    Log(LogLevel::kDebug, "appends to {} went after another writer's body", inode.info.key);
  }
  if (written->new_version) {
    // This version is provisional while its handle stays open, when it holds
    // that handle's changes alone; a version sealed by anything else (fsync,
    // a rename, another handle's close) is a save a later one never hides.
    inode.provisional_by = own ? handle : 0;
    inode.provisional_grain = own ? written->grain_id : std::string();
    if (!amends) inode.provisional_since_ns = now;
  }
  return Status::Ok();
}

void Filesystem::DiscardDraftLocked(Inode& inode, std::uint64_t handle, int err) {
  // A save the application was told failed must stay failed: kept dirty, the
  // draft would be sealed by the next release or close of the file (once
  // space is freed), and a writer that retried would get its bytes twice.
  for (std::uint64_t fh : inode.draft_handles) {
    if (fh != handle) {
      std::erase_if(inode.owed_errors, [fh](const auto& owed) { return owed.first == fh; });
      inode.owed_errors.emplace_back(fh, err);
    }
    if (inode.FailedErrno(fh) == 0) inode.failed_handles.emplace_back(fh, err);
  }
  if (handle != 0 && inode.FailedErrno(handle) == 0) inode.failed_handles.emplace_back(handle, err);
  inode.ClearDraftHandles();
  inode.Unload();
  inode.dirty = false;
  inode.pristine = false;
  inode.stale_pages = true;
  // In writeback mode the kernel keeps the draft's size whatever it is told;
  // the last release drops the name, so the next lookup reads the file anew.
  if (writeback()) inode.kernel_attrs_stale = true;
  auto node = store_->GetNode(inode.info.id);
  if (node) {
    inode.info = *node;
  } else {
    Log(LogLevel::kWarning, "re-reading {} after a failed save: {}", inode.info.key,
        node.error().ToString());
  }
  Log(LogLevel::kWarning, "discarded the unsaved changes to {} (the save failed: {}{})",
      inode.info.key, std::strerror(err),
      err == EBUSY ? "; another process held the store's write lock past the busy timeout"
                   : "");
}

void Filesystem::KeepBody(const std::shared_ptr<Inode>& inode, std::size_t bytes) {
  std::vector<std::shared_ptr<Inode>> evicted;
  {
    std::lock_guard<std::mutex> lock(kept_mu_);
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->inode.lock() == inode) {
        kept_bytes_ -= it->bytes;
        kept_.erase(it);
        break;
      }
    }
    kept_.push_back({inode, bytes});
    kept_bytes_ += bytes;
    while (kept_.size() > 1 && (kept_.size() > kKeptBodies || kept_bytes_ > kKeptBytes)) {
      if (auto old = kept_.front().inode.lock()) evicted.push_back(std::move(old));
      kept_bytes_ -= kept_.front().bytes;
      kept_.pop_front();
    }
  }
  for (const auto& old : evicted) {
    std::lock_guard<std::mutex> lock(old->mu);
    if (old->handles == 0 && !old->dirty) {
      old->Unload();
    }
  }
}

void Filesystem::EntryAdded(grainstore::NodeId dir, const NodeInfo& child) {
  auto inode = inodes_.Find(dir);
  if (!inode) return;
  std::lock_guard<std::mutex> lock(inode->mu);
  if (child.ctime_ns > inode->info.ctime_ns) {
    inode->info.mtime_ns = inode->info.ctime_ns = child.ctime_ns;
  }
}

void Filesystem::Refresh(grainstore::NodeId id) {
  auto inode = inodes_.Find(id);
  if (!inode) return;
  auto node = store_->GetNode(id);
  if (!node) return;
  std::lock_guard<std::mutex> lock(inode->mu);
  if (!inode->dirty) inode->info = *node;
}

std::string Filesystem::KeyOf(grainstore::NodeId id) {
  if (id == root_) return std::string(grainstore::kMemoriesRoot);
  auto node = store_->GetNode(id);
  return node ? node->key : std::string();
}

grainstore::Versioning Filesystem::VersioningOfNewName(grainstore::NodeId dir,
                                                       std::string_view name,
                                                       grainstore::NodeId moving) {
  const grainstore::Versioning by_name = VersioningFor(KeyOf(dir), name);
  if (by_name != grainstore::Versioning::kVersioned) return by_name;
  // A SQLite sidecar of a database, or GNU patch's copy of a file, beside it.
  std::string_view base = SqliteSidecarBase(name);
  if (base.empty()) base = PatchTempBase(name);
  if (base.empty()) return by_name;
  auto beside = store_->Lookup(dir, base);
  if (beside && beside->kind == grainstore::NodeKind::kFile && beside->id != moving) {
    return grainstore::Versioning::kUnversioned;
  }
  return by_name;
}

int Filesystem::CheckNewName(fuse_ino_t parent, std::string_view name, const char* op) {
  if (IsVirtual(parent)) return EROFS;
  if (parent == FUSE_ROOT_ID && name == grainstore::kHistoryDirName) {
    Log(LogLevel::kWarning, "{}: refusing to create reserved name .history at the root", op);
    return EPERM;
  }
  if (!grainstore::IsValidUtf8(name)) {
    // EILSEQ, as filesystems that keep names in UTF-8 answer (ZFS utf8only).
    Log(LogLevel::kWarning, "{}: rejected a name that is not valid UTF-8", op);
    return EILSEQ;
  }
  Status valid = grainstore::ValidateName(name);
  if (!valid.ok()) {
    Log(LogLevel::kWarning, "{}: rejected name ({})", op, valid.message());
    return NameStatusToErrno(valid);
  }
  return 0;
}

bool Filesystem::SendsBackName(std::int64_t tid, fuse_ino_t parent, std::string_view name,
                               fuse_ino_t from_parent) {
  Coherence& coherence = *coherence_;
  coherence.CatchUp();  // the kernel may send this without a lookup first
  const std::int64_t now = NowNs();
  const bool gone = coherence.DirectoryGoneLately(FromFuse(parent), now) ||
                    (from_parent != 0 && from_parent != parent &&
                     coherence.DirectoryGoneLately(FromFuse(from_parent), now));
  return SendsBack(tid, gone, now, parent, name);
}

bool Filesystem::SendsBackNode(std::int64_t tid, Inode& inode) {
  coherence_->Settle(inode.id);  // a refresh a seal of it held up
  const std::int64_t now = NowNs();
  grainstore::NodeId parent;
  bool stale;
  {
    std::lock_guard<std::mutex> lock(inode.mu);
    parent = inode.info.parent_id;
    stale = now < inode.name_stale_until_ns;
  }
  // A node in a directory another process just moved or deleted may have
  // been looked up in it by the directory's old name, whether or not the
  // kernel knew the node before.
  stale = stale || coherence_->DirectoryGoneLately(parent, now);
  return SendsBack(tid, stale, now);
}

bool Filesystem::SendsBack(std::int64_t tid, bool stale, std::int64_t now, fuse_ino_t parent,
                           std::string_view name) {
  if (!stale) {
    sent_back_.UseUp(tid);
    return false;
  }
  return !sent_back_.Admit(tid, now, parent, name);
}

void Filesystem::FetchKernelWrites() {
  if (!writeback_ || session_ == nullptr) return;
  for (const auto& inode : inodes_.All()) {
    grainstore::NodeId id;
    std::string key;
    {
      std::lock_guard<std::mutex> lock(inode->mu);  // not held while the kernel writes back
      if (inode->writers == 0) continue;
      id = inode->info.id;
      key = inode->info.key;
    }
    const int rc = fuse_lowlevel_notify_inval_inode(session_, ToFuse(id), 0, 0);
    if (rc != 0 && rc != -ENOENT) {
      Log(LogLevel::kWarning, "asking the kernel for the unsent writes of {} failed: {}", key, rc);
    }
  }
}

void Filesystem::DropStaleAttrs() {
  // Most calls find nothing queued: they take no lock then.
  if (!stale_attrs_waiting_.load(std::memory_order_acquire)) return;
  std::vector<fuse_ino_t> drop;
  {
    std::lock_guard<std::mutex> lock(stale_attrs_mu_);
    drop.swap(stale_attrs_);
    stale_attrs_waiting_.store(false, std::memory_order_relaxed);
  }
  if (session_ == nullptr) return;
  for (fuse_ino_t ino : drop) (void)fuse_lowlevel_notify_inval_inode(session_, ino, -1, 0);
}

void Filesystem::SealAll() {
  for (const auto& inode : inodes_.All()) {
    std::lock_guard<std::mutex> lock(inode->mu);
    Status sealed = SealLocked(*inode);
    if (!sealed.ok()) {
      Log(LogLevel::kError, "sealing {} at unmount failed: {}", inode->info.key, sealed.ToString());
    }
  }
}

}  // namespace fusefs
