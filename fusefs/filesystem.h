// Filesystem: the state behind one mount (store, namespace, inode cache,
// .history tree, coherence with other processes) and the helpers the FUSE
// operation handlers share. Handlers live in ops_*.cc; see ops.h.
#ifndef FUSEFS_FILESYSTEM_H_
#define FUSEFS_FILESYSTEM_H_

#include <fcntl.h>
#include <sys/stat.h>

#include <fuse_lowlevel.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "grainstore/store.h"
#include "inode_table.h"
#include "open_handles.h"
#include "version_bodies.h"
#include "sent_back.h"
#include "space_guard.h"

namespace fusefs {

class Coherence;
class HistoryTree;

// The generation of every entry the mount sends, store nodes and .history
// alike: a number names one node for good (store node ids are never reused),
// and the kernel takes a new generation for a number it holds as the number
// reused, and fails every descriptor and working directory on the old inode
// with EIO.
inline constexpr std::uint64_t kGeneration = 1;

// Kernel cache lifetimes. Long, because every change that bypasses the kernel
// (other processes writing the store) is invalidated explicitly.
inline constexpr double kAttrTimeout = 300.0;
inline constexpr double kEntryTimeout = 300.0;
// Except a name's absence, which the kernel would otherwise answer by itself
// for an open right after another process created the name, before the
// poller's invalidation arrives: a missing name is asked for every time, as
// `passthrough_ll` asks.
inline constexpr double kNegativeEntryTimeout = 0.0;
// How long after another process deleted or moved a file an open that
// reaches it by inode is sent back to look its name up again (ESTALE): ten
// of the coherence poller's intervals, by which it has told the kernel to
// drop the old name. A lookup that finds the file by a name ends it early.
inline constexpr std::int64_t kStaleNameNs = 1'000'000'000;
// How long a thread sent back holds the pass its retry uses (SentBack): the
// kernel retries at once; the bound keeps a pass no retry used from lasting.
inline constexpr std::int64_t kSentBackPassNs = 100'000'000;

// Clean bodies kept loaded after a file's last release, so an
// open-append-close loop does not read the body back from the store at every
// cycle: the most recently released kKeptBodies files, kKeptBytes in all, of
// at most kMaxKeptBodyBytes each (one large log may take the whole budget:
// reading it back at every append would cost a copy of it per line).
// Changes by other processes drop them (coherence.cc).
inline constexpr std::size_t kKeptBodies = 64;
inline constexpr std::size_t kKeptBytes = std::size_t{64} << 20;
inline constexpr std::size_t kMaxKeptBodyBytes = kKeptBytes;

// Saves of one open file (a flush at every close() of a copy of its
// descriptor, as each child of a shell with `> f` makes) within this long of
// the first are one logical save: the earlier versions are kept but marked
// transient. A writer that stays open longer leaves a visible version per
// window, a checkpoint.
inline constexpr std::int64_t kCoalesceWindowNs = std::int64_t{5'000'000'000};

// Inode numbers with this bit are .history entries, never store nodes.
inline constexpr fuse_ino_t kVirtualBit = fuse_ino_t{1} << 63;

// One entry of a directory listing snapshot (see ops_dir.cc).
struct DirEntry {
  std::string name;
  fuse_ino_t ino = 0;
  struct stat st {};
  std::optional<grainstore::NodeInfo> node;  // set for store nodes
};

// Thread-safe: handlers run on several FUSE worker threads at once.
class Filesystem {
 public:
  Filesystem();
  ~Filesystem();
  Filesystem(const Filesystem&) = delete;
  Filesystem& operator=(const Filesystem&) = delete;

  // Takes the store (opened after daemonizing, so no SQLite handle crosses a
  // fork) holding namespace `ns` whose root node is `root`; loads the root and
  // the op-log cursor. Must precede the session loop. Store errors.
  grainstore::Status Attach(std::unique_ptr<grainstore::Store> store, grainstore::NsId ns,
                            grainstore::NodeId root, std::string db_path);
  const std::string& db_path() const { return db_path_; }
  // Whether to ask for the kernel's writeback cache (-o writeback_cache).
  // Off by default: in writeback mode the kernel never takes a regular
  // file's size from the server while the inode is cached, so a change made
  // by another process could not reach an already cached file at open.
  bool want_writeback() const { return want_writeback_; }
  void set_want_writeback(bool on) { want_writeback_ = on; }
  // Set by the init callback when the kernel owns O_APPEND and file sizes.
  bool writeback() const { return writeback_; }
  void set_writeback(bool on) { writeback_ = on; }
  // The session notifications go to; set before the loop starts.
  void set_session(fuse_session* session) { session_ = session; }
  fuse_session* session() const { return session_; }

  grainstore::Store& store() { return *store_; }
  grainstore::NsId ns() const { return ns_; }
  grainstore::NodeId root() const { return root_; }
  InodeTable& inodes() { return inodes_; }
  HistoryTree& history() { return *history_; }
  Coherence& coherence() { return *coherence_; }
  // Counts the changes that may have taken a name away: an unlink, rmdir or
  // rename through the mount, another process's change of a name. A
  // listing's later pages come from a snapshot taken at its first; once
  // this count moves, their names are looked up again before the kernel is
  // given a dentry for them (ops_dir.cc).
  void NoteNameMayBeGone() { names_gone_.fetch_add(1, std::memory_order_acq_rel); }
  std::uint64_t names_gone() const { return names_gone_.load(std::memory_order_acquire); }
  // Whether the store's filesystem has room for writes (set up by Attach).
  SpaceGuard& space() { return *space_; }
  // The namespace's node count for statfs (`df -i`): counted in the store
  // at most once per kUsedNodesTtlNs (a count reads one index entry per
  // node, 7-8 ms at 100,000 files), else the last count.
  std::uint64_t UsedNodes();

  fuse_ino_t ToFuse(grainstore::NodeId id) const { return id == root_ ? FUSE_ROOT_ID : id; }
  grainstore::NodeId FromFuse(fuse_ino_t ino) const { return ino == FUSE_ROOT_ID ? root_ : ino; }
  static bool IsVirtual(fuse_ino_t ino) { return (ino & kVirtualBit) != 0; }

  // The cached inode of a kernel inode number; nullptr (logged) if unknown.
  std::shared_ptr<Inode> Get(fuse_ino_t ino);
  // Attributes of an inode (its mutex held by the caller).
  void FillAttrLocked(const Inode& inode, struct stat* st) const;
  static void FillAttrFromNode(const grainstore::NodeInfo& node, struct stat* st);
  // Adds a kernel lookup reference for `node` and fills the entry reply.
  void MakeEntry(const grainstore::NodeInfo& node, fuse_entry_param* entry);

  // Reads the body into `inode.data` unless loaded (mutex held).
  grainstore::Status LoadLocked(Inode& inode);
  // Seals a dirty draft as the file's body (a new version when versioned and
  // changed); no-op when clean; discards the draft of an unlinked inode.
  // `handle`: the open file whose flush or release seals (0: anything else,
  // such as fsync, rename or unmount, whose version is never amended).
  grainstore::Status SealLocked(Inode& inode, std::uint64_t handle = 0);
  // After a seal whose failure (`err`) is reported to the application (a
  // flush, an fsync, a path truncate): discards the draft, so the rejected
  // content is never shown nor sealed later. The inode goes back to the
  // stored body (clean, not pristine, unloaded so the next read reloads it,
  // `stale_pages` so the next open drops the kernel's page cache, attributes
  // re-read from the store), and every other handle whose changes the draft
  // held is owed `err` at its next flush or fsync. `handle`: the handle told
  // now (0: none). The caller then drops the kernel's cached attributes
  // (notify_inval_inode, after releasing the mutex) when the kernel may
  // hold the draft's size.
  void DiscardDraftLocked(Inode& inode, std::uint64_t handle, int err);
  // A new nonzero id for an open regular file's fuse_file_info::fh, opened
  // with `open_flags`; an O_SYNC or O_DSYNC open's id says so (IsSyncHandle),
  // and so does an O_DIRECT open's, or one given direct I/O (IsDirectHandle).
  std::uint64_t NewHandle(int open_flags, bool direct_io = false) {
    std::uint64_t id = next_handle_.fetch_add(1, std::memory_order_relaxed);
    if ((open_flags & O_DSYNC) != 0) id |= kSyncHandleBit;
    if ((open_flags & O_DIRECT) != 0 || direct_io) id |= kDirectHandleBit;
    return id;
  }
  // Whether the handle's writes reach the daemon as the application makes
  // them, past the kernel's page cache (O_DIRECT, or direct I/O given at
  // open), even in writeback mode.
  static bool IsDirectHandle(std::uint64_t fh) { return (fh & kDirectHandleBit) != 0; }
  // `fh` marked as given direct I/O.
  static std::uint64_t DirectHandle(std::uint64_t fh) { return fh | kDirectHandleBit; }
  // Whether the handle was opened O_SYNC or O_DSYNC (O_SYNC includes the
  // O_DSYNC bit): the kernel then sends an fsync after each of its writes.
  static bool IsSyncHandle(std::uint64_t fh) { return (fh & kSyncHandleBit) != 0; }
  // Threads sent back by opens of files other processes deleted or moved.
  SentBack& sent_back() { return sent_back_; }
  // The handles of open directories and `.history` versions.
  OpenHandles& handles() { return handles_; }
  // The bodies of open `.history` versions, shared by their handles.
  VersionBodies& version_bodies() { return version_bodies_; }
  // Called after the last handle of a file was released (its mutex not held):
  // keeps its clean body loaded for the next open, dropping the bodies of the
  // files released longest ago beyond kKeptBodies and kKeptBytes. `bytes`:
  // the body's size, read under the inode's mutex.
  void KeepBody(const std::shared_ptr<Inode>& inode, std::size_t bytes);
  // Re-reads the attributes of a cached node (a directory after an entry change).
  void Refresh(grainstore::NodeId id);
  // A node was just created in cached directory `dir`: the store set the
  // directory's mtime and ctime to the new node's ctime in the same
  // transaction, so the cached attributes follow without a read.
  void EntryAdded(grainstore::NodeId dir, const grainstore::NodeInfo& child);
  // The current store key of a node ("" when it is gone).
  std::string KeyOf(grainstore::NodeId id);
  // errno (0: fine) for creating `name` in kernel directory `parent`:
  // EROFS inside .history, EPERM for .history at the root, EILSEQ for a name
  // that is not UTF-8, EINVAL / ENAMETOOLONG for other names
  // grainstore::ValidateName rejects. Logs refusals.
  int CheckNewName(fuse_ino_t parent, std::string_view name, const char* op);
  // Whether a request by thread `tid` that makes or removes `name` in
  // kernel directory `parent` (a create, mkdir, symlink, unlink, rmdir, or a
  // rename onto it, moving something out of `from_parent`) is sent back
  // (ESTALE): true when another process moved or deleted one of the two
  // directories lately (Coherence::DirectoryGoneLately), since the kernel
  // may have reached it by its old path, and the thread holds no pass
  // (SentBack). The kernel then walks the path again, looking each name up
  // afresh: by the old path the call fails with ENOENT, as on a local disk,
  // instead of acting in the moved directory; by a path that still leads
  // there it is let in. Otherwise uses up the thread's pass.
  bool SendsBackName(std::int64_t tid, fuse_ino_t parent, std::string_view name,
                     fuse_ino_t from_parent = 0);
  // Whether an open, opendir or truncate by path (no handle) by thread
  // `tid` of `inode` (its mutex not held) is sent back (ESTALE): another
  // process deleted it or moved it away, or moved or deleted its directory,
  // lately, while the kernel may still hold the old name (the poller drops
  // it within its interval). The
  // kernel then walks the path once more, looking every name up afresh: by
  // the old name it finds the name gone (ENOENT, or a new file for O_CREAT)
  // or what was made there since; the retry is let in, whichever file it
  // reaches (SentBack: a thread is sent back once per retry). Otherwise
  // uses up the thread's pass.
  bool SendsBackNode(std::int64_t tid, Inode& inode);
  // Versioning for a file named `name` in directory `dir` (store id): the
  // name policy (VersioningFor), and a SQLite sidecar (`X-journal`, `X-wal`,
  // `X-shm`) or a GNU patch copy of X (PatchTempBase) is unversioned while a
  // file X lies beside it.
  // `moving`: the node a rename moves to `name` (its own old name is not a
  // file beside the new one: `mv travel travel-journal`).
  grainstore::Versioning VersioningOfNewName(grainstore::NodeId dir, std::string_view name,
                                             grainstore::NodeId moving = 0);
  // Seals every dirty draft (unmount).
  void SealAll();
  // In writeback mode, has the kernel send the pages written to files still
  // open for writing that it has not passed on yet (an inode's invalidation
  // writes its dirty pages back first, and waits for the WRITE replies): at a
  // stop by signal, before the loop ends, so that SealAll saves them. Needs
  // the workers answering; a no-op without writeback.
  void FetchKernelWrites();
  // Drops the kernel's cached attributes of the files whose size a seal
  // changed under it (appends that went after another writer's body): the
  // kernel may have asked for them while the draft was open, and would keep
  // the draft's size for kAttrTimeout. Called by the handler that sealed,
  // once it has let go of the inode's mutex, and by the poller each round
  // for seals made on other paths.
  void DropStaleAttrs();

 private:
  // The tail of SendsBackName and SendsBackNode: when `stale`, sends the
  // thread back unless it holds a pass (SentBack::Admit, with the name a
  // request makes, if any); otherwise uses its pass up.
  bool SendsBack(std::int64_t tid, bool stale, std::int64_t now, fuse_ino_t parent = 0,
                 std::string_view name = {});

  std::unique_ptr<grainstore::Store> store_;
  grainstore::NsId ns_ = 0;
  grainstore::NodeId root_ = 0;
  std::string db_path_;
  std::atomic<bool> writeback_{false};
  std::atomic<std::uint64_t> names_gone_{0};
  static constexpr std::uint64_t kSyncHandleBit = std::uint64_t{1} << 63;
  static constexpr std::uint64_t kDirectHandleBit = std::uint64_t{1} << 62;
  std::atomic<std::uint64_t> next_handle_{1};
  SentBack sent_back_{kSentBackPassNs};
  OpenHandles handles_;
  VersionBodies version_bodies_;
  bool want_writeback_ = false;
  InodeTable inodes_;
  std::mutex stale_attrs_mu_;  // a leaf
  std::vector<fuse_ino_t> stale_attrs_;  // for DropStaleAttrs
  std::atomic<bool> stale_attrs_waiting_{false};  // stale_attrs_ is not empty
  std::unique_ptr<HistoryTree> history_;
  std::unique_ptr<Coherence> coherence_;
  std::unique_ptr<SpaceGuard> space_;
  fuse_session* session_ = nullptr;
  std::mutex kept_mu_;  // guards kept_; taken without any Inode::mu held
  struct Kept {
    std::weak_ptr<Inode> inode;
    std::size_t bytes = 0;  // its body's size when kept
  };
  std::deque<Kept> kept_;  // oldest first
  std::size_t kept_bytes_ = 0;
  static constexpr std::int64_t kUsedNodesTtlNs = 1'000'000'000;
  std::mutex used_mu_;  // guards the two below
  std::uint64_t used_nodes_ = 0;
  std::int64_t used_counted_ns_ = 0;  // when used_nodes_ was counted (0: never)
};

// The Filesystem of a request.
inline Filesystem& Fs(fuse_req_t req) { return *static_cast<Filesystem*>(fuse_req_userdata(req)); }

// Nanoseconds since the epoch, CLOCK_REALTIME.
std::int64_t NowNs();

// A time the store keeps (nanoseconds since the epoch, negative before it)
// as a stat field: tv_nsec always in [0, 1e9).
timespec ToTimespec(std::int64_t ns);

}  // namespace fusefs

#endif  // FUSEFS_FILESYSTEM_H_
