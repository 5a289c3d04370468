// File data handlers: create, open, read, write, flush, release, fsync.
// Writes go to the inode's draft; flush (every close) and fsync seal it as the
// file's body, release seals amendments that arrived after the last flush.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

#include "coherence.h"
#include "filesystem.h"
#include "history_tree.h"
#include "ops.h"
#include "version_bodies.h"
#include "versioning_policy.h"

namespace fusefs {

using grainstore::NodeKind;
using grainstore::Status;

namespace {

// Longest a flush waits for the rest of another handle's write(2) (see
// Inode::split_writer). The rest follows as soon as the writer runs again,
// which on a loaded machine can take a few scheduler slices; a writer whose
// write simply ended on a page boundary and stays open costs a flush this much.
constexpr auto kSplitWriteWait = std::chrono::milliseconds(50);
// Where the kernel splits a write(2) into WRITE requests.
const std::uint64_t kPageBytes = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));

// Before handle `fh` seals, waits out a write(2) of another handle whose
// first part has arrived and whose rest may still be coming.
void AwaitSplitWrite(Inode& inode, std::unique_lock<std::mutex>& lock, std::uint64_t fh) {
  if (inode.split_writer == 0 || inode.split_writer == fh) return;
  inode.split_settled.wait_for(lock, kSplitWriteWait, [&] {
    return inode.split_writer == 0 || inode.split_writer == fh;
  });
}

bool IsWriter(const fuse_file_info* fi) { return (fi->flags & O_ACCMODE) != O_RDONLY; }

// Registers an open handle on the inode. Returns whether the kernel may keep
// its page cache (false after another process changed the file).
bool OpenLocked(Inode& inode, fuse_file_info* fi) {
  ++inode.handles;
  if (IsWriter(fi)) ++inode.writers;
  // O_TRUNC empties the file whatever the access mode, as Linux does for
  // O_RDONLY|O_TRUNC (the kernel has checked write permission).
  if (fi->flags & O_TRUNC) {
    inode.data.clear();
    inode.loaded = true;
    inode.dirty = true;
    inode.pristine = true;
    inode.NoteChange(fi->fh);
    inode.info.mtime_ns = inode.info.ctime_ns = NowNs();
  }
  bool keep = !inode.stale_pages;
  inode.stale_pages = false;
  return keep;
}

void OpenVersion(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  Filesystem& fs = Fs(req);
  if (IsWriter(fi) || (fi->flags & O_TRUNC)) return (void)fuse_reply_err(req, EROFS);
  // One copy of a version's body serves every handle open on it.
  std::string id;
  int err = fs.history().VersionId(ino, &id);
  if (err != 0) return (void)fuse_reply_err(req, err);
  VersionBodies::Body body = fs.version_bodies().Find(id);
  if (body != nullptr) {
    err = fs.history().CheckReadable(ino);  // a purge since reaches new opens
  } else {
    std::string read;
    err = fs.history().ReadBody(ino, &read);
    if (err == 0) body = fs.version_bodies().Share(id, std::move(read));
  }
  if (err != 0) return (void)fuse_reply_err(req, err);
  fi->keep_cache = 1;  // versions never change
  fi->noflush = 1;
  fi->fh = fs.handles().Add(std::make_unique<VersionBodies::Body>(std::move(body)));
  if (fuse_reply_open(req, fi) != 0) fs.handles().Remove(fi->fh);
}

// Whether the caller of `req` may open a file with `node`'s owner, group
// and mode for the access `flags` ask, as the kernel's own check would.
bool MayOpen(fuse_req_t req, const grainstore::NodeInfo& node, int flags) {
  const fuse_ctx* ctx = fuse_req_ctx(req);
  if (ctx->uid == 0) return true;
  unsigned want = (flags & O_ACCMODE) == O_RDONLY ? 4u : (flags & O_ACCMODE) == O_WRONLY ? 2u : 6u;
  if (flags & O_TRUNC) want |= 2u;
  bool in_group = ctx->gid == node.gid;
  if (!in_group) {
    gid_t groups[64];
    const int n = fuse_req_getgroups(req, 64, groups);
    for (int i = 0; i < std::min(n, 64) && !in_group; ++i) in_group = groups[i] == node.gid;
  }
  const unsigned shift = ctx->uid == node.uid ? 6u : in_group ? 3u : 0u;
  return ((node.mode >> shift) & want) == want;
}

