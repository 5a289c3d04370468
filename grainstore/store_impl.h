// Private state of a Store and the building blocks its operations share.
// Every method here expects `mu` held and, for writes, an open write
// transaction on `db`.
#ifndef GRAINSTORE_STORE_IMPL_H_
#define GRAINSTORE_STORE_IMPL_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "append_bases.h"
#include "checkpointer.h"
#include "db.h"
#include "fork_guard.h"
#include "grain_id.h"
#include "grainstore/options.h"
#include "grainstore/store.h"
#include "grainstore/types.h"
#include "grainstore/version_spec.h"
#include "read_cache.h"
#include "read_releaser.h"

namespace grainstore {

// KindAndBodyByKey's query; tests check that SQLite answers it without the
// node's row.
extern const char kKindAndBodyByKeySql[];
// Store::ListTree's query; tests check that the key index answers it alone.
extern const char kTreeSql[];

struct ChainRow {
  ChainId id = 0;
  NsId ns = 0;
  std::string relation;
  std::string subject;
  ChainState state = ChainState::kLive;
  // The chain's last grain (by seq), read from grains_by_chain.
  std::int64_t head_grain = 0;  // grains.id of the head (0: none yet)
  std::uint32_t head_seq = 0;
  std::int64_t head_body = 0;   // the head's body (0: none, or purged)
  std::string head_id;          // the head's raw grain id ("" when none)
  std::int64_t head_created_ns = 0;
  std::int64_t created_ns = 0;
  std::int64_t deleted_ns = 0;  // a purged chain's too: the deletion's time
  std::int64_t purged_ns = 0;   // 0 unless purged
  bool revivable = false;
};

// What AppendGrain writes.
struct GrainSpec {
  GrainType type = GrainType::kFact;
  NsId ns = 0;
  std::string_view subject;
  std::string_view relation;
  std::string_view object;
  std::int64_t body_id = 0;  // 0: no body
  std::string_view body_hash;
  std::uint64_t size = 0;
  std::string_view op;
  std::string_view derived_from;  // raw grain id or ""
  bool body_counted = false;      // the body row already counts this grain
  std::int64_t flags = 0;         // kGrainFlag* bits
};

// Bits of grains.flags (docs/storage-format.md).
inline constexpr std::int64_t kGrainFlagTransient = 1;  // coalesced away
inline constexpr std::int64_t kGrainFlagPurged = 2;     // body erased by purge
inline constexpr std::int64_t kGrainFlagMountSave = 4;  // sealed from a file saved through the mount

// Who seals a file's body (StoreImpl::SealBody). A save through the mount
// may continue a chain vacated at its key within the revive window, and its
// version is marked kGrainFlagMountSave, which lets an unlink within that
// window discard a one-version chain as a temp file. A tool's write (the
// memory tool, a binding) does neither: what an agent writes is never
// discarded.
enum class Saver : std::uint8_t { kTool, kMount };

// Below this size a file's body is always stored whole: the bytes a delta
// would save are worth less than the extra row a read then assembles.
inline constexpr std::size_t kMinDeltaBase = 2048;

// How a file's new body is to be stored (StoreImpl::PlanBody).
struct BodyPlan {
  std::string hash;           // raw hash of the whole body
  std::int64_t base_id = 0;   // nonzero: store only the bytes past base_size,
  std::size_t base_size = 0;  // as a delta on this body (an append)
  // With base_id: a splice instead, the body being the base's first
  // base_size bytes, then what the row stores, then the base's last
  // `suffix` bytes (docs/storage-format.md, "Delta bodies").
  bool splice = false;
  std::size_t suffix = 0;
  bool splice_tried = false;  // a splice was weighed (whether or not planned)
  BodyHasher hasher;          // has been fed the whole body
};

// A body as its base's first `head` bytes, new bytes, its last `tail` bytes.
struct Splice {
  std::size_t head = 0;
  std::size_t tail = 0;
};

// A stored body whose content the caller holds, which a new body may be
// stored as a splice on (StoreImpl::PlanBody).
struct KnownBody {
  std::int64_t id = 0;
  std::string_view content;
};

// A row of `bodies` as a query read it (base_id 0 for NULL): a whole body, an
// append on base_id, or a splice on -base_id (AssembleBody).
struct BodyRowView {
  std::string_view bytes;
  std::int64_t base_id = 0;
  std::int64_t size = 0;
};

struct GrainRef {
  std::int64_t row = 0;
  std::string id;  // raw 32 bytes
  std::uint32_t seq = 0;
};

// The id of the next node: past every live id and every id ever deleted
// (counters.node_floor), so node ids, the mount's inode numbers, are never
// reused. An SQL expression for INSERT INTO nodes.
#define GS_NEXT_NODE_ID                                                             \
  "max(coalesce((SELECT max(id) FROM nodes), 0), "                                 \
  "coalesce((SELECT value FROM counters WHERE name = 'node_floor'), 0)) + 1"

std::int64_t NowNs();

// chains.revivable of a deleted chain: how its path was vacated through the
// mount within the revive window (0: not revivable).
inline constexpr int kRevivableUnlinked = 1;
inline constexpr int kRevivableMovedAside = 2;  // moved to a temp or backup name

// TooLarge when a body exceeds Limits::kMaxBodyBytes.
Status CheckBodySize(std::size_t size);

// What a seal may be told beyond the body and who saves it
// (StoreImpl::SealBody).
struct SealOptions {
  std::string_view derived_from;     // a raw grain id: where a moved body came from
  const BodyBase* prefix = nullptr;  // PlanBody's: the body this one appends to
  const KnownBody* known = nullptr;  // PlanBody's: a body this one may splice on
  int revive = kRevivableUnlinked;   // the least kind of vacated chain a mount save revives
  std::int64_t ctime = 0;            // the node's change time; 0: now
};

class StoreImpl final : public ForkParticipant {
 public:
  explicit StoreImpl(const Options& opts) : options(opts) {}

