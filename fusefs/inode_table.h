// In-memory inode cache of the mount: one Inode per store node the kernel
// knows (lookup count > 0) or has open, and per node whose draft is not yet
// saved or whose clean body is kept for the next open, after the kernel forgot it. It serves getattr without SQL and holds
// each file's draft: the body being written, shared by all handles.
#ifndef FUSEFS_INODE_TABLE_H_
#define FUSEFS_INODE_TABLE_H_

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "grainstore/types.h"

namespace fusefs {

struct Inode {
  explicit Inode(grainstore::NodeInfo node) : id(node.id), info(std::move(node)) {}

  const grainstore::NodeId id;  // the store node; read without the mutex
  // Set, with `mu` held, while a seal writes the draft to the store or a
  // setattr writes the file's attributes (SavingMark), which may wait up to
  // the busy timeout for another process's write lock: the poller then
  // leaves the inode for later rather than wait for `mu`.
  std::atomic<bool> saving{false};

  // Guards every field below except the two lookup counts. Lock order:
  // InodeTable::mu_ before Inode::mu; never held across fuse_reply_*.
  std::mutex mu;
  grainstore::NodeInfo info;  // attributes as last read from or written to the store
  std::string data;           // body (clean copy when !dirty, the draft when dirty)
  bool loaded = false;        // `data` holds the body
  // Drops the body and its memory: assigning an empty string keeps the
  // old buffer, so an unloaded body of megabytes would stay allocated for
  // as long as the kernel keeps the inode.
  void Unload() {
    std::string().swap(data);
    loaded = false;
  }
  // A file's size as a stat reports it: the body held, else the stored one.
  std::uint64_t FileSize() const { return loaded ? data.size() : info.size; }
  bool dirty = false;         // `data` differs from the last sealed body
  // Created or opened with O_TRUNC and not written since: a flush does not
  // seal yet (a shell's `>` redirection closes a dup'd fd before writing);
  // release or fsync does.
  bool pristine = false;
  // The open handle (fuse_file_info::fh) that last wrote, truncated or
  // opened with O_TRUNC: its release seals the draft even while other
  // handles are open (`: > f` while `tail -f f` runs).
  std::uint64_t last_writer = 0;
  // The handle whose flush sealed the head version, while it stays open, and
  // when the run of saves it amends began. A later seal from that handle
  // within kCoalesceWindowNs marks that version transient (fusefs.md).
  std::uint64_t provisional_by = 0;
  std::string provisional_grain;  // hex grain id
  std::int64_t provisional_since_ns = 0;

  // The body `data` was read as or last sealed as (Store::ReadBody), and
  // whether every change since then was an O_APPEND write: a seal then puts
  // those bytes after whatever body another writer stored meanwhile, as
  // appends to one file do on a local disk (Store::WriteBody).
  grainstore::BodyBase base;
  bool appended_only = true;

  // The open handle whose latest write ended on a page boundary, with no
  // write, flush or release of it since (0: none). The kernel sends a
  // write(2) that crosses a page boundary as several WRITE requests, split
  // there, so the rest of that write(2) may still be on its way; another
  // handle's flush waits for it before sealing (AwaitSplitWrite in
  // ops_file.cc), or it would seal half a write.
  std::uint64_t split_writer = 0;
  std::condition_variable split_settled;  // notified when split_writer clears
  void SettleSplit(std::uint64_t fh) {
    if (split_writer != fh) return;
    split_writer = 0;
    split_settled.notify_all();
  }

