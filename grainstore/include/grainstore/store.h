// Store: one SQLite file holding every namespace's /memories tree, the grain
// chains behind its files, plain fact/event grains and the op-log.
//
// Model. A namespace has a tree of nodes (directories, files, symlinks) rooted
// at the key "/memories". A versioned file node points at a chain: an ordered
// list of immutable grains (versions) whose ids are content-derived hashes.
// Writing new content to a versioned file appends a grain that supersedes the
// head; writing identical content appends nothing. Deleting tombstones the
// chain (versions stay readable, restorable until purged). Renaming moves the
// chain and records a provenance grain (derived_from) at the new path.
//
// Thread safety: a Store is safe for concurrent use by many threads without
// external synchronisation. Several processes may open the same file at once;
// writes are serialised by SQLite's write lock (WAL, BEGIN IMMEDIATE, tried
// again with the Store's mutex released until the busy timeout) and a
// read-modify-write (EditFile) reads the head inside its write transaction, so
// no update is lost.
#ifndef GRAINSTORE_STORE_H_
#define GRAINSTORE_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "grainstore/options.h"
#include "grainstore/result.h"
#include "grainstore/status.h"
#include "grainstore/types.h"

namespace grainstore {

class StoreImpl;

// What a file write did.
struct WriteResult {
  NodeInfo node;          // the file after the write
  bool created = false;   // the node did not exist before
  bool new_version = false;  // a grain was appended (false: identical content)
  std::uint32_t seq = 0;  // head version number after the write (0: unversioned)
  std::string grain_id;   // head grain id after the write ("" when unversioned)
  BodyBase base;          // the body now stored, for a later write's `appended_to`
  bool rebased = false;   // appended bytes went after another writer's body
  std::string body;       // the stored body, when rebased (else empty)
};

// Attribute changes for SetAttributes; unset fields are left alone.
struct AttrUpdate {
  std::optional<std::uint32_t> mode;
  std::optional<std::uint32_t> uid;
  std::optional<std::uint32_t> gid;
  std::optional<std::int64_t> atime_ns;
  std::optional<std::int64_t> mtime_ns;
  std::optional<std::int64_t> ctime_ns;  // default: now, on any change
};

// A new node for CreateNode.
struct NewNode {
  NodeKind kind = NodeKind::kFile;
  std::uint32_t mode = 0644;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::string symlink_target;  // kSymlink only
  Versioning versioning = Versioning::kVersioned;  // files only
  // Files only: the empty content sealed in the same transaction (a mount's
  // mknod), so that a failed save leaves no node behind.
  bool seal_empty = false;
};

enum class RenameMode : std::uint8_t {
  kReplace = 0,    // rename(2): replace an existing non-directory / empty directory
  kNoReplace = 1,  // RENAME_NOREPLACE: AlreadyExists if the target exists
};

// What the mount knows of a rename's source from its name. kTempCopy: the
// source is a copy made to become the target (rsync writes `.NAME.XXXXXX` and
// renames it to `NAME`); a young one-version file saved through the mount
// then moves without a chain of its own, so the copy is one version, created
// at the target's path.
// kThroughMount: a rename made through the mount, which may be a save's last
// step (a file moved to a backup name, its replacement moved in).
// kTempCopy: the same, of rsync's temporary copy to its real name, or on its
// way there through an unversioned name (rsync --delay-updates): a young
// copy saved through the mount keeps no chain of its own.
enum class RenameHint : std::uint8_t { kNone = 0, kTempCopy = 1, kThroughMount = 2 };

// How an unlink through the mount tombstones a versioned file: kVacate keeps
// the chain revivable for Options::revive_window_ns (an editor's save dance);
// kDelete is a plain delete.
enum class Vacate : std::uint8_t { kDelete = 0, kVacate = 1 };

// Input of AddFact.
struct FactInput {
  GrainType type = GrainType::kFact;
  std::string subject;
  std::string relation;
  std::string object;
  std::string context;
};

class Store {
 public:
  // Opens (creating if allowed) the store at `path`, applying migrations.
  // Errors: IOError (cannot open), Corruption (not a store / newer schema),
  // Busy (locked past the timeout).
  static Result<std::unique_ptr<Store>> Open(const std::string& path,
                                             const Options& options = Options());

  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  ~Store();

