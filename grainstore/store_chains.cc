// Chains and grains: append-only version lists with content-derived ids.
#include <algorithm>

#include <fmt/format.h>

#include "grain_id.h"
#include "store_impl.h"

namespace grainstore {
namespace {

// A chain with its head, the chain's last grain (a seek on grains_by_chain),
// and for a purged chain the time of its purge: the op-log's (through
// oplog_purges), else, for a store a v8 build purged in, its deletion time.
#define GS_CHAIN_SELECT                                                                      \
  "SELECT c.id, c.ns_id, c.relation, c.subject, c.state, coalesce(h.id, 0), "              \
  "coalesce(h.seq, 0), c.created_ns, c.deleted_ns, c.revivable, coalesce(h.body_id, 0), "  \
  "h.grain_id, coalesce(h.created_ns, 0), CASE WHEN c.state = 3 THEN coalesce("            \
  "(SELECT max(o.at_ns) FROM oplog AS o WHERE o.op = 'purge' AND o.chain_id = c.id), "     \
  "c.deleted_ns) ELSE 0 END "                                                              \
  "FROM chains AS c LEFT JOIN grains AS h ON h.id = "                                       \
  "(SELECT g.id FROM grains AS g WHERE g.chain_id = c.id ORDER BY g.seq DESC LIMIT 1) "

// The chains at one subject, the one History shows first: the live one, then
// the most recently deleted.
#define GS_CHAINS_AT_SUBJECT                                  \
  GS_CHAIN_SELECT "WHERE c.ns_id = ? AND c.subject = ? AND c.relation = ? " \
  "ORDER BY c.state = 1 DESC, c.deleted_ns DESC, c.id DESC"

ChainRow ReadChain(const Statement& st) {
  ChainRow c;
  c.id = static_cast<ChainId>(st.ColumnInt64(0));
  c.ns = st.ColumnInt64(1);
  c.relation = st.ColumnText(2);
  c.subject = st.ColumnText(3);
  c.state = static_cast<ChainState>(st.ColumnInt64(4));
  c.head_grain = st.ColumnInt64(5);
  c.head_seq = static_cast<std::uint32_t>(st.ColumnInt64(6));
  c.created_ns = st.ColumnInt64(7);
  c.deleted_ns = st.ColumnInt64(8);
  c.revivable = st.ColumnInt64(9) != 0;
  c.head_body = st.ColumnInt64(10);
  if (!st.ColumnIsNull(11)) c.head_id = st.ColumnBlob(11);
  c.head_created_ns = st.ColumnInt64(12);
  c.purged_ns = st.ColumnInt64(13);
  return c;
}

Result<std::optional<ChainRow>> MaybeChain(Statement& st) {
  switch (st.Step()) {
    case StepResult::kRow: return std::optional<ChainRow>(ReadChain(st));
    case StepResult::kDone: return std::optional<ChainRow>();
    case StepResult::kError: break;
  }
  return st.status();
}

}  // namespace

Result<ChainRow> StoreImpl::ChainById(ChainId id) {
  static constexpr char kSql[] = GS_CHAIN_SELECT "WHERE c.id = ?";
  auto st = db.Prepare(kSql);
  if (!st) return st.error();
  st->BindInt64(1, static_cast<std::int64_t>(id));
  auto c = MaybeChain(*st);
  if (!c) return c.error();
  if (!c->has_value()) return Status::NotFound(fmt::format("no chain #{}", id));
  return std::move(**c);
}

Result<std::optional<ChainRow>> StoreImpl::LiveChain(NsId ns, std::string_view subject,
                                                     std::string_view relation) {
  static constexpr char kSql[] = GS_CHAIN_SELECT
      "WHERE c.ns_id = ? AND c.relation = ? AND c.subject = ? AND c.state = 1";
  auto st = db.Prepare(kSql);
  if (!st) return st.error();
  st->BindInt64(1, ns);
  st->BindText(2, relation);
  st->BindText(3, subject);
  return MaybeChain(*st);
}

Result<std::optional<ChainRow>> StoreImpl::LatestChain(NsId ns, std::string_view subject,
                                                       std::string_view relation) {
  static constexpr char kSql[] = GS_CHAINS_AT_SUBJECT " LIMIT 1";
  auto st = db.Prepare(kSql);
  if (!st) return st.error();
  st->BindInt64(1, ns);
  st->BindText(2, subject);
  st->BindText(3, relation);
  return MaybeChain(*st);
}

Result<std::vector<ChainRow>> StoreImpl::ChainsAt(NsId ns, std::string_view subject,
                                                  std::string_view relation) {
  static constexpr char kSql[] = GS_CHAINS_AT_SUBJECT;
  auto st = db.Prepare(kSql);
  if (!st) return st.error();
  st->BindInt64(1, ns);
  st->BindText(2, subject);
  st->BindText(3, relation);
  std::vector<ChainRow> rows;
  for (;;) {
    auto c = MaybeChain(*st);
    if (!c) return c.error();
    if (!c->has_value()) return rows;
    rows.push_back(std::move(**c));
  }
}

Result<ChainRow> StoreImpl::NewChain(NsId ns, std::string_view subject,
                                     std::string_view relation, std::int64_t now) {
  // Chain ids are never handed out again (the op-log names them): one more
  // than both the largest id and counters.chain_floor, which DiscardChain
  // raises to the id it removes. Stores from before the counter have no row.
  static constexpr char kSql[] =
      "INSERT INTO chains(id, ns_id, relation, subject, state, created_ns) VALUES("
      "max(coalesce((SELECT max(id) FROM chains), 0), "
      "coalesce((SELECT value FROM counters WHERE name = 'chain_floor'), 0)) + 1, "
      "?, ?, ?, 1, ?)";
  auto st = db.Prepare(kSql);
  if (!st) return st.error();
  st->BindInt64(1, ns);
  st->BindText(2, relation);
  st->BindText(3, subject);
  st->BindInt64(4, now);
  GRAINSTORE_RETURN_IF_ERROR(st->Run());
  ChainRow c;
  c.id = static_cast<ChainId>(db.LastInsertRowid());
  c.ns = ns;
  c.relation = std::string(relation);
  c.subject = std::string(subject);
  c.created_ns = now;
  return c;
}

Result<GrainRef> StoreImpl::AppendGrain(ChainRow* chain, const GrainSpec& spec,
                                        std::int64_t now) {
  static constexpr char kInsert[] =
      "INSERT INTO grains(grain_id, ns_id, type, chain_id, seq, subject, relation, object, "
      "body_id, size, supersedes, derived_from, op, created_ns, flags, salt) "
      "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
  auto ns_name = NsName(spec.ns);
  if (!ns_name) return ns_name.error();
  std::string supersedes;
  if (chain != nullptr && chain->head_grain != 0) {
    supersedes = chain->head_id;
    // A version is never older than the one it supersedes, even when the
    // wall clock steps back between two writes.
    now = std::max(now, chain->head_created_ns);
  }
  GrainRef ref;
  ref.seq = chain != nullptr ? chain->head_seq + 1 : 0;
  // Without a salt the id would be a checksum of the body: once purge has
  // erased the body, anyone holding the file could confirm guesses of it.
  // Purge erases the salt with the body.
  unsigned char salt[kGrainSaltBytes];
  salts.Next(salt);
  const std::string_view salt_bytes(reinterpret_cast<const char*>(salt), sizeof salt);
  GrainFields fields{.type = spec.type, .ns = *ns_name, .subject = spec.subject,
                     .relation = spec.relation, .object = spec.object,
                     .body_hash = spec.body_hash, .supersedes = supersedes,
                     .derived_from = spec.derived_from, .chain_seq = ref.seq,
                     .created_ns = now, .salt = salt_bytes};
  ref.id = ComputeGrainId(fields);
  auto st = db.Prepare(kInsert);
  if (!st) return st.error();
  st->BindBlob(1, ref.id);
  st->BindInt64(2, spec.ns);
  st->BindInt64(3, static_cast<std::int64_t>(spec.type));
  st->BindInt64(4, chain != nullptr ? static_cast<std::int64_t>(chain->id) : 0);
  st->BindInt64(5, ref.seq);
  st->BindText(6, spec.subject);
  st->BindText(7, spec.relation);
  st->BindText(8, spec.object);
  if (spec.body_id != 0) {
    st->BindInt64(9, spec.body_id);
  } else {
    st->BindNull(9);
  }
  st->BindInt64(10, static_cast<std::int64_t>(spec.size));
  if (supersedes.empty()) {
    st->BindNull(11);
  } else {
    st->BindBlob(11, supersedes);
  }
  if (spec.derived_from.empty()) {
    st->BindNull(12);
  } else {
    st->BindBlob(12, spec.derived_from);
  }
  st->BindText(13, spec.op);
  st->BindInt64(14, now);
  st->BindInt64(15, spec.flags);
  st->BindBlob(16, salt_bytes);
  GRAINSTORE_RETURN_IF_ERROR(st->Run());
  ref.row = db.LastInsertRowid();
  if (!spec.body_counted) GRAINSTORE_RETURN_IF_ERROR(AdjustRefs(spec.body_id, 1));
  if (chain != nullptr) {
    chain->head_grain = ref.row;
    chain->head_id = ref.id;
    chain->head_body = spec.body_id;
    chain->head_seq = ref.seq;
    chain->head_created_ns = now;
  }
  return ref;
}

Status StoreImpl::SetChainState(ChainId id, ChainState state, std::int64_t deleted_ns,
                                int revivable) {
  static constexpr char kSql[] =
      "UPDATE chains SET state = ?, deleted_ns = ?, revivable = ? WHERE id = ?";
  auto st = db.Prepare(kSql);
  if (!st) return st.error();
  st->BindInt64(1, static_cast<std::int64_t>(state));
  st->BindInt64(2, deleted_ns);
  st->BindInt64(3, revivable);
  st->BindInt64(4, static_cast<std::int64_t>(id));
  return st->Run();
}

Status StoreImpl::MarkTransient(ChainId chain, std::uint32_t seq, std::string_view grain_id) {
  static constexpr char kSql[] =
      "UPDATE grains SET flags = flags | ? "
      "WHERE chain_id = ? AND seq = ? AND grain_id = ? AND (flags & ?) != 0";
  auto st = db.Prepare(kSql);
  if (!st) return st.error();
  st->BindInt64(1, kGrainFlagTransient);
  st->BindInt64(2, static_cast<std::int64_t>(chain));
  st->BindInt64(3, seq);
  st->BindBlob(4, grain_id);
  st->BindInt64(5, kGrainFlagMountSave);
  return st->Run();
}

Status StoreImpl::SetChainSubject(ChainId id, std::string_view subject) {
  static constexpr char kSql[] = "UPDATE chains SET subject = ? WHERE id = ?";
  auto st = db.Prepare(kSql);
  if (!st) return st.error();
  st->BindText(1, subject);
  st->BindInt64(2, static_cast<std::int64_t>(id));
  return st->Run();
}

Result<std::int64_t> StoreImpl::GrainFlags(std::int64_t grain) {
  auto st = db.Prepare("SELECT flags FROM grains WHERE id = ?");
  if (!st) return st.error();
  st->BindInt64(1, grain);
  const StepResult r = st->Step();
  if (r == StepResult::kError) return st->status();
  if (r != StepResult::kRow) return Status::Corruption("a chain's head grain is missing");
  return st->ColumnInt64(0);
}

Status StoreImpl::DiscardChain(const ChainRow& chain) {
  static constexpr char kBodies[] =
      "SELECT body_id FROM grains WHERE chain_id = ? AND body_id IS NOT NULL ORDER BY seq";
  static constexpr char kGrains[] = "DELETE FROM grains WHERE chain_id = ?";
  static constexpr char kChain[] = "DELETE FROM chains WHERE id = ?";
  // Keeps the id from being handed out again (see NewChain).
  static constexpr char kRaiseFloor[] =
      "INSERT INTO counters(name, value) VALUES('chain_floor', ?) "
      "ON CONFLICT(name) DO UPDATE SET value = max(value, excluded.value)";
  std::vector<std::int64_t> bodies;
  {
    auto st = db.Prepare(kBodies);
    if (!st) return st.error();
    st->BindInt64(1, static_cast<std::int64_t>(chain.id));
    for (StepResult r; (r = st->Step()) != StepResult::kDone;) {
      if (r == StepResult::kError) return st->status();
      bodies.push_back(st->ColumnInt64(0));
    }
  }
  for (const char* sql : {kGrains, kChain, kRaiseFloor}) {
    auto st = db.Prepare(sql);
    if (!st) return st.error();
    st->BindInt64(1, static_cast<std::int64_t>(chain.id));
    GRAINSTORE_RETURN_IF_ERROR(st->Run());
  }
  for (std::int64_t b : bodies) GRAINSTORE_RETURN_IF_ERROR(AdjustRefs(b, -1));
  return Status::Ok();
}

namespace {

// The columns VersionFromRow reads, in its order.
#define GS_VERSION_COLS                                                                \
  "grain_id, seq, subject, relation, created_ns, size, op, supersedes, derived_from, " \
  "flags, body_id IS NULL"

VersionInfo VersionFromRow(const Statement& st, ChainId chain) {
  VersionInfo v;
  v.grain_id = ToHex(st.ColumnBlobView(0));
  v.chain_id = chain;
  v.seq = static_cast<std::uint32_t>(st.ColumnInt64(1));
  v.subject = st.ColumnText(2);
  v.relation = st.ColumnText(3);
  v.created_ns = st.ColumnInt64(4);
  v.size = static_cast<std::uint64_t>(st.ColumnInt64(5));
  v.op = st.ColumnText(6);
  if (!st.ColumnIsNull(7)) v.supersedes = ToHex(st.ColumnBlobView(7));
  if (!st.ColumnIsNull(8)) v.derived_from = ToHex(st.ColumnBlobView(8));
  std::int64_t flags = st.ColumnInt64(9);
  v.transient = (flags & kGrainFlagTransient) != 0;
  v.purged = st.ColumnInt64(10) != 0 && (flags & kGrainFlagPurged) != 0;
  return v;
}

}  // namespace

Result<std::vector<VersionInfo>> StoreImpl::Versions(ChainId chain, std::uint32_t after_seq,
                                                      std::size_t limit) {
  static constexpr char kSql[] = "SELECT " GS_VERSION_COLS
                                 " FROM grains WHERE chain_id = ? AND seq > ? ORDER BY seq LIMIT ?";
  auto st = db.Prepare(kSql);
  if (!st) return st.error();
  st->BindInt64(1, static_cast<std::int64_t>(chain));
  st->BindInt64(2, after_seq);
  // LIMIT -1: no limit.
  st->BindInt64(3, limit == 0 || limit > static_cast<std::size_t>(INT64_MAX)
                       ? -1
                       : static_cast<std::int64_t>(limit));
  std::vector<VersionInfo> out;
  for (;;) {
    StepResult r = st->Step();
    if (r == StepResult::kDone) return out;
    if (r == StepResult::kError) return st->status();
    out.push_back(VersionFromRow(*st, chain));
  }
}

Result<std::vector<VersionInfo>> StoreImpl::VersionCandidates(ChainId chain,
                                                              const VersionSpec& spec) {
  // The row's columns are read only for a candidate; the scan itself keeps
  // one id at a time, so a chain of a million versions costs no memory.
  static constexpr char kSql[] =
      "SELECT " GS_VERSION_COLS " FROM grains WHERE chain_id = ? ORDER BY seq";
  auto st = db.Prepare(kSql);
  if (!st) return st.error();
  st->BindInt64(1, static_cast<std::int64_t>(chain));
  std::vector<VersionInfo> out;
  for (;;) {
    StepResult r = st->Step();
    if (r == StepResult::kDone) return out;
    if (r == StepResult::kError) return st->status();
    const bool numbered = spec.number != 0 && st->ColumnInt64(1) == spec.number;
    if (numbered || (!spec.id_prefix.empty() &&
                     RawIdHasHexPrefix(st->ColumnBlobView(0), spec.id_prefix))) {
      out.push_back(VersionFromRow(*st, chain));
    }
  }
}

Result<std::optional<VersionInfo>> StoreImpl::Version(ChainId chain, std::int64_t seq) {
  static constexpr char kSql[] =
      "SELECT " GS_VERSION_COLS " FROM grains WHERE chain_id = ? AND seq = ?";
  auto st = db.Prepare(kSql);
  if (!st) return st.error();
  st->BindInt64(1, static_cast<std::int64_t>(chain));
  st->BindInt64(2, seq);
  StepResult r = st->Step();
  if (r == StepResult::kError) return st->status();
  if (r == StepResult::kDone) return std::optional<VersionInfo>();
  return std::optional<VersionInfo>(VersionFromRow(*st, chain));
}

#undef GS_VERSION_COLS

Status StoreImpl::LogOp(NsId ns, std::string_view op, std::string_view subject,
                        std::string_view new_subject, NodeId node, ChainId chain,
                        std::string_view grain_id_raw, std::int64_t now) {
  static constexpr char kSql[] =
      "INSERT INTO oplog(ns_id, at_ns, op, subject, new_subject, node_id, chain_id, grain_id, "
      "origin) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)";
  auto st = db.Prepare(kSql);
  if (!st) return st.error();
  st->BindInt64(1, ns);
  st->BindInt64(2, now);
  st->BindText(3, op);
  st->BindText(4, subject);
  st->BindText(5, new_subject);
  st->BindInt64(6, static_cast<std::int64_t>(node));
  st->BindInt64(7, static_cast<std::int64_t>(chain));
  if (grain_id_raw.empty()) {
    st->BindNull(8);
  } else {
    st->BindBlob(8, grain_id_raw);
  }
  st->BindInt64(9, static_cast<std::int64_t>(origin));
  return st->Run();
}

}  // namespace grainstore