// A create that met a file another process made at the name, when the
// kernel has no retry left to look the name up and open it itself: opened
// here, with the checks the kernel would make (its owner and mode; a
// directory or a symlink is not opened).
void CreateExisting(fuse_req_t req, Filesystem& fs, fuse_ino_t parent, const char* name,
                    fuse_file_info* fi) {
  auto node = fs.store().Lookup(fs.FromFuse(parent), name);
  if (!node) return (void)fuse_reply_err(req, FailureErrno("create", node.error()));
  if (node->kind == NodeKind::kDirectory) return (void)fuse_reply_err(req, EISDIR);
  if (node->kind != NodeKind::kFile) return (void)fuse_reply_err(req, ELOOP);
  if (!MayOpen(req, *node, fi->flags)) return (void)fuse_reply_err(req, EACCES);
  fuse_entry_param e{};
  fs.MakeEntry(*node, &e);
  auto inode = fs.inodes().Find(node->id);
  const bool direct = fs.coherence().ChangedLately(node->key);
  fi->fh = fs.NewHandle(fi->flags, direct);
  bool keep;
  {
    std::lock_guard<std::mutex> lock(inode->mu);
    keep = OpenLocked(*inode, fi);
    fs.FillAttrLocked(*inode, &e.attr);
  }
  fi->keep_cache = keep;
  fi->direct_io = direct;
  fuse_reply_create(req, &e, fi);
}

// One write into the inode's draft, under its mutex; returns an errno.
int WriteLocked(Filesystem& fs, Inode& inode, const char* buf, size_t size, off_t off,
                const fuse_file_info* fi) {
  if (int failed = inode.FailedErrno(fi->fh)) return failed;  // its earlier writes were lost
  Status loaded = fs.LoadLocked(inode);
  if (!loaded.ok()) return FailureErrno("write", loaded);
  std::size_t at = static_cast<std::size_t>(off);
  const bool append = (fi->flags & O_APPEND) && !fs.writeback();
  if (append) at = inode.data.size();
  if (PastFileLimit(at + size)) return EFBIG;
  if (at + size > inode.data.size()) inode.data.resize(at + size);
  std::memcpy(inode.data.data() + at, buf, size);
  inode.dirty = true;
  inode.pristine = false;
  inode.NoteChange(fi->fh, append);
  inode.info.mtime_ns = inode.info.ctime_ns = NowNs();
  if (inode.handles == 0) {  // a late write-back after release: seal now
    Status sealed = fs.SealLocked(inode);
    if (!sealed.ok()) return FailureErrno("write", sealed);
  }
  return 0;
}


}  // namespace

bool RefusedForSpace(Filesystem& fs, std::size_t size) {
  bool first = false;
  const auto now = std::chrono::steady_clock::now().time_since_epoch();
  if (!fs.space().Refuses(size, std::chrono::duration_cast<std::chrono::nanoseconds>(now).count(),
                          &first)) {
    return false;
  }
  if (first) {
    Log(LogLevel::kWarning,
        "writes refused (ENOSPC): the store's filesystem has {} bytes free, too few to save "
        "them ({})", fs.space().last_free(), fs.db_path());
  }
  return true;
}