  // fork() waits for the call in flight and for a background checkpoint
  // (fork_guard.h); registered once the Store is open.
  void PrepareFork() override {
    mu.lock();
    if (checkpointer) checkpointer->HoldForFork();
  }
  void ParentDone() override {
    if (checkpointer) checkpointer->ForkDone();
    mu.unlock();
  }
  // The child goes on with connections of its own, opened on its first
  // statement (Db: "A connection opened before a fork()"). What was learnt
  // through the parent's connection is dropped, and the child's op-log
  // entries get an origin of their own.
  void ChildDone() override;
  // A random nonzero origin for this Store's op-log entries.
  void DrawOrigin();

  const Options options;
  Db db;
  std::unique_ptr<Checkpointer> checkpointer;  // after db: destroyed before it
  std::mutex mu;  // guards everything below; never held across a callback into the caller
                  // other than EditFn (which must not call back into the Store)
  std::uint64_t origin = 0;
  SaltSource salts;  // each new grain's id salt (AppendGrain)
  std::unordered_map<std::string, NsId> ns_ids;
  std::unordered_map<NsId, std::string> ns_names;
  std::unordered_map<NsId, NodeId> roots;
  ReadCache read_cache;  // ReadFile's recent results (see read_cache.h)
  // The WAL-index header and PRAGMA data_version at the last look at the
  // database: while the header stays the same, nothing has committed, so the
  // version and the read cache's entries still hold (see Observe).
  WalStamp seen_wal;
  std::int64_t seen_version = 0;
  std::uint64_t seen_opens = 0;  // db.opens() when seen_wal was read
  AppendBases append_bases;  // bodies files were last sealed with (see append_bases.h)
  // Ends `db`'s held read when idle (see read_releaser.h). Last: its thread
  // takes `mu` and uses `db`, so it stops before either goes.
  std::unique_ptr<ReadReleaser> read_releaser;