  // A random id distinct per open Store; recorded in every op-log entry.
  std::uint64_t origin() const;
  // True when this process may only read the store (its user may not write
  // the file or its directory, or its filesystem is full): every write fails
  // with ReadOnly.
  bool read_only() const;
  // Why a read-only store was opened as a snapshot of its file ("it was
  // opened read-only, as a snapshot, because ..."); "" otherwise.
  std::string read_only_reason() const;

  // ---- Namespaces -------------------------------------------------------
  // Resolves (creating it and its root directory if missing) a namespace.
  // InvalidArgument unless the name matches [A-Za-z0-9._-]{1,64}.
  Result<NsId> Namespace(std::string_view name);
  // Like Namespace, but NotFound instead of creating.
  Result<NsId> FindNamespace(std::string_view name);
  // InvalidArgument unless `name` is a valid namespace name; callers check
  // it before opening (or creating) a store for it.
  static Status CheckNamespaceName(std::string_view name);
  // The checks Open makes of a store's path before it opens or creates
  // anything (empty, ":memory:", too long for SQLite, a directory's name, not
  // a regular file), with Open's codes and messages; Ok says nothing of
  // whether the file exists or is a store.
  static Status CheckPath(const std::string& path);
  Result<std::vector<std::string>> ListNamespaces();

  // ---- Path level (memtool, CLI); keys are normalised "/memories/..." ------
  // NotFound if nothing lives at the key.
  Result<NodeInfo> StatKey(NsId ns, std::string_view key);
  // What stands in the way of a directory at key: the nearest of key and its
  // ancestors below the root that exists, when that is not a directory (a
  // file or a symlink). nullopt when it is a directory, or none exists.
  Result<std::optional<NodeInfo>> FileInTheWay(NsId ns, std::string_view key);
  // The current body of the file at key. NotFound; IsADirectory (directory or
  // symlink). `info`, if given, receives the node, on IsADirectory too; it
  // costs one more B-tree descent and bypasses the read cache, so a caller
  // that only needs the body passes none.
  Result<std::string> ReadFile(NsId ns, std::string_view key, NodeInfo* info = nullptr);
  // Creates the file (and missing parent directories) or appends a version.
  // NotADirectory (an ancestor is a file), IsADirectory (key is a directory or
  // the root), TooLarge, InvalidArgument (reserved or invalid name).
  Result<WriteResult> PutFile(NsId ns, std::string_view key, std::string_view body);
  // Read-modify-write of an existing file in one write transaction. `edit`
  // receives the current body and fills `next`; a non-OK status from it aborts
  // the edit and is returned unchanged. NotFound; IsADirectory; TooLarge.
  using EditFn = std::function<Status(std::string_view current, std::string* next)>;
  Result<WriteResult> EditFile(NsId ns, std::string_view key, const EditFn& edit);
  // Creates a directory and its missing parents. AlreadyExists if a file is
  // there; NotADirectory if an ancestor is a file. OK if it already exists.
  Status MakeDirs(NsId ns, std::string_view key);
  // Tombstones the node at key and everything below it. InvalidArgument for
  // the root; NotFound.
  Status DeleteKey(NsId ns, std::string_view key);
  // Moves a node with its subtree, creating missing parents of new_key.
  // InvalidArgument (old is root, new inside old), AlreadyExists (new exists),
  // NotFound (old missing), NotADirectory (an ancestor of new is a file).
  // Nothing changes on any error.
  Status RenameKey(NsId ns, std::string_view old_key, std::string_view new_key);
  // Children of a directory, sorted by name in byte order.
  Result<std::vector<NodeInfo>> ListChildren(NodeId dir);
  // What is below directory `dir_key`, down to `max_depth` levels (1: its
  // children), read at one moment from the key index alone: each directory
  // followed by what is in it, siblings sorted by name in byte order. An
  // entry `keep` refuses is left out together with everything below it.
  // Empty when nothing is below `dir_key` (a file, a missing key).
  using TreeFilter = std::function<bool(std::string_view name, NodeKind kind)>;
  Result<std::vector<TreeEntry>> ListTree(NsId ns, std::string_view dir_key, int max_depth,
                                          const TreeFilter& keep);

