// Attribute handlers: init/destroy, getattr, setattr, readlink, statfs.
#include <linux/falloc.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "coherence.h"
#include "filesystem.h"
#include "history_tree.h"
#include "ops.h"

namespace fusefs {

using grainstore::NodeKind;
using grainstore::Status;

namespace {

// Nanoseconds since the epoch, as the store keeps times. A time that int64
// nanoseconds cannot hold (before 1677-09-21 or after 2262-04-11) is clamped
// to the nearest one they can, as the kernel clamps a time to a file
// system's range (ext4's: 1901-2446); it wrapped around to another date.
std::int64_t TimeNs(const timespec& ts) {
  std::int64_t ns = 0;
  if (__builtin_mul_overflow(std::int64_t{ts.tv_sec}, std::int64_t{1'000'000'000}, &ns) ||
      __builtin_add_overflow(ns, std::int64_t{ts.tv_nsec}, &ns)) {
    return ts.tv_sec < 0 ? std::numeric_limits<std::int64_t>::min()
                         : std::numeric_limits<std::int64_t>::max();
  }
  return ns;
}

// Applies a size change to the draft. A path truncate with no open writer
// seals its own version; otherwise the next flush/close seals. `fi`: the
// handle of an ftruncate, or null.
int TruncateLocked(Filesystem& fs, Inode& inode, off_t size, const fuse_file_info* fi) {
  if (inode.info.kind == NodeKind::kDirectory) return EISDIR;
  if (fi != nullptr) {
    if (int failed = inode.FailedErrno(fi->fh)) return failed;  // see Inode::failed_handles
  }
  if (inode.info.kind != NodeKind::kFile) return EINVAL;
  if (PastFileLimit(static_cast<std::uint64_t>(size))) return EFBIG;
  if (size == 0) {
    inode.data.clear();
    inode.loaded = true;
  } else {
    Status loaded = fs.LoadLocked(inode);
    if (!loaded.ok()) return FailureErrno("truncate", loaded);
    inode.data.resize(static_cast<std::size_t>(size));
    inode.pristine = false;
  }
  inode.dirty = true;
  inode.info.mtime_ns = inode.info.ctime_ns = NowNs();
  inode.NoteChange(fi != nullptr ? fi->fh : 0);
  if (fi == nullptr && inode.writers == 0) {
    Status sealed = fs.SealLocked(inode);
    if (!sealed.ok()) {
      // truncate() reports the failure: it must not take effect later. The
      // kernel applies a truncate only when it succeeds.
      int err = FailureErrno("truncate", sealed);
      fs.DiscardDraftLocked(inode, 0, err);
      return err;
    }
  }
  return 0;
}

grainstore::AttrUpdate ToUpdate(const struct stat* attr, int to_set) {
  grainstore::AttrUpdate update;
  if (to_set & FUSE_SET_ATTR_MODE) update.mode = attr->st_mode & 07777;
  if (to_set & FUSE_SET_ATTR_UID) update.uid = attr->st_uid;
  if (to_set & FUSE_SET_ATTR_GID) update.gid = attr->st_gid;
  if (to_set & FUSE_SET_ATTR_ATIME_NOW) {
    update.atime_ns = NowNs();
  } else if (to_set & FUSE_SET_ATTR_ATIME) {
    update.atime_ns = TimeNs(attr->st_atim);
  }
  if (to_set & FUSE_SET_ATTR_MTIME_NOW) {
    update.mtime_ns = NowNs();
  } else if (to_set & FUSE_SET_ATTR_MTIME) {
    update.mtime_ns = TimeNs(attr->st_mtim);
  }
  if (to_set & FUSE_SET_ATTR_CTIME) update.ctime_ns = TimeNs(attr->st_ctim);
  return update;
}

void ApplyLocally(const grainstore::AttrUpdate& u, grainstore::NodeInfo* info) {
  if (u.mode) info->mode = *u.mode;
  if (u.uid) info->uid = *u.uid;
  if (u.gid) info->gid = *u.gid;
  if (u.atime_ns) info->atime_ns = *u.atime_ns;
  if (u.mtime_ns) info->mtime_ns = *u.mtime_ns;
  info->ctime_ns = u.ctime_ns ? *u.ctime_ns : NowNs();
}

}  // namespace

void OpInit(void* userdata, fuse_conn_info* conn) {
  auto* fs = static_cast<Filesystem*>(userdata);
  auto want = [conn](unsigned cap) {
    if (conn->capable & cap) conn->want |= cap;
  };
  want(FUSE_CAP_ATOMIC_O_TRUNC);
  want(FUSE_CAP_READDIRPLUS);
  conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
  want(FUSE_CAP_CACHE_SYMLINKS);
  want(FUSE_CAP_PARALLEL_DIROPS);
  want(FUSE_CAP_ASYNC_READ);
  conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
  if (fs->want_writeback() && (conn->capable & FUSE_CAP_WRITEBACK_CACHE)) {
    conn->want |= FUSE_CAP_WRITEBACK_CACHE;
    fs->set_writeback(true);
  }
  conn->want &= ~(FUSE_CAP_EXPORT_SUPPORT | FUSE_CAP_POSIX_ACL);
  conn->max_write = 1u << 20;
  conn->max_readahead = 1u << 20;
  conn->time_gran = 1;
  Log(LogLevel::kInfo, "mounted (writeback cache {})", fs->writeback() ? "on" : "off");
}

void OpDestroy(void* userdata) { static_cast<Filesystem*>(userdata)->SealAll(); }

void OpGetattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  Guarded(req, "getattr", [&] {
    Filesystem& fs = Fs(req);
    struct stat st {};
    if (Filesystem::IsVirtual(ino)) {
      int err = fs.history().GetAttr(ino, &st);
      if (err != 0) return (void)fuse_reply_err(req, err);
      return (void)fuse_reply_attr(req, &st, 1.0);
    }
    fs.coherence().CatchUp();
    auto inode = fs.Get(ino);
    if (!inode) return (void)fuse_reply_err(req, ESTALE);
    {
      std::lock_guard<std::mutex> lock(inode->mu);
      fs.FillAttrLocked(*inode, &st);
    }
    fuse_reply_attr(req, &st, kAttrTimeout);
  });
}

void OpSetattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set, fuse_file_info* fi) {
  Guarded(req, "setattr", [&] {
    Filesystem& fs = Fs(req);
    if (Filesystem::IsVirtual(ino)) return (void)fuse_reply_err(req, EROFS);
    // A truncate works on the body the inode holds: another process's
    // change committed just before must be seen first, or the cut would be
    // made from the version before it and sealed over it.
    fs.coherence().CatchUp();
    auto inode = fs.Get(ino);
    if (!inode) return (void)fuse_reply_err(req, ESTALE);
    // A truncate by path may have come by a name another process just moved
    // or deleted: sent back as an open is, so that it cuts nothing there.
    // (`ftruncate` passes its handle; `chmod` and `fchmod` cannot be told
    // apart, and `fchmod` is not retried, so they are not sent back.)
    if ((to_set & FUSE_SET_ATTR_SIZE) && fi == nullptr &&
        fs.SendsBackNode(fuse_req_ctx(req)->pid, *inode)) {
      return (void)fuse_reply_err(req, ESTALE);
    }
    grainstore::AttrUpdate update = ToUpdate(attr, to_set);
    bool has_attrs = update.mode || update.uid || update.gid || update.atime_ns ||
                     update.mtime_ns || update.ctime_ns;
    struct stat st {};
    int err = 0;
    {
      std::lock_guard<std::mutex> lock(inode->mu);
      if (to_set & FUSE_SET_ATTR_SIZE) {
        err = TruncateLocked(fs, *inode, attr->st_size, fi);
      }
      if (err == 0 && has_attrs) {
        if (inode->unlinked) {
          ApplyLocally(update, &inode->info);
        } else {
          const SavingMark saving(*inode);
          auto node = fs.store().SetAttributes(inode->info.id, update);
          if (!node && node.error().IsNotFound()) {
            // Deleted by another process after the catch-up above: as for
            // an inode unlinked before it, the change is the inode's alone
            // (an open descriptor outlives its name: fchmod, fchown and
            // futimens do not fail with ENOENT).
            fs.coherence().NodeGoneLocked(*inode);
            ApplyLocally(update, &inode->info);
          } else if (!node) {
            err = FailureErrno("setattr", node.error());
          } else {
            // An unsealed draft keeps its size and, unless this call sets
            // it, its mtime: the store's are the last sealed version's, and
            // the seal writes the draft's (cp -p, vim's fchmod before close).
            const std::uint64_t size = inode->info.size;
            const std::int64_t mtime_ns = inode->info.mtime_ns;
            inode->info = *node;
            if (inode->dirty) {
              inode->info.size = size;
              if (!update.mtime_ns) inode->info.mtime_ns = mtime_ns;
            }
          }
        }
      }
      fs.FillAttrLocked(*inode, &st);
    }
    if (err != 0) return (void)fuse_reply_err(req, err);
    fuse_reply_attr(req, &st, kAttrTimeout);
  });
}

void OpFallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
                 fuse_file_info* fi) {
  Guarded(req, "fallocate", [&] {
    Filesystem& fs = Fs(req);
    if (Filesystem::IsVirtual(ino)) return (void)fuse_reply_err(req, EROFS);
    // The plain mode makes the file at least offset + length bytes long.
    // FALLOC_FL_KEEP_SIZE only reserves room past the end (rsync
    // --preallocate, databases): nothing here reserves space, but the range
    // is weighed as the plain mode's growth is, and writes into it then fail
    // no sooner than anywhere else. Punching holes or zeroing ranges is not
    // offered.
    if (mode != 0 && mode != FALLOC_FL_KEEP_SIZE) return (void)fuse_reply_err(req, EOPNOTSUPP);
    // A size change works on the body the inode holds, as a truncate does.
    fs.coherence().CatchUp();
    auto inode = fs.Get(ino);
    if (!inode) return (void)fuse_reply_err(req, ESTALE);
    off_t end = 0;
    if (offset < 0 || length <= 0 || __builtin_add_overflow(offset, length, &end)) {
      return (void)fuse_reply_err(req, offset < 0 || length <= 0 ? EINVAL : EFBIG);
    }
    int err = 0;
    {
      std::lock_guard<std::mutex> lock(inode->mu);
      // Growing past the store's limit is refused before anything changes
      // (TruncateLocked), where glibc's fallback of one write per block
      // would have grown the file up to the limit before failing. Within it,
      // writes to the range must then not fail for want of room (POSIX): a
      // full disk refuses the growth, as a local one does.
      const std::uint64_t size = inode->FileSize();
      if (static_cast<std::uint64_t>(end) > size) {
        const bool within_limit = !PastFileLimit(static_cast<std::uint64_t>(end));
        if (within_limit && RefusedForSpace(fs, static_cast<std::size_t>(end) - size)) {
          err = ENOSPC;
        } else if (mode == FALLOC_FL_KEEP_SIZE) {
          err = within_limit ? 0 : EFBIG;
        } else {
          err = TruncateLocked(fs, *inode, end, fi);
        }
      }
    }
    fuse_reply_err(req, err);
  });
}