  // PRAGMA data_version now: no SQL when the WAL-index header is as last
  // seen. Inside a read transaction, the version of that transaction's view.
  Result<std::int64_t> CurrentDataVersion();
  // True when no connection has committed since the last CurrentDataVersion,
  // so the read cache is current without a transaction.
  bool NothingCommittedSinceSeen() {
    return db.opens() == seen_opens && SameWalState(db.ReadWalStamp(), seen_wal);
  }
  // Runs the reads in `fn` (returning a Result) in one read transaction:
  // they see one state, and the transaction may reuse or stay as the held
  // read (see Db), so a stream of lookups takes no lock per call. A failed
  // `fn` still commits: a miss is an answer, not a reason to drop the read.
  template <typename Fn>
  auto InRead(Fn&& fn) -> decltype(fn()) {
    Transaction txn(&db);
    GRAINSTORE_RETURN_IF_ERROR(txn.Begin(Transaction::Kind::kRead));
    auto result = fn();
    Status committed = txn.Commit();
    if (result && !committed.ok()) return committed;
    return result;
  }

  // ---- namespaces (store.cc)
  Result<NsId> ResolveNs(std::string_view name, bool create);
  Result<std::string> NsName(NsId ns);
  Result<NodeId> Root(NsId ns);

  // ---- nodes (store_nodes.cc)
  Result<NodeInfo> NodeByKey(NsId ns, std::string_view key);
  // The kind of the node at `key`, and its content in `body` when it is a
  // file, from nodes_by_key (which holds kind and body_id) and the body's
  // row: two B-tree descents, never the node's own row.
  Result<NodeKind> KindAndBodyByKey(NsId ns, std::string_view key, std::string* body);
  Result<NodeInfo> NodeById(NodeId id);
  Result<NodeInfo> NodeByParent(NodeId parent, std::string_view name);
  Result<std::vector<NodeInfo>> Children(NodeId parent, std::string_view after, std::size_t limit);
  // All nodes strictly below a directory key, in key order.
  Result<std::vector<NodeInfo>> Descendants(NsId ns, std::string_view key);
  Result<NodeInfo> InsertNode(NsId ns, const NodeInfo& parent, std::string_view name,
                             const NewNode& spec, std::int64_t now);
  // Walks/creates the directories above `key`; returns the parent directory.
  Result<NodeInfo> EnsureParents(NsId ns, std::string_view key, std::int64_t now);
  Status TouchDir(NodeId dir, std::int64_t now);
  // Deletes the row, dropping the body reference a node without a chain holds.
  Status DeleteNodeRow(const NodeInfo& node);
  Status UpdateNodePlace(NodeId id, NodeId parent, std::string_view name, std::string_view key,
                         std::int64_t now);
  // Points `before` (the node as stored) at new content and moves its body
  // reference: a node without a chain holds one on its body; a node with a
  // chain holds none (its head grain does), so a versioned edit never touches
  // the previous body's row. Grains referencing the new body must be
  // appended first, so no count passes through zero on the way.
  Status UpdateNodeContent(const NodeInfo& before, std::int64_t body_id, std::uint64_t size,
                           ChainId chain, Versioning versioning, std::int64_t mtime,
                           std::int64_t now);