  // ---- Node level (fusefs) ----------------------------------------------
  Result<NodeId> RootId(NsId ns);
  // How many files, directories and symlinks namespace `ns` holds, its root
  // directory included (a mount's used inodes).
  Result<std::uint64_t> CountNodes(NsId ns);
  Result<NodeInfo> GetNode(NodeId id);
  // NotFound; NotADirectory if parent is not a directory.
  Result<NodeInfo> Lookup(NodeId parent, std::string_view name);
  // Up to `limit` children with name > after_name (byte order), sorted.
  Result<std::vector<NodeInfo>> ReadDir(NodeId dir, std::string_view after_name,
                                        std::size_t limit);
  // AlreadyExists; NotADirectory; InvalidArgument (bad or reserved name).
  // A versioned file is created without a version: the first WriteBody seals v1
  // (continuing a chain vacated at this path within the revive window).
  Result<NodeInfo> CreateNode(NodeId parent, std::string_view name, const NewNode& spec);
  // Removes a non-directory (want_dir=false) or an empty directory
  // (want_dir=true). NotFound; IsADirectory / NotADirectory on kind mismatch;
  // NotEmpty. A removed versioned file tombstones its chain. `removed`, if
  // given, receives the id of the node removed: whichever held the name when
  // the transaction ran, which another process may have changed since the
  // caller looked it up.
  Status RemoveNode(NodeId parent, std::string_view name, bool want_dir,
                    Vacate vacate = Vacate::kVacate, NodeId* removed = nullptr);
  // rename(2) on the tree. The moved node keeps its id. Over an existing file,
  // the target's chain continues with the moved content (supersession) and the
  // moved node takes the target's chain. `target_versioning` is the versioning
  // the node has under its new name. NotFound, AlreadyExists (kNoReplace),
  // IsADirectory/NotADirectory (kind mismatch), NotEmpty, InvalidArgument
  // (into itself, bad name). Returns the moved node: whichever held the name
  // when the transaction ran. `replaced`, if given, receives the id of the
  // node that lay at the new name and is gone (0: none). See RenameHint.
  Result<NodeInfo> RenameNode(NodeId parent, std::string_view name, NodeId new_parent,
                              std::string_view new_name, RenameMode mode,
                              Versioning target_versioning,
                              RenameHint hint = RenameHint::kNone, NodeId* replaced = nullptr);
  // NotFound. Returns the updated node.
  Result<NodeInfo> SetAttributes(NodeId id, const AttrUpdate& update);
  // Current body of a file node. NotFound; IsADirectory. `info` and `base`,
  // when given, receive the node and the body's identity as of the same read
  // (one snapshot: the size in `info` is the returned body's).
  Result<std::string> ReadBody(NodeId id, NodeInfo* info = nullptr, BodyBase* base = nullptr);
  // Replaces a file's body (sealing a version if versioned and changed) and
  // sets its mtime (now if not given) and its ctime: with an mtime given,
  // the later of it and the node's ctime (a chmod or utimens since), but not
  // past now; else now. NotFound; IsADirectory; TooLarge.
  // `amends` (a grain id in hex) names the mount-saved version this save
  // continues, sealed by the same open file moments ago: when it is still the
  // version the new one supersedes, it is marked transient (kept, readable,
  // hidden from default listings). Any other value marks nothing.
  // `appended_to`, when given, says that `body` is that earlier body of the
  // file plus bytes appended to it (O_APPEND writes). If another writer has
  // replaced the file's body since, the appended bytes go after the current
  // body instead, in the same transaction, so neither write is lost; the
  // result's `rebased` is then set and `body` is what was stored. While it is
  // still the file's body, its hash (as ReadBody and WriteResult::base give
  // it) stands for `body`'s first appended_to->size bytes: they are neither
  // compared nor hashed again, so the caller must not have changed them.
  Result<WriteResult> WriteBody(NodeId id, std::string_view body,
                                std::optional<std::int64_t> mtime_ns = std::nullopt,
                                std::string_view amends = {},
                                const BodyBase* appended_to = nullptr);

