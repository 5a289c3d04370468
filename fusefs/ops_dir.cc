// Lookup and listing handlers: lookup, forget, opendir, readdir(plus),
// releasedir, fsyncdir. Directory offsets are indexes into a snapshot taken at
// offset 0, so concurrent changes never make a listing skip or repeat names.
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "coherence.h"
#include "filesystem.h"
#include "grainstore/path.h"
#include "history_tree.h"
#include "ops.h"

namespace fusefs {

using grainstore::NodeKind;

namespace {

struct DirHandle {
  std::mutex mu;
  bool loaded = false;
  std::vector<DirEntry> entries;  // "." and ".." first
  std::uint64_t names_gone = 0;  // Filesystem::names_gone() before the snapshot
};

DirEntry DotEntry(const char* name, fuse_ino_t ino) {
  DirEntry entry;
  entry.name = name;
  entry.ino = ino;
  entry.st.st_ino = ino;
  entry.st.st_mode = S_IFDIR;
  return entry;
}

int Snapshot(Filesystem& fs, fuse_ino_t ino, std::vector<DirEntry>* out) {
  out->clear();
  if (Filesystem::IsVirtual(ino)) {
    out->push_back(DotEntry(".", ino));
    out->push_back(DotEntry("..", FUSE_ROOT_ID));
    return fs.history().List(ino, out);
  }
  auto inode = fs.Get(ino);
  if (!inode) return ESTALE;
  grainstore::NodeId parent;
  {
    std::lock_guard<std::mutex> lock(inode->mu);
    if (inode->info.kind != NodeKind::kDirectory) return ENOTDIR;
    parent = inode->info.parent_id;
  }
  out->push_back(DotEntry(".", ino));
  out->push_back(DotEntry("..", ino == FUSE_ROOT_ID ? ino : fs.ToFuse(parent)));
  std::string after;
  for (;;) {
    auto page = fs.store().ReadDir(fs.FromFuse(ino), after, 1024);
    if (!page) return FailureErrno("readdir", page.error());
    if (!page->empty()) after = page->back().name;  // before the names are moved out
    for (auto& child : *page) {
      // A .history the memory tool made at the root stays in the store, but
      // the mount's name is the virtual history directory, never listed.
      if (ino == FUSE_ROOT_ID && child.name == grainstore::kHistoryDirName) continue;
      DirEntry entry;
      entry.name = child.name;
      entry.ino = fs.ToFuse(child.id);
      Filesystem::FillAttrFromNode(child, &entry.st);
      entry.node = std::move(child);
      out->push_back(std::move(entry));
    }
    if (page->size() < 1024) return 0;
  }
}

// For an entry of a later page of a listing, once a name may have gone since
// its snapshot: the entry for the node that holds the name now (a lookup
// counted), or, when the name could not be read, the dirent alone (no node,
// so no dentry). False when the name is gone: a dentry for it would keep a
// removed or moved name alive in the kernel for kEntryTimeout, and a write
// through it would land on a deleted file or on the moved one.
bool EntryAsItIsNow(Filesystem& fs, fuse_ino_t dir, const DirEntry& entry, fuse_entry_param* e) {
  auto now = fs.store().Lookup(fs.FromFuse(dir), entry.name);
  if (now) {
    fs.MakeEntry(*now, e);
    return true;
  }
  if (now.error().IsNotFound()) return false;
  e->attr = entry.st;
  return true;
}

void ReadDirCommon(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi,
                   bool plus) {
  Filesystem& fs = Fs(req);
  auto* handle = OpenHandles::Get<DirHandle>(fi->fh);
  std::vector<char> buf(size);
  std::size_t used = 0;
  int err = 0;
  if (plus && off != 0) fs.coherence().CatchUp();  // another process's change counts at once
  {
    // No reply while the lock is held: once the kernel has the reply, the
    // process may close the directory and RELEASEDIR may free `handle`, its
    // mutex included, before this thread has unlocked it.
    std::lock_guard<std::mutex> lock(handle->mu);
    bool look_again = false;
    if (off == 0 || !handle->loaded) {
      handle->names_gone = fs.names_gone();
      err = Snapshot(fs, ino, &handle->entries);
      if (err == 0) handle->loaded = true;
    } else if (plus) {
      look_again = fs.names_gone() != handle->names_gone;
    }
    if (err != 0) {
      handle->entries.clear();
      handle->loaded = false;  // the next read, at any offset, tries again
    }
    for (std::size_t i = static_cast<std::size_t>(off); i < handle->entries.size(); ++i) {
      const DirEntry& entry = handle->entries[i];
      char* dst = buf.data() + used;
      std::size_t room = size - used;
      off_t next = static_cast<off_t>(i + 1);
      std::size_t need;
      if (!plus) {
        need = fuse_add_direntry(req, dst, room, entry.name.c_str(), &entry.st, next);
      } else {
        fuse_entry_param e{};
        need = fuse_add_direntry_plus(req, nullptr, 0, entry.name.c_str(), nullptr, 0);
        if (need > room) break;
        if (entry.node && look_again) {
          if (!EntryAsItIsNow(fs, ino, entry, &e)) continue;
        } else if (entry.node) {
          fs.MakeEntry(*entry.node, &e);  // counts a lookup: only once it fits
        } else if (i >= 2) {
          // A .history entry: counted once it fits. One dropped since the
          // listing was made goes without a node (e.ino 0: the kernel looks
          // it up when it needs it), but keeps its dirent's number, st_ino
          // (readdir(3) skips a dirent numbered 0).
          e.attr = entry.st;
          if (fs.history().CountLookup(entry.ino)) {
            e.ino = entry.ino;
            e.generation = kGeneration;  // as a lookup's
            e.attr_timeout = e.entry_timeout = 1.0;
          }
        } else {
          e.attr = entry.st;  // "." and "..": no dentry, no lookup count
        }
        need = fuse_add_direntry_plus(req, dst, room, entry.name.c_str(), &e, next);
      }
      if (need > room) break;
      used += need;
    }
  }
  if (err != 0) return (void)fuse_reply_err(req, err);
  fuse_reply_buf(req, buf.data(), used);
}

// A lookup in a directory another process deleted lately, while the
// kernel still holds it under its old path, came by that path: when a
// directory stands there again (made anew, or moved onto it), the name is
// looked up in it, as on a local disk. (A request that changes a name there
// is sent back instead, Filesystem::SendsBackName.)
grainstore::Result<grainstore::NodeInfo> LookUpInPathMadeAgain(Filesystem& fs, fuse_ino_t parent,
                                                               std::string_view name) {
  std::string key;
  if (auto dir = fs.inodes().Find(fs.FromFuse(parent))) {
    std::lock_guard<std::mutex> lock(dir->mu);
    if (dir->unlinked && NowNs() < dir->name_stale_until_ns) key = dir->info.key;
  }
  if (key.empty()) return grainstore::Status::NotFound("no such name");
  return fs.store().StatKey(fs.ns(), grainstore::JoinKey(key, name));
}

}  // namespace

void OpLookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  Guarded(req, "lookup", [&] {
    Filesystem& fs = Fs(req);
    fuse_entry_param e{};
    std::string_view n(name);
    if (Filesystem::IsVirtual(parent)) {
      int err = fs.history().Lookup(parent, n, &e);
      if (err != 0) return (void)fuse_reply_err(req, err);
      return (void)fuse_reply_entry(req, &e);
    }
    if (parent == FUSE_ROOT_ID && n == grainstore::kHistoryDirName) {
      fs.history().RootEntry(&e);
      return (void)fuse_reply_entry(req, &e);
    }
    if (n.size() > grainstore::kMaxNameBytes) return (void)fuse_reply_err(req, ENAMETOOLONG);
    fs.coherence().CatchUp();
    auto node = fs.store().Lookup(fs.FromFuse(parent), n);
    if (!node && node.error().IsNotFound()) node = LookUpInPathMadeAgain(fs, parent, n);
    if (!node) {
      if (node.error().IsNotFound()) {
        fs.sent_back().Looked(fuse_req_ctx(req)->pid, parent, n, false);
        e.ino = 0;  // a negative entry, checked again at the next lookup
        e.entry_timeout = kNegativeEntryTimeout;
        return (void)fuse_reply_entry(req, &e);
      }
      int err = node.error().code() == grainstore::StatusCode::kInvalidArgument
                    ? ENOENT
                    : FailureErrno("lookup", node.error());
      return (void)fuse_reply_err(req, err);
    }
    fs.MakeEntry(*node, &e);
    fs.sent_back().Looked(fuse_req_ctx(req)->pid, parent, n, true);
    fuse_reply_entry(req, &e);
  });
}