  // ---- bodies (store_bodies.cc)
  // Hashes the new body of a versioned file (`node` as stored) and, when it
  // only appends to the body the file was last sealed with in this Store,
  // plans it as a delta on that body. `prefix`, when given, is a body the
  // caller knows `body` begins with (its first prefix->size bytes hash to
  // prefix->hash): an append to it is then recognised without reading or
  // hashing those bytes again. A body that is no append but shares most of
  // its bytes with `known` (the caller's), or with the body the file was last
  // sealed with in this Store, is planned as a splice on that body.
  Result<BodyPlan> PlanBody(const NodeInfo& node, std::string_view body,
                            const BodyBase* prefix = nullptr, const KnownBody* known = nullptr);
  // Whether a new body of `size` bytes for `node`'s versioned file could be
  // stored as a splice on its current body: a caller that would have to read
  // that body first asks this before it does.
  bool WorthSplicing(const NodeInfo& node, std::size_t size) const;
  // How `body` would be stored as a splice on `base`: none when too little of
  // it is kept, or `base` is read from too many rows already.
  Result<std::optional<Splice>> PlanSplice(std::string_view body, const KnownBody& base);
  // Stores the body row `body_id` (content `body`), stored whole and held by
  // one version only, as a splice on `base` instead, when PlanSplice says so:
  // for a version whose body was stored before its file's previous version
  // was at hand (a temp copy renamed over the file, a file made again where
  // its history is revived). The content and hash stay what they were.
  Status MaybeStoreAsSplice(std::int64_t body_id, std::string_view body, const KnownBody& base);
  // Rewrites the row `body_id`, if it is a delta, as its whole body, and
  // drops its reference on its base: for a body a purged file shared with a
  // file that stays, whose bases (the purged file's other versions, which a
  // splice keeps whole) must go with the purge. Nothing when the row is gone.
  Status StoreWhole(std::int64_t body_id);
  // After a purge dropped the references of one chain's versions to
  // `bodies` (oldest first): StoreWhole on each of them that stays (another
  // file or fact has the same content) and is built on a row no version or
  // fact holds any more, only these rows (a purged version's content). A
  // delta whose bases stay held (its own file's versions) stays a delta.
  Status StoreWholeOverPurged(const std::vector<std::int64_t>& bodies);
  // How many rows below `body_id` a read of it assembles (0: stored whole).
  Result<std::size_t> BodyDepth(std::int64_t body_id);
  // Remembers the body just interned for `before`'s file, as the base for a
  // later append.
  void KeepSealedBody(const NodeInfo& before, std::int64_t body_id, bool inserted, BodyPlan plan,
                      std::string_view body);
  // The id of the body row holding `body`, inserted if new with `new_refs`
  // references already counted (*inserted tells which happened). With a
  // plan, its hash is used and a new row is stored as the plan says.
  Result<std::int64_t> InternBody(std::string_view body, std::string* hash_out,
                                  std::int64_t new_refs = 0, bool* inserted = nullptr,
                                  const BodyPlan* plan = nullptr);
  // The whole body, assembled from its delta rows when it has any.
  Result<std::string> BodyData(std::int64_t body_id);
  // The whole body of `top`, a row a query read (joined, say): its own
  // bytes when stored whole, else assembled with the rows below it. `top`'s
  // bytes are copied before any other statement runs.
  Result<std::string> AssembleBody(const BodyRowView& top);
  Result<std::string> BodyHash(std::int64_t body_id);
  // Whether the row `body_id` exists and holds content of this raw hash.
  Result<bool> HoldsHash(std::int64_t body_id, std::string_view hash);
  // Adds `delta` references to a body (refs = grains + chainless nodes
  // pointing at it + delta rows built on it); a body left with none is
  // deleted, dropping its own reference on the body it extends.
  Status AdjustRefs(std::int64_t body_id, std::int64_t delta);