  // ---- History ----------------------------------------------------------
  // Versions (oldest first, transient ones included) of the chain that lives
  // at `subject` with `relation`, or else of the chain most recently deleted
  // there. NotFound if there was never one.
  Result<std::vector<VersionInfo>> History(NsId ns, std::string_view subject,
                                           std::string_view relation = kMemoryFileRelation);
  Result<ChainInfo> FindChain(NsId ns, std::string_view subject,
                              std::string_view relation = kMemoryFileRelation);
  // Every chain whose subject is `subject` (one live file at most, then the
  // deleted and purged ones), in the order History picks from: the live one,
  // then the most recently deleted first.
  Result<std::vector<ChainInfo>> ChainsAt(NsId ns, std::string_view subject,
                                          std::string_view relation = kMemoryFileRelation);
  // The chain `id` if its subject is `subject` in `ns`, else NotFound.
  Result<ChainInfo> ChainAt(NsId ns, std::string_view subject, ChainId id,
                            std::string_view relation = kMemoryFileRelation);
  // The names one level under `dir_key` of the memory files that have ever
  // lived below it and were not purged (live or deleted chains): a file's
  // name, or the name of the directory it lay in. Sorted bytewise, at most
  // `limit`. Reaches directories that no longer exist, for .history/.
  Result<std::vector<std::string>> ChainNamesUnder(NsId ns, std::string_view dir_key,
                                                   std::size_t limit);
  // The versions of chain `chain` numbered above `after_seq`, oldest first,
  // at most `limit` (0: all): pages of a long history, as ReadOps pages the
  // op-log.
  Result<std::vector<VersionInfo>> ChainVersions(ChainId chain, std::uint32_t after_seq = 0,
                                                 std::size_t limit = 0);
  // Calls `visit` for each version of chain `chain`, oldest first, until it
  // returns false. Reads ChainVersions' pages of kVersionPage, so a chain of
  // a million versions is never held at once; no lock of the Store is held
  // while `visit` runs, and each page is read in a transaction of its own.
  static constexpr std::size_t kVersionPage = 1000;
  using VersionVisitor = std::function<bool(const VersionInfo& version)>;
  Status ForEachVersion(ChainId chain, const VersionVisitor& visit);
  // Body of one version. `version` is a 1-based number or a grain-id prefix
  // (at least 6 hex chars). A number names a version of the chain History
  // shows; a grain id is looked for in every chain at `subject` (an older
  // file deleted at the same path too). NotFound, also when the version was
  // purged.
  Result<std::string> ReadVersion(NsId ns, std::string_view subject, std::string_view version,
                                  std::string_view relation = kMemoryFileRelation);
  // Body of one version of chain `chain` (see ReadVersion); `subject` words
  // the errors.
  Result<std::string> ReadChainVersion(ChainId chain, std::string_view subject,
                                       std::string_view version);
  // The version ReadVersion would read (its chain in `chain_id`), without
  // its body: `areev diff` names its two sides as `areev cat` does. NotFound
  // (no chain at `subject`, no such version); InvalidArgument (a malformed
  // name, a prefix several versions share). A purged version is found.
  Result<VersionInfo> FindVersion(NsId ns, std::string_view subject, std::string_view version,
                                  std::string_view relation = kMemoryFileRelation);
  // Body `body_id` (a NodeInfo::body_id) if a version of chain `chain` holds
  // it: what a file of that chain held when last seen, read after its node
  // was replaced or deleted. 0 reads empty. NotFound when no version holds
  // it (purged, or the chain discarded), so another file's body is never
  // read.
  Result<std::string> ReadChainBody(ChainId chain, std::int64_t body_id);
  // The version ReadChainVersion would read, as FindVersion.
  Result<VersionInfo> FindChainVersion(ChainId chain, std::string_view subject,
                                       std::string_view version);
  // Brings a deleted chain at key back as a live file: the most recently
  // deleted one, or chain `chain` (which must be a deleted chain at key).
  // NotFound (nothing deleted there, or `chain` is not), AlreadyExists (key
  // is taken), NotADirectory (an ancestor is a file).
  Status Restore(NsId ns, std::string_view key, ChainId chain = 0);
  // Erases for good the bodies of every deleted chain at key, and the salts
  // of their grain ids, so no id confirms a guessed body (no plaintext left
  // in the database file or its WAL once no reader pins old pages). When
  // every deleted chain there is purged already, only truncates the WAL (a
  // retry after Busy), whether or not a new file is live at key now.
  // NotFound (no deleted or purged chain there), Conflict (only a live file
  // there), Busy (purged, but readers kept the WAL from being truncated).
  Status Purge(NsId ns, std::string_view key);