void OpForget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
  try {
    if (!Filesystem::IsVirtual(ino)) {
      Fs(req).inodes().Forget(Fs(req).FromFuse(ino), nlookup);
    } else {
      Fs(req).history().Forget(ino, nlookup);
    }
  } catch (...) {
    Log(LogLevel::kError, "forget: unexpected exception");
  }
  fuse_reply_none(req);
}

void OpForgetMulti(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
  try {
    Filesystem& fs = Fs(req);
    for (size_t i = 0; i < count; ++i) {
      if (!Filesystem::IsVirtual(forgets[i].ino)) {
        fs.inodes().Forget(fs.FromFuse(forgets[i].ino), forgets[i].nlookup);
      } else {
        fs.history().Forget(forgets[i].ino, forgets[i].nlookup);
      }
    }
  } catch (...) {
    Log(LogLevel::kError, "forget_multi: unexpected exception");
  }
  fuse_reply_none(req);
}

void OpOpendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  Guarded(req, "opendir", [&] {
    Filesystem& fs = Fs(req);
    if (Filesystem::IsVirtual(ino) && !fs.history().IsDirectory(ino)) {
      return (void)fuse_reply_err(req, ENOTDIR);
    }
    if (!Filesystem::IsVirtual(ino)) {
      fs.coherence().CatchUp();
      auto dir = fs.Get(ino);
      if (!dir) return (void)fuse_reply_err(req, ESTALE);
      if (fs.SendsBackNode(fuse_req_ctx(req)->pid, *dir)) return (void)fuse_reply_err(req, ESTALE);
    }
    fi->fh = fs.handles().Add(std::make_unique<DirHandle>());
    if (fuse_reply_open(req, fi) != 0) fs.handles().Remove(fi->fh);
  });
}

void OpReaddir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  Guarded(req, "readdir", [&] { ReadDirCommon(req, ino, size, off, fi, false); });
}

void OpReaddirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  Guarded(req, "readdirplus", [&] { ReadDirCommon(req, ino, size, off, fi, true); });
}

void OpReleasedir(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  Fs(req).handles().Remove(fi->fh);
  fuse_reply_err(req, 0);
}

void OpFsyncdir(fuse_req_t req, fuse_ino_t, int, fuse_file_info*) {
  Guarded(req, "fsyncdir", [&] {
    grainstore::Status synced = Fs(req).store().Sync();
    fuse_reply_err(req, synced.ok() ? 0 : FailureErrno("fsyncdir", synced));
  });
}

}  // namespace fusefs
