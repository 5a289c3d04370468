// Namespace handlers: mkdir, mknod, symlink, link, unlink, rmdir, rename.
// An inode with a dirty draft is sealed before its name goes away, and an
// inode that loses its last name keeps its body for handles still open.
#include <linux/fs.h>

#include <string>

#include "coherence.h"
#include "filesystem.h"
#include "grainstore/path.h"
#include "ops.h"
#include "versioning_policy.h"

namespace fusefs {

using grainstore::NodeKind;
using grainstore::Status;

namespace {

// Owner and setgid inheritance for a new node in `parent`.
grainstore::NewNode NewNodeFor(fuse_req_t req, Filesystem& fs, fuse_ino_t parent, NodeKind kind,
                               mode_t mode) {
  const fuse_ctx* ctx = fuse_req_ctx(req);
  grainstore::NewNode spec;
  spec.kind = kind;
  spec.mode = mode & 07777;
  spec.uid = ctx->uid;
  spec.gid = ctx->gid;
  if (auto dir = fs.inodes().Find(fs.FromFuse(parent))) {
    std::lock_guard<std::mutex> lock(dir->mu);
    if (dir->info.mode & S_ISGID) {
      spec.gid = dir->info.gid;
      if (kind == NodeKind::kDirectory) spec.mode |= S_ISGID;
    }
  }
  return spec;
}

void ReplyNewNode(fuse_req_t req, Filesystem& fs, fuse_ino_t parent,
                  const grainstore::Result<grainstore::NodeInfo>& node, const char* op) {
  if (!node) return (void)fuse_reply_err(req, FailureErrno(op, node.error()));
  fs.EntryAdded(fs.FromFuse(parent), *node);
  fuse_entry_param e{};
  fs.MakeEntry(*node, &e);
  fuse_reply_entry(req, &e);
}

// Seals the cached inode of the node named `name` in `parent` (if any) and,
// when it is open, loads its body so open handles keep reading it after the
// name is gone. Returns the node id (0 when there is none). Another process
// may give the name to another node before the caller's store call runs:
// what that call reports it removed or moved is what the mount then marks.
// A versioned file whose save fails sets `*seal_err` (when given) to the
// errno to refuse the unlink or the replacing rename with: going ahead would
// lose the unsaved bytes, and the store would judge the file by the versions
// it has without them (a file with one recent version leaves no tombstone).
// An unversioned file goes ahead, as its bytes make no version (and deleting
// one must work on a full disk).
grainstore::NodeId PrepareToLoseName(Filesystem& fs, grainstore::NodeId parent,
                                     std::string_view name, int* seal_err = nullptr) {
  auto node = fs.store().Lookup(parent, name);
  if (!node) return 0;
  fs.NoteNameMayBeGone();
  if (auto inode = fs.inodes().Find(node->id)) {
    std::lock_guard<std::mutex> lock(inode->mu);
    Status sealed = fs.SealLocked(*inode);
    if (!sealed.ok()) {
      const int err = FailureErrno("seal before unlink/rename", sealed);
      if (seal_err != nullptr && inode->info.versioning == grainstore::Versioning::kVersioned) {
        *seal_err = err;
        return node->id;
      }
    }
    if (inode->handles > 0 && inode->info.kind == NodeKind::kFile) {
      Status loaded = fs.LoadLocked(*inode);
      if (!loaded.ok()) FailureErrno("load before unlink/rename", loaded);
    }
  }
  return node->id;
}

void MarkUnlinked(Filesystem& fs, grainstore::NodeId id) {
  if (auto inode = fs.inodes().Find(id)) {
    std::lock_guard<std::mutex> lock(inode->mu);
    inode->unlinked = true;
    inode->dirty = false;
  }
}

void Remove(fuse_req_t req, fuse_ino_t parent, const char* name, bool want_dir) {
  Filesystem& fs = Fs(req);
  std::string_view n(name);
  if (Filesystem::IsVirtual(parent) || (parent == FUSE_ROOT_ID && n == grainstore::kHistoryDirName)) {
    return (void)fuse_reply_err(req, EROFS);
  }
  if (fs.SendsBackName(fuse_req_ctx(req)->pid, parent, n)) {
    return (void)fuse_reply_err(req, ESTALE);
  }
  grainstore::NodeId dir = fs.FromFuse(parent);
  int seal_err = 0;
  PrepareToLoseName(fs, dir, n, &seal_err);
  if (seal_err != 0) return (void)fuse_reply_err(req, seal_err);
  grainstore::NodeId id = 0;
  Status removed = fs.store().RemoveNode(dir, n, want_dir, grainstore::Vacate::kVacate, &id);
  if (!removed.ok()) {
    return (void)fuse_reply_err(req, FailureErrno(want_dir ? "rmdir" : "unlink", removed));
  }
  MarkUnlinked(fs, id);
  fs.Refresh(dir);
  fuse_reply_err(req, 0);
}

// CheckNewName, then Filesystem::SendsBackName: an errno, ESTALE or 0.
int RefuseNewName(fuse_req_t req, Filesystem& fs, fuse_ino_t parent, const char* name,
                  const char* op) {
  if (int err = fs.CheckNewName(parent, name, op)) return err;
  return fs.SendsBackName(fuse_req_ctx(req)->pid, parent, name) ? ESTALE : 0;
}

}  // namespace

void OpMkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
  Guarded(req, "mkdir", [&] {
    Filesystem& fs = Fs(req);
    if (int err = RefuseNewName(req, fs, parent, name, "mkdir")) {
      return (void)fuse_reply_err(req, err);
    }
    auto spec = NewNodeFor(req, fs, parent, NodeKind::kDirectory, mode);
    ReplyNewNode(req, fs, parent, fs.store().CreateNode(fs.FromFuse(parent), name, spec), "mkdir");
  });
}

void OpMknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t) {
  Guarded(req, "mknod", [&] {
    Filesystem& fs = Fs(req);
    if (int err = RefuseNewName(req, fs, parent, name, "mknod")) {
      return (void)fuse_reply_err(req, err);
    }
    if (!S_ISREG(mode)) return (void)fuse_reply_err(req, EPERM);  // no fifos, sockets, devices
    auto spec = NewNodeFor(req, fs, parent, NodeKind::kFile, mode);
    spec.versioning = fs.VersioningOfNewName(fs.FromFuse(parent), name);
    spec.seal_empty = true;  // an empty file is v1, made with the node or not at all
    ReplyNewNode(req, fs, parent, fs.store().CreateNode(fs.FromFuse(parent), name, spec),
                 "mknod");
  });
}

void OpSymlink(fuse_req_t req, const char* link, fuse_ino_t parent, const char* name) {
  Guarded(req, "symlink", [&] {
    Filesystem& fs = Fs(req);
    if (int err = RefuseNewName(req, fs, parent, name, "symlink")) {
      return (void)fuse_reply_err(req, err);
    }
    auto spec = NewNodeFor(req, fs, parent, NodeKind::kSymlink, 0777);
    spec.symlink_target = link;
    ReplyNewNode(req, fs, parent, fs.store().CreateNode(fs.FromFuse(parent), name, spec),
                 "symlink");
  });
}

void OpLink(fuse_req_t req, fuse_ino_t, fuse_ino_t newparent, const char*) {
  // Hard links would give one grain two paths; git falls back to rename.
  fuse_reply_err(req, Filesystem::IsVirtual(newparent) ? EROFS : EPERM);
}

void OpUnlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  Guarded(req, "unlink", [&] { Remove(req, parent, name, false); });
}

void OpRmdir(fuse_req_t req, fuse_ino_t parent, const char* name) {
  Guarded(req, "rmdir", [&] { Remove(req, parent, name, true); });
}