  // Records a change to the draft made through open handle `fh` (0: through
  // none, a path truncate); `append`: an O_APPEND write at the draft's end.
  // A run of saves another handle began no longer holds that handle's
  // changes only, so its next save amends nothing.
  void NoteChange(std::uint64_t fh, bool append = false) {
    if (fh != 0) last_writer = fh;
    if (provisional_by != fh) provisional_by = 0;
    if (fh == 0) draft_unowned = true;
    if (!append) appended_only = false;
    if (fh != 0 && std::find(draft_handles.begin(), draft_handles.end(), fh) ==
                       draft_handles.end()) {
      draft_handles.push_back(fh);
    }
  }
  // `data` now holds exactly the stored body `stored` (a load or a seal).
  void NoteClean(const grainstore::BodyBase& stored) {
    base = stored;
    appended_only = true;
  }
  // The open handles whose changes the draft holds (since it was last sealed
  // or discarded), and errnos owed to handles whose changes a failed save
  // discarded: each is reported once, by that handle's next flush or fsync,
  // as Linux reports a write-back error (Filesystem::DiscardDraftLocked).
  std::vector<std::uint64_t> draft_handles;
  // Whether the draft also holds a change made through no handle (a path
  // truncate) or through a handle released since.
  bool draft_unowned = false;
  // Whether every change the draft holds came through open handle `fh`: a
  // version sealed from it is that handle's own save, which a later save of
  // the same open may amend (Filesystem::SealLocked). A handle that only
  // closes a file another handle wrote saves that writer's changes, not its
  // own.
  bool DraftIsOwnedBy(std::uint64_t fh) const {
    return fh != 0 && !draft_unowned && draft_handles.size() == 1 && draft_handles[0] == fh;
  }
  // The draft was sealed or discarded: no handle's changes are pending.
  void ClearDraftHandles() {
    draft_handles.clear();
    draft_unowned = false;
  }
  std::vector<std::pair<std::uint64_t, int>> owed_errors;
  // The errno owed to handle `fh` (0: none), now reported.
  int TakeOwedError(std::uint64_t fh) {
    for (auto it = owed_errors.begin(); it != owed_errors.end(); ++it) {
      if (it->first == fh) {
        int err = it->second;
        owed_errors.erase(it);
        return err;
      }
    }
    return 0;
  }
  // Handles whose changes a failed save discarded, the one told included:
  // their view of the file (its size, their offset, an O_TRUNC) is gone with
  // the draft, so their later writes and truncates fail with that errno
  // until they are released, rather than land on the restored body.
  std::vector<std::pair<std::uint64_t, int>> failed_handles;
  // The errno a write through `fh` gets (0: none).
  int FailedErrno(std::uint64_t fh) const {
    for (const auto& failed : failed_handles) {
      if (failed.first == fh) return failed.second;
    }
    return 0;
  }
  // A released handle: nothing is owed to it any more.
  void ForgetHandle(std::uint64_t fh) {
    if (std::erase(draft_handles, fh) != 0) draft_unowned = true;
    std::erase_if(owed_errors, [fh](const auto& owed) { return owed.first == fh; });
    std::erase_if(failed_handles, [fh](const auto& failed) { return failed.first == fh; });
  }
  bool unlinked = false;      // removed from the tree; writes are never sealed
  bool stale_pages = false;   // changed by another process since the last open
  // Writeback mode: another process changed the file while a handle held
  // the kernel's inode, so the kernel kept its own size and modification
  // time, and a lookup meanwhile bound the name to that inode again. The
  // last release drops the name once more (Coherence::DropNameLater), so
  // that the kernel evicts the inode and the next lookup reads the file anew.
  bool kernel_attrs_stale = false;
  // With the last handle gone, the name to drop for kernel_attrs_stale (then
  // cleared), or "" when there is none to drop.
  std::string TakeNameToDrop() {
    if (handles != 0 || !kernel_attrs_stale) return {};
    kernel_attrs_stale = false;
    return unlinked ? std::string() : info.key;
  }
  // Until then (NowNs), opens are answered ESTALE: another process deleted
  // the file or moved it to another path, and the kernel may still reach it
  // through a name that no longer leads to it (see OpOpen, kStaleNameNs).
  // Atomic: set also without the mutex, while a seal holds it (Coherence).
  std::atomic<std::int64_t> name_stale_until_ns{0};
  int writers = 0;            // open handles with write access
  int handles = 0;            // open handles (the inode lives while > 0)

  // Guarded by InodeTable::mu_.
  std::uint64_t nlookup = 0;
};

// Inode::saving for one write to the store made with the inode's mutex held.
class SavingMark {
 public:
  explicit SavingMark(Inode& inode) : inode_(inode) {
    inode_.saving.store(true, std::memory_order_release);
  }
  ~SavingMark() { inode_.saving.store(false, std::memory_order_release); }
  SavingMark(const SavingMark&) = delete;
  SavingMark& operator=(const SavingMark&) = delete;

 private:
  Inode& inode_;
};

// Thread-safe map from node id to Inode with kernel lookup counting.
class InodeTable {
 public:
  InodeTable() = default;
  InodeTable(const InodeTable&) = delete;
  InodeTable& operator=(const InodeTable&) = delete;

  // Adds one kernel lookup reference to the node's inode (creating it) and
  // refreshes its attributes from `node` unless it holds a dirty draft.
  std::shared_ptr<Inode> Remember(const grainstore::NodeInfo& node);
  // Like Remember but the inode is never dropped (the mount root).
  std::shared_ptr<Inode> Pin(const grainstore::NodeInfo& node);
  // nullptr when unknown.
  std::shared_ptr<Inode> Find(grainstore::NodeId id) const;
  // Drops `n` lookup references; the inode goes once no lookup reference and
  // no open handle is left, unless it holds a dirty draft.
  void Forget(grainstore::NodeId id, std::uint64_t n);
  // Call after a release dropped Inode::handles, without holding Inode::mu.
  void MaybeErase(grainstore::NodeId id);
  std::vector<std::shared_ptr<Inode>> All() const;
  std::size_t size() const;

 private:
  void MaybeEraseLocked(grainstore::NodeId id);

  mutable std::mutex mu_;
  std::unordered_map<grainstore::NodeId, std::shared_ptr<Inode>> map_;
};

}  // namespace fusefs

#endif  // FUSEFS_INODE_TABLE_H_