  // ---- chains and grains (store_chains.cc)
  Result<ChainRow> ChainById(ChainId id);
  Result<std::optional<ChainRow>> LiveChain(NsId ns, std::string_view subject,
                                            std::string_view relation);
  // The live chain at subject, else the most recently deleted one.
  Result<std::optional<ChainRow>> LatestChain(NsId ns, std::string_view subject,
                                              std::string_view relation);
  Result<ChainRow> NewChain(NsId ns, std::string_view subject, std::string_view relation,
                            std::int64_t now);
  // Appends a grain to `chain` (and sets its head fields), or a standalone grain
  // when chain is null.
  Result<GrainRef> AppendGrain(ChainRow* chain, const GrainSpec& spec, std::int64_t now);
  // `revivable`: 0, kRevivableUnlinked, or kRevivableMovedAside (chains.revivable).
  Status SetChainState(ChainId id, ChainState state, std::int64_t deleted_ns, int revivable);
  Status SetChainSubject(ChainId id, std::string_view subject);
  // Marks version `seq` of `chain` transient (kGrainFlagTransient) when it is
  // the mount-saved grain `grain_id` (raw); otherwise changes nothing.
  Status MarkTransient(ChainId chain, std::uint32_t seq, std::string_view grain_id);
  // Every chain at subject, in LatestChain's order (live first, then the
  // most recently deleted).
  Result<std::vector<ChainRow>> ChainsAt(NsId ns, std::string_view subject,
                                         std::string_view relation);
  // The kGrainFlag* bits of grains row `grain`.
  Result<std::int64_t> GrainFlags(std::int64_t grain);
  // Removes a chain and its grains entirely (a short-lived temp file's).
  Status DiscardChain(const ChainRow& chain);
  // Versions of `chain` with a number above `after_seq`, in order, at most
  // `limit` (0: all of them).
  Result<std::vector<VersionInfo>> Versions(ChainId chain, std::uint32_t after_seq = 0,
                                            std::size_t limit = 0);
  // The versions of `chain` that `spec` may name: the one numbered
  // spec.number and those whose grain id starts with spec.id_prefix, in
  // order. Reads every version's id, but keeps only those.
  Result<std::vector<VersionInfo>> VersionCandidates(ChainId chain, const VersionSpec& spec);
  // Version `seq` of `chain` alone (one index probe); nullopt when it has none.
  Result<std::optional<VersionInfo>> Version(ChainId chain, std::int64_t seq);

  // ---- file semantics (store_files.cc)
  // Seals `body` as the node's content: a new grain on its chain when the node
  // is versioned and the content changed (see Saver for what `saver` changes).
  // A mount save of a chainless node revives a chain vacated at its key of at
  // least the kind options.revive names (RevivableChainAt). Sets out->base to
  // the body now stored.
  Status SealBody(NodeInfo* node, std::string_view body, std::int64_t mtime, std::int64_t now,
                  Saver saver, WriteResult* out, const SealOptions& options = {});
  // Tombstones the chain of a file; discards it instead when it is vacated
  // young, with one version saved through the mount (a temp file by behaviour).
  // `moved_to`: the file's node is not removed but moves on to that key (a
  // rename over a file with a history), so the op-log says `vacate`, the
  // chain's leaving, where a removal says `delete` (and `discard` names
  // `moved_to` as its new subject: the chain goes, the node does not).
  Status RetireChain(const NodeInfo& file, std::int64_t now, Vacate vacate,
                     std::string_view moved_to = "");
  // Removes a node and everything below it, retiring chains.
  Status RemoveTree(const NodeInfo& node, std::int64_t now, Vacate vacate);
  // Moves `src` to (parent, name), which must be free; handles chains.
  Status MoveNode(NodeInfo* src, const NodeInfo& parent, std::string_view name,
                  Versioning target_versioning, std::int64_t now,
                  RenameHint hint = RenameHint::kNone);
  // True when `chain` is a temp file by behaviour: created within the revive
  // window, one version, saved through the mount (see Saver).
  Result<bool> IsYoungMountSave(const ChainRow& chain, std::int64_t now);
  // Chain `chain_id` when it is such a temp file by behaviour, else nothing.
  Result<std::optional<ChainRow>> YoungMountChain(std::int64_t chain_id, std::int64_t now);
  // The newest chain vacated at `key` through the mount (unlink, or a move
  // to a temp or backup name) within the revive window, which a file saved
  // there next continues; 0 when there is none.
  // `at_least`: kRevivableUnlinked finds either kind, kRevivableMovedAside
  // only chains moved aside to a temp or backup name.
  Result<std::int64_t> RevivableChainAt(NsId ns, std::string_view key, std::int64_t now,
                                        int at_least);

  Status LogOp(NsId ns, std::string_view op, std::string_view subject,
               std::string_view new_subject, NodeId node, ChainId chain,
               std::string_view grain_id_raw, std::int64_t now);
};

}  // namespace grainstore

#endif  // GRAINSTORE_STORE_IMPL_H_
