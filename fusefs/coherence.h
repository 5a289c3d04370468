// Coherence: keeps the kernel's caches and the inode cache in step with other
// processes (CLI, memory tool, bindings) writing the same store. A background
// thread polls Store::DataVersion(); when it moves, op-log entries from other
// origins are replayed as kernel invalidations (inval_entry / inval_inode).
#ifndef FUSEFS_COHERENCE_H_
#define FUSEFS_COHERENCE_H_

#include <fuse_lowlevel.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <vector>

#include "grainstore/store.h"
#include "recent_changes.h"
#include "store_watch.h"

namespace fusefs {

class Filesystem;
struct Inode;

// How long after another process changed a path opens of it bypass the
// kernel's page cache (RecentChanges).
inline constexpr std::int64_t kRecentChangeNs = 2'000'000'000;

// Thread-safe. Lock order: mu_ before any InodeTable/Inode mutex; no lock is
// held while a notification is written to the kernel.
class Coherence {
 public:
  explicit Coherence(Filesystem* fs);
  ~Coherence();
  Coherence(const Coherence&) = delete;
  Coherence& operator=(const Coherence&) = delete;

  // Positions the op-log cursor at the newest entry. Store errors.
  grainstore::Status Init();
  // Starts and stops the polling thread (interval in milliseconds), and the
  // watch that catches up as soon as another process writes the store's
  // files (StoreWatch; without it, changes wait for the next poll).
  void Start(int interval_ms);
  void Stop();
  // Cheap synchronous check for request paths: when another process has
  // committed, refreshes the inode cache now and queues kernel notifications
  // for the polling thread. Returns true when something changed. While no
  // connection has committed since the last check it takes no lock at all
  // (Store::CommitFingerprint), so parallel lookups do not queue on it.
  bool CatchUp();
  // Makes the refresh of `id` that a catch-up left for later, because a
  // seal held the inode (RefreshNode), once that seal ends: a request about
  // to act on the inode sees what other processes did to it (an open of a
  // file deleted or moved meanwhile is sent back). Takes no lock while no
  // refresh waits; not with the inode's mutex held.
  void Settle(grainstore::NodeId id);
  // Loads the last version of a file another process deleted, for the
  // handles open on it, or opened on it since through a descriptor that
  // outlived its name (the inode's mutex held).
  void LoadDeletedLocked(Inode& inode);
  // Marks an inode whose node the store no longer has (deleted or replaced,
  // by any process; node ids are never reused) unlinked, and sends opens
  // that reach it through an old name back to look it up again (the inode's
  // mutex held).
  void NodeGoneLocked(Inode& inode);
  // Whether any directory was moved or deleted by another process within
  // kStaleNameNs (one atomic load), and whether directory `id`, or one
  // above it, was, while the kernel may hold its old name: a request in it
  // may have come by that name (Filesystem::SendsBackName, SendsBackNode).
  // The second takes the directories' mutexes in turn, so not with an
  // inode's mutex held.
  bool AnyDirectoryGoneLately(std::int64_t now) const {
    return now < dirs_gone_until_ns_.load(std::memory_order_acquire);
  }
  bool DirectoryGoneLately(grainstore::NodeId id, std::int64_t now) const;
  // The inodes under a directory moved from `old_key` to `new_key` take the
  // new keys. When another process moved it (`send_back`), opens that reach
  // them are also sent back (ESTALE) for a while, as for a file moved
  // itself; a move through the mount needs no more than the keys.
  void MoveKeysUnder(const std::string& old_key, const std::string& new_key, bool send_back);
  // Has the polling thread drop the kernel's name `key` (and its inode's
  // cached attributes) at its first pass after kDropNameDelayNs: the last
  // release of an inode whose size the kernel kept across another process's
  // change (Inode::kernel_attrs_stale). The kernel sends a release while
  // the closing file still holds its name; dropped before it lets go, the
  // name would be looked up again onto the same inode. Not with an inode's
  // mutex held.
  void DropNameLater(const std::string& key);
  // Whether another process changed `key` (added, edited, moved, deleted
  // it) within kRecentChangeNs: an open of it is then given direct I/O.
  bool ChangedLately(std::string_view key) const;

 private:
  struct Notice {
    bool entry = false;  // true: inval_entry(parent, name); false: inval_inode(ino)
    fuse_ino_t ino = 0;
    std::string name;
  };

  void Run(int interval_ms);
  // Sets *checked (when given) once the store's data version was read.
  bool CatchUpLocked(bool* checked = nullptr);
  // Logs a catch-up's failure once (last_failure_).
  void LogFailureLocked(std::string message);
  // One round of the polling thread: waits up to `interval_ms` (or a wake),
  // then catches up and sends what it found.
  void RunOnce(int interval_ms);
  void Apply(const grainstore::OpRecord& op);
  void InvalidateKey(const std::string& key);
  // The directory the kernel knows by `key`, as this daemon last heard of
  // it (a pass over the known inodes), or 0.
  grainstore::NodeId KnownDirectoryAt(const std::string& key);
  void RefreshNode(grainstore::NodeId id);
  // RefreshNode again for the inodes a seal held at the last try.
  void RefreshDeferred();
  void MoveKeysUnderLocked(const std::string& old_key, const std::string& new_key,
                           bool send_back);
  void SendNotices();
  // Sends opens that reach `inode` back to look its name up again for a
  // while (OpOpen): its node was deleted or moved away (its mutex held).
  void MarkNameStaleLocked(Inode& inode);

  // Directories walked up from one in DirectoryGoneLately at most (a path
  // is at most 4,096 bytes, so this bounds a loop in a damaged table).
  static constexpr int kMaxDepth = 2048;

  Filesystem* fs_;
  // Until when (NowNs) some directory is marked as in MarkNameStaleLocked.
  std::atomic<std::int64_t> dirs_gone_until_ns_{0};
  // The store's commit fingerprint when a check last found everything caught
  // up; 0 forces the next check.
  std::atomic<std::uint64_t> caught_up_at_{0};
  // Set by Stop (under mu_) before it waits for the thread, which then ends;
  // read without the mutex too, so a batch of notices being sent is cut
  // short (the kernel's caches go with the mount).
  std::atomic<bool> stopping_{false};
  std::mutex mu_;  // guards everything below
  std::uint64_t data_version_ = 0;
  std::uint64_t cursor_ = 0;
  std::vector<Notice> pending_;
  // Inodes whose refresh waits for their seal to end (RefreshNode).
  std::unordered_set<grainstore::NodeId> deferred_;
  std::atomic<bool> any_deferred_{false};  // !deferred_.empty(), read without mu_
  // DropNameLater's names, each with the time (NowNs) from which it is due.
  std::vector<std::pair<std::string, std::int64_t>> drops_;
  static constexpr std::int64_t kDropNameDelayNs = 50'000'000;
  RecentChanges recent_{kRecentChangeNs};
  bool wake_ = false;
  // The last failure a catch-up logged, which is not logged again until a
  // catch-up succeeds (a store that fails every poll would log ten lines a
  // second).
  std::string last_failure_;
  std::condition_variable cv_;
  std::thread thread_;
  StoreWatch watch_;
};

}  // namespace fusefs

#endif  // FUSEFS_COHERENCE_H_