void OpCreate(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode,
              fuse_file_info* fi) {
  Guarded(req, "create", [&] {
    Filesystem& fs = Fs(req);
    if (int err = fs.CheckNewName(parent, name, "create")) return (void)fuse_reply_err(req, err);
    const std::int64_t tid = fuse_req_ctx(req)->pid;
    // Before SendsBackName uses the pass up: whether this is a retry.
    const bool retry = fs.sent_back().Holds(tid, NowNs(), parent, name);
    if (fs.SendsBackName(tid, parent, name)) return (void)fuse_reply_err(req, ESTALE);
    const fuse_ctx* ctx = fuse_req_ctx(req);
    grainstore::NewNode spec;
    spec.kind = NodeKind::kFile;
    spec.mode = mode & 07777;
    spec.uid = ctx->uid;
    spec.gid = ctx->gid;
    grainstore::NodeId dir = fs.FromFuse(parent);
    if (auto parent_inode = fs.inodes().Find(dir)) {
      std::lock_guard<std::mutex> lock(parent_inode->mu);
      if (parent_inode->info.mode & S_ISGID) spec.gid = parent_inode->info.gid;
    }
    spec.versioning = fs.VersioningOfNewName(dir, name);
    auto node = fs.store().CreateNode(dir, name, spec);
    if (!node && node.error().IsAlreadyExists() && !(fi->flags & O_EXCL)) {
      // Another process made the name after the kernel's lookup found none:
      // sent back, the kernel looks the name up again and opens what it
      // finds itself, checking its permissions and following a symlink, as
      // open(O_CREAT) of an existing name does on a local disk. The kernel
      // retries once: a retry is answered here.
      if (retry) return CreateExisting(req, fs, parent, name, fi);
      (void)fs.sent_back().Admit(tid, NowNs());  // the retry's pass
      return (void)fuse_reply_err(req, ESTALE);
    }
    if (!node) return (void)fuse_reply_err(req, FailureErrno("create", node.error()));
    fs.EntryAdded(dir, *node);
    fuse_entry_param e{};
    fs.MakeEntry(*node, &e);
    auto inode = fs.inodes().Find(node->id);
    fi->fh = fs.NewHandle(fi->flags);
    {
      std::lock_guard<std::mutex> lock(inode->mu);
      OpenLocked(*inode, fi);
      inode->data.clear();
      inode->loaded = true;
      inode->dirty = true;  // even an empty new file seals v1 (at release)
      inode->pristine = true;
      inode->NoteChange(fi->fh);
    }
    fi->keep_cache = 1;
    fuse_reply_create(req, &e, fi);
  });
}

void OpOpen(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  Guarded(req, "open", [&] {
    if (Filesystem::IsVirtual(ino)) return OpenVersion(req, ino, fi);
    Filesystem& fs = Fs(req);
    fs.coherence().CatchUp();
    auto inode = fs.Get(ino);
    if (!inode) return (void)fuse_reply_err(req, ESTALE);
    bool keep = false;
    bool is_dir;
    const bool stale = fs.SendsBackNode(fuse_req_ctx(req)->pid, *inode);
    fi->fh = fs.NewHandle(fi->flags);
    {
      std::lock_guard<std::mutex> lock(inode->mu);
      is_dir = inode->info.kind == NodeKind::kDirectory;
      if (!is_dir && !stale) {
        // Reached after another process deleted it (an O_PATH descriptor's
        // /proc link): it reads its last version, as open handles do.
        if (inode->unlinked && !inode->loaded) fs.coherence().LoadDeletedLocked(*inode);
        // Another process edits it (RecentChanges): reads past the page cache.
        fi->direct_io = fs.coherence().ChangedLately(inode->info.key);
        if (fi->direct_io) fi->fh = Filesystem::DirectHandle(fi->fh);
        keep = OpenLocked(*inode, fi);
      }
    }
    if (stale) return (void)fuse_reply_err(req, ESTALE);
    if (is_dir) return (void)fuse_reply_err(req, EISDIR);
    if (!keep) {
      // Another process changed the file: drop the kernel's cached size and
      // mtime now (attributes only; this cannot wait on our own replies).
      fuse_lowlevel_notify_inval_inode(fs.session(), ino, -1, 0);
    }
    fi->keep_cache = keep;
    // A read-only handle has nothing to seal: spare the kernel the FLUSH
    // round trip on each close().
    if (!IsWriter(fi) && !(fi->flags & O_TRUNC)) fi->noflush = 1;
    fuse_reply_open(req, fi);
  });
}