void OpRename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent,
              const char* newname, unsigned int flags) {
  Guarded(req, "rename", [&] {
    Filesystem& fs = Fs(req);
    std::string_view from(name);
    if (Filesystem::IsVirtual(parent) || Filesystem::IsVirtual(newparent) ||
        (parent == FUSE_ROOT_ID && from == grainstore::kHistoryDirName)) {
      return (void)fuse_reply_err(req, EROFS);
    }
    if (flags & ~static_cast<unsigned>(RENAME_NOREPLACE)) return (void)fuse_reply_err(req, EINVAL);
    if (newparent == FUSE_ROOT_ID && std::string_view(newname) == grainstore::kHistoryDirName) {
      // The kernel finds the root's .history a directory and refuses a file
      // moved onto it (EISDIR) itself; a directory moved onto it arrives
      // here, and meets a directory that is not empty, as on a local disk.
      return (void)fuse_reply_err(req, ENOTEMPTY);
    }
    if (int err = fs.CheckNewName(newparent, newname, "rename")) {
      return (void)fuse_reply_err(req, err);
    }
    if (fs.SendsBackName(fuse_req_ctx(req)->pid, newparent, newname, parent)) {
      return (void)fuse_reply_err(req, ESTALE);
    }
    grainstore::NodeId dir = fs.FromFuse(parent);
    grainstore::NodeId new_dir = fs.FromFuse(newparent);
    grainstore::NodeId moved = PrepareToLoseName(fs, dir, from);
    if (moved == 0) return (void)fuse_reply_err(req, ENOENT);
    if (!(flags & RENAME_NOREPLACE)) {
      int seal_err = 0;
      PrepareToLoseName(fs, new_dir, newname, &seal_err);
      if (seal_err != 0) return (void)fuse_reply_err(req, seal_err);
    }
    auto mode = (flags & RENAME_NOREPLACE) ? grainstore::RenameMode::kNoReplace
                                           : grainstore::RenameMode::kReplace;
    auto versioning = fs.VersioningOfNewName(new_dir, newname, moved);
    // IsTempCopyMove makes both checks itself; they come first here so that
    // an ordinary rename does not look up the two directories' keys. The
    // store keeps no chain of a copy's own only for a young one (one version,
    // saved through the mount moments ago); an older file keeps its history.
    const bool temp_copy =
        (IsTempCopyOf(from, newname) &&
         (new_dir == dir || IsTempCopyMove(fs.KeyOf(dir), from, fs.KeyOf(new_dir), newname))) ||
        (new_dir == dir && IsSuffixedCopyOf(from, newname)) ||
        (new_dir != dir && IsTempDirCopyOf(from, newname));
    auto hint = temp_copy ? grainstore::RenameHint::kTempCopy
                          : grainstore::RenameHint::kThroughMount;
    grainstore::NodeId replaced = 0;
    auto node =
        fs.store().RenameNode(dir, from, new_dir, newname, mode, versioning, hint, &replaced);
    if (!node) return (void)fuse_reply_err(req, FailureErrno("rename", node.error()));
    if (replaced != 0 && replaced != node->id) MarkUnlinked(fs, replaced);
    std::string moved_from;  // a directory's old key: what lies under it moves too
    if (auto inode = fs.inodes().Find(node->id)) {
      std::lock_guard<std::mutex> lock(inode->mu);
      if (node->kind == grainstore::NodeKind::kDirectory && inode->info.key != node->key) {
        moved_from = inode->info.key;
      }
      std::uint64_t size = inode->info.size;
      inode->info = *node;
      if (inode->dirty) inode->info.size = size;
    }
    if (!moved_from.empty()) fs.coherence().MoveKeysUnder(moved_from, node->key, false);
    fs.Refresh(dir);
    if (new_dir != dir) fs.Refresh(new_dir);
    fuse_reply_err(req, 0);
  });
}

}  // namespace fusefs