void OpReadlink(fuse_req_t req, fuse_ino_t ino) {
  Guarded(req, "readlink", [&] {
    Filesystem& fs = Fs(req);
    if (Filesystem::IsVirtual(ino)) return (void)fuse_reply_err(req, EINVAL);
    auto inode = fs.Get(ino);
    if (!inode) return (void)fuse_reply_err(req, ESTALE);
    std::string target;
    bool is_symlink;
    {
      std::lock_guard<std::mutex> lock(inode->mu);
      is_symlink = inode->info.kind == NodeKind::kSymlink;
      if (is_symlink) target = inode->info.symlink_target;
    }
    if (!is_symlink) return (void)fuse_reply_err(req, EINVAL);
    fuse_reply_readlink(req, target.c_str());
  });
}

void OpStatfs(fuse_req_t req, fuse_ino_t) {
  Guarded(req, "statfs", [&] {
    Filesystem& fs = Fs(req);
    std::string dir = fs.db_path();
    std::size_t slash = dir.rfind('/');
    dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : dir.substr(0, slash));
    struct statvfs host {};
    struct statvfs st {};
    st.f_bsize = st.f_frsize = 4096;
    st.f_namemax = 255;
    st.f_files = 1ull << 32;
    // Used: every node of the namespace (`df -i`), not only those the
    // kernel holds now (right after a mount, the root alone).
    st.f_ffree = st.f_favail = st.f_files - std::min<std::uint64_t>(fs.UsedNodes(), st.f_files);
    if (statvfs(dir.c_str(), &host) == 0 && host.f_frsize != 0) {
      double scale = static_cast<double>(host.f_frsize) / 4096.0;
      st.f_blocks = static_cast<fsblkcnt_t>(host.f_blocks * scale);
      st.f_bfree = static_cast<fsblkcnt_t>(host.f_bfree * scale);
      st.f_bavail = static_cast<fsblkcnt_t>(host.f_bavail * scale);
    }
    fuse_reply_statfs(req, &st);
  });
}

}  // namespace fusefs