void OpRead(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  Guarded(req, "read", [&] {
    std::string chunk;
    if (Filesystem::IsVirtual(ino)) {
      // Straight from the shared copy, held here through the reply: the
      // kernel may end the read, and send the handle's release to another
      // worker, before fuse_reply_buf returns.
      const VersionBodies::Body body = *OpenHandles::Get<const VersionBodies::Body>(fi->fh);
      const std::size_t from = std::min(body->size(), static_cast<std::size_t>(off));
      return (void)fuse_reply_buf(req, body->data() + from, std::min(size, body->size() - from));
    }
    Filesystem& fs = Fs(req);
    auto inode = fs.Get(ino);
    if (!inode) return (void)fuse_reply_err(req, ESTALE);
    Status loaded;
    {
      // A file deleted or replaced before this handle read anything reads
      // the body it last showed (Filesystem::LoadLocked).
      std::lock_guard<std::mutex> lock(inode->mu);
      loaded = fs.LoadLocked(*inode);
      if (loaded.ok() && static_cast<std::size_t>(off) < inode->data.size()) {
        chunk = inode->data.substr(off, size);
      }
    }
    if (!loaded.ok()) return (void)fuse_reply_err(req, FailureErrno("read", loaded));
    fuse_reply_buf(req, chunk.data(), chunk.size());
  });
}

void OpWrite(fuse_req_t req, fuse_ino_t ino, const char* buf, size_t size, off_t off,
             fuse_file_info* fi) {
  Guarded(req, "write", [&] {
    Filesystem& fs = Fs(req);
    if (Filesystem::IsVirtual(ino)) return (void)fuse_reply_err(req, EROFS);
    auto inode = fs.Get(ino);
    if (!inode) return (void)fuse_reply_err(req, ESTALE);
    // In writeback mode the kernel sends its cached writes later, whatever
    // their order: refusing some would seal the draft with holes.
    if (!fs.writeback() && RefusedForSpace(fs, size)) return (void)fuse_reply_err(req, ENOSPC);
    int err = 0;
    bool discarded = false;
    std::string drop_name;  // see OpRelease
    {
      std::lock_guard<std::mutex> lock(inode->mu);
      const bool failed_before = inode->FailedErrno(fi->fh) != 0;
      err = WriteLocked(fs, *inode, buf, size, off, fi);
      if (err == EFBIG && fs.writeback() && !failed_before &&
          !Filesystem::IsDirectHandle(fi->fh)) {
        // The kernel took the application's writes and sends them now: the
        // draft holds the part below the limit, which a save would store as
        // a cut version. The change fails whole, as a save that failed. (A
        // direct handle's writer is told at its write(2), as without
        // writeback, and keeps what it wrote before.)
        fs.DiscardDraftLocked(*inode, fi->fh, EFBIG);
        discarded = true;
        drop_name = inode->TakeNameToDrop();  // a write-back after the release
      }
      if (err == 0 && size > 0 && (static_cast<std::uint64_t>(off) + size) % kPageBytes == 0) {
        inode->split_writer = fi->fh;  // more of this write(2) may follow
      } else {
        inode->SettleSplit(fi->fh);
      }
    }
    // The kernel's page cache holds the discarded draft (its size stays the
    // kernel's until the last release drops the name: kernel_attrs_stale).
    if (discarded) fuse_lowlevel_notify_inval_inode(fs.session(), ino, -1, 0);
    if (!drop_name.empty()) fs.coherence().DropNameLater(drop_name);
    if (err != 0) return (void)fuse_reply_err(req, err);
    fuse_reply_write(req, size);
  });
}

void OpFlush(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  Guarded(req, "flush", [&] {
    if (Filesystem::IsVirtual(ino)) return (void)fuse_reply_err(req, 0);
    Filesystem& fs = Fs(req);
    auto inode = fs.Get(ino);
    if (!inode) return (void)fuse_reply_err(req, ESTALE);
    Status sealed;
    int err = 0;
    {
      std::unique_lock<std::mutex> lock(inode->mu);
      inode->SettleSplit(fi->fh);  // its own write(2) has returned: close() follows it
      AwaitSplitWrite(*inode, lock, fi->fh);
      if (!inode->pristine) sealed = fs.SealLocked(*inode, fi->fh);
      err = inode->TakeOwedError(fi->fh);
      if (!sealed.ok()) {
        err = FailureErrno("flush", sealed);
        fs.DiscardDraftLocked(*inode, fi->fh, err);
      }
    }
    // The kernel's size may be the discarded draft's.
    if (!sealed.ok()) fuse_lowlevel_notify_inval_inode(fs.session(), ino, -1, 0);
    fs.DropStaleAttrs();
    fuse_reply_err(req, err);
  });
}