  // ---- Facts and events -------------------------------------------------
  // A fact supersedes the live fact chain with the same subject and relation;
  // an event is a standalone grain. InvalidArgument (see CheckFact).
  Result<Fact> AddFact(NsId ns, const FactInput& input);
  // What AddFact refuses without touching the store: InvalidArgument for a
  // blank subject or relation, names or an object that are not UTF-8, the
  // relation memory_file; TooLarge for a context over the body limit.
  static Status CheckFact(const FactInput& input);
  // Live facts (and events) about subject, newest first; relation "" = any;
  // with include_history, superseded facts too.
  Result<std::vector<Fact>> Recall(NsId ns, std::string_view subject,
                                   std::string_view relation, bool include_history);
  // Calls `visit` for each fact and event Recall returns, in its order, until
  // it returns false: pages of kFactPage rows, each read in a transaction of
  // its own with no lock of the Store held while `visit` runs, so a subject
  // with a million facts is never held at once. Facts written meanwhile that
  // are newer than the page being read are not visited.
  static constexpr std::size_t kFactPage = 1000;
  using FactVisitor = std::function<bool(const Fact& fact)>;
  Status ForEachFact(NsId ns, std::string_view subject, std::string_view relation,
                     bool include_history, const FactVisitor& visit);

  // ---- Op-log and coherence ---------------------------------------------
  // Entries with seq > after_seq, oldest first, at most `limit`; ns 0 = all.
  Result<std::vector<OpRecord>> ReadOps(NsId ns, std::uint64_t after_seq, std::size_t limit);
  // The newest op-log seq (0 if empty).
  Result<std::uint64_t> LastOpSeq();
  // Calls `visit` for each move away from `key` by the op-log's renames,
  // newest first, at most `limit`, until it returns false: renames of `key`
  // itself or of a directory above it. Each says when it happened and, for a
  // file renamed by its own path, its chain (whose last version says where it
  // is now; `places` left empty); for a directory's rename, the paths the
  // renames after it lead through (`chain` left 0), followed only once the
  // moves before it were refused. A directory renamed after the file had
  // already left it is a move too, of nothing: the caller finds which move
  // carried a file (the newest one whose destination holds a chain that lay
  // at `key`). No lock of the Store is held while `visit` runs. Reads the
  // op-log, whose cost grows with the log: for error messages, not for hot
  // paths.
  struct MovedAway {
    std::int64_t at_ns = 0;
    ChainId chain = 0;
    // A directory's move: every place the later renames led `key`'s name
    // through, in order, where they lead now last (a file deleted on the way
    // stays at the place it was deleted).
    std::vector<std::string> places;
  };
  using MoveVisitor = std::function<bool(const MovedAway& move)>;
  Status ForEachMoveAwayFrom(NsId ns, std::string_view key, int limit, const MoveVisitor& visit);
  // Changes whenever another connection commits (PRAGMA data_version); cheap.
  Result<std::uint64_t> DataVersion();
  // A value that changes whenever any connection commits, this one included
  // (a hash of the shared WAL-index header). Reads shared memory only and
  // takes no lock, so threads that poll for other processes' changes can
  // skip DataVersion() while it holds still. 0 when it cannot be read (before
  // this Store's first read or write, or while a commit rewrites the header):
  // then assume a change.
  std::uint64_t CommitFingerprint() const;
  // Makes every acknowledged write durable on disk (fsync), in any mode.
  Status Sync();

 private:
  explicit Store(std::unique_ptr<StoreImpl> impl);
  std::unique_ptr<StoreImpl> impl_;
};

}  // namespace grainstore

#endif  // GRAINSTORE_STORE_H_