void OpRelease(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  Guarded(req, "release", [&] {
    if (Filesystem::IsVirtual(ino)) {
      Fs(req).handles().Remove(fi->fh);
      return (void)fuse_reply_err(req, 0);
    }
    Filesystem& fs = Fs(req);
    auto inode = fs.Get(ino);
    if (!inode) return (void)fuse_reply_err(req, ESTALE);
    bool keep_body = false;
    std::size_t kept_bytes = 0;
    std::string drop_name;  // a name whose kernel inode has stale attributes
    {
      std::lock_guard<std::mutex> lock(inode->mu);
      inode->SettleSplit(fi->fh);
      // The last handle seals here, and so does the handle whose change the
      // draft holds. Release arrives asynchronously after close(): another
      // handle may already have reopened the file with O_TRUNC, and its empty,
      // not yet written draft must not become a version; that handle seals at
      // its own flush or release.
      if (inode->handles <= 1 || inode->last_writer == fi->fh) {
        Status sealed = fs.SealLocked(*inode, fi->fh);
        if (!sealed.ok()) LogUnreportedSeal("release", inode->info.key, sealed);
      }
      inode->ForgetHandle(fi->fh);
      if (inode->last_writer == fi->fh) inode->last_writer = 0;
      if (inode->provisional_by == fi->fh) inode->provisional_by = 0;  // its saves are final
      if (inode->handles > 0) --inode->handles;
      if (IsWriter(fi) && inode->writers > 0) --inode->writers;
      drop_name = inode->TakeNameToDrop();
      if (inode->handles == 0 && !inode->dirty) {
        kept_bytes = inode->data.size();
        keep_body = inode->loaded && !inode->unlinked && kept_bytes <= kMaxKeptBodyBytes;
        if (!keep_body) {
          inode->Unload();
        }
      }
    }
    fs.inodes().MaybeErase(fs.FromFuse(ino));
    if (keep_body) fs.KeepBody(inode, kept_bytes);
    if (!drop_name.empty()) fs.coherence().DropNameLater(drop_name);
    fs.DropStaleAttrs();
    fuse_reply_err(req, 0);
  });
}

void OpFsync(fuse_req_t req, fuse_ino_t ino, int, fuse_file_info* fi) {
  Guarded(req, "fsync", [&] {
    if (Filesystem::IsVirtual(ino)) return (void)fuse_reply_err(req, 0);
    Filesystem& fs = Fs(req);
    auto inode = fs.Get(ino);
    if (!inode) return (void)fuse_reply_err(req, ESTALE);
    Status status;
    int owed = 0;
    int failed = 0;
    {
      std::lock_guard<std::mutex> lock(inode->mu);
      // The kernel sends an O_SYNC or O_DSYNC handle's writes each with an
      // fsync: those are stored at once, but are saves of the open as its
      // flushes are (coalesced), or every write(2) would be a version.
      const bool per_write = Filesystem::IsSyncHandle(fi->fh);
      status = per_write ? fs.SealLocked(*inode, fi->fh) : fs.SealLocked(*inode);
      owed = inode->TakeOwedError(fi->fh);
      if (status.ok()) {
        // The head is now a deliberate save, also when a flush sealed it
        // before and nothing was left to seal: no later save amends it.
        if (!per_write) inode->provisional_by = 0;
      } else {
        failed = FailureErrno("fsync", status);
        fs.DiscardDraftLocked(*inode, fi->fh, failed);
      }
    }
    if (failed != 0) {
      // The kernel's size may be the discarded draft's.
      fuse_lowlevel_notify_inval_inode(fs.session(), ino, -1, 0);
      return (void)fuse_reply_err(req, failed);
    }
    fs.DropStaleAttrs();
    status = fs.store().Sync();
    if (!status.ok()) return (void)fuse_reply_err(req, FailureErrno("fsync", status));
    fuse_reply_err(req, owed);
  });
}

}  // namespace fusefs
