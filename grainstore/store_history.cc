// Version history: listing and reading versions, restore and purge.
#include <fmt/format.h>

#include <optional>
#include <set>

#include "grain_id.h"
#include "grainstore/path.h"
#include "grainstore/store.h"
#include "grainstore/version_spec.h"
#include "schema.h"
#include "store_impl.h"

namespace grainstore {
namespace {

ChainInfo ToInfo(const ChainRow& c) {
  ChainInfo info;
  info.id = c.id;
  info.ns = c.ns;
  info.subject = c.subject;
  info.relation = c.relation;
  info.state = c.state;
  info.head_seq = c.head_seq;
  info.created_ns = c.created_ns;
  info.deleted_ns = c.deleted_ns;
  info.purged_ns = c.purged_ns;
  if (c.head_grain != 0) {
    info.head_grain_id = ToHex(c.head_id);
  }
  return info;
}

Result<ChainRow> FindLatest(StoreImpl* s, NsId ns, std::string_view subject,
                            std::string_view relation) {
  auto c = s->LatestChain(ns, subject, relation);
  if (!c) return c.error();
  if (!c->has_value()) {
    return Status::NotFound(fmt::format("no history for {} ({})", subject, relation));
  }
  return std::move(**c);
}

// Version `seq` of `chain`: nullopt when the chain has no such version, else
// its body id (0 once purge has erased the body).
Result<std::optional<std::int64_t>> VersionBodyId(StoreImpl* s, ChainId chain, std::int64_t seq) {
  static constexpr char kSql[] = "SELECT body_id FROM grains WHERE chain_id = ? AND seq = ?";
  auto st = s->db.Prepare(kSql);
  if (!st) return st.error();
  st->BindInt64(1, static_cast<std::int64_t>(chain));
  st->BindInt64(2, seq);
  StepResult r = st->Step();
  if (r == StepResult::kError) return st->status();
  if (r == StepResult::kDone) return std::optional<std::int64_t>();
  return std::optional<std::int64_t>(st->ColumnIsNull(0) ? 0 : st->ColumnInt64(0));
}

// The body of version `seq` of `chain`: NotFound when the chain has no such
// version or its body was purged. `version` (as the caller named
// it) and `subject` word the errors.
Result<std::string> VersionBody(StoreImpl* s, ChainId chain, std::int64_t seq,
                                std::string_view version, std::string_view subject) {
  auto body_id = VersionBodyId(s, chain, seq);
  if (!body_id) return body_id.error();
  if (!body_id->has_value()) {
    return Status::NotFound(fmt::format("{} has no version {}", subject, version));
  }
  if (**body_id == 0) {
    return Status::NotFound(fmt::format("version {} of {} was purged", version, subject));
  }
  return s->BodyData(**body_id);
}

// Every chain is written with its first version, and a purge keeps the
// rows: a chain without any was damaged (a page of versions that reads as
// empty), which is no empty history.
Status NoVersions(ChainId chain) {
  return Status::Corruption(fmt::format("chain {} has no versions", chain));
}

}  // namespace

Result<std::vector<VersionInfo>> Store::History(NsId ns, std::string_view subject,
                                                std::string_view relation) {
  std::lock_guard lock(impl_->mu);
  return impl_->InRead([&]() -> Result<std::vector<VersionInfo>> {
    auto chain = FindLatest(impl_.get(), ns, subject, relation);
    if (!chain) return chain.error();
    auto versions = impl_->Versions(chain->id);
    if (versions && versions->empty()) return NoVersions(chain->id);
    return versions;
  });
}

Result<ChainInfo> Store::FindChain(NsId ns, std::string_view subject, std::string_view relation) {
  std::lock_guard lock(impl_->mu);
  auto chain = FindLatest(impl_.get(), ns, subject, relation);
  if (!chain) return chain.error();
  return ToInfo(*chain);
}

Result<std::vector<std::string>> Store::ChainNamesUnder(NsId ns, std::string_view dir_key,
                                                        std::size_t limit) {
  // One probe per name: after a name with files below it, the next probe
  // starts past that whole subtree ('0' follows '/'), so a deleted directory
  // of many files costs as many probes as it has names at this level.
  static constexpr char kAfter[] =
      "SELECT subject FROM chains WHERE ns_id = ?1 AND subject > ?2 AND subject < ?3 "
      "AND relation = 'memory_file' AND state != 3 ORDER BY subject LIMIT 1";
  static constexpr char kFrom[] =
      "SELECT subject FROM chains WHERE ns_id = ?1 AND subject >= ?2 AND subject < ?3 "
      "AND relation = 'memory_file' AND state != 3 ORDER BY subject LIMIT 1";
  const std::string prefix = std::string(dir_key) + "/";
  const std::string end = std::string(dir_key) + "0";
  std::lock_guard lock(impl_->mu);
  StoreImpl& s = *impl_;
  std::set<std::string> names;
  std::string cursor = prefix;
  bool inclusive = false;
  while (names.size() < limit) {
    auto st = s.db.Prepare(inclusive ? kFrom : kAfter);
    if (!st) return st.error();
    st->BindInt64(1, ns);
    st->BindText(2, cursor);
    st->BindText(3, end);
    StepResult r = st->Step();
    if (r == StepResult::kError) return st->status();
    if (r == StepResult::kDone) break;
    const std::string subject = st->ColumnText(0);
    const std::string_view rest = std::string_view(subject).substr(prefix.size());
    const std::size_t slash = rest.find('/');
    std::string name(rest.substr(0, slash));
    // "a" (a file), "a.md", then "a/x" (under a directory named "a"): the
    // same name can come back once after other names.
    names.insert(name);
    if (slash == std::string_view::npos) {
      cursor = subject;
      inclusive = false;
    } else {
      cursor = prefix + name + "0";
      inclusive = true;
    }
  }
  return std::vector<std::string>(names.begin(), names.end());
}

Result<std::vector<VersionInfo>> Store::ChainVersions(ChainId chain, std::uint32_t after_seq,
                                                      std::size_t limit) {
  std::lock_guard lock(impl_->mu);
  return impl_->Versions(chain, after_seq, limit);
}

Status Store::ForEachVersion(ChainId chain, const VersionVisitor& visit) {
  for (std::uint32_t after = 0;;) {
    auto page = ChainVersions(chain, after, kVersionPage);
    if (!page) return page.error();
    if (after == 0 && page->empty()) return NoVersions(chain);
    for (const VersionInfo& v : *page) {
      if (!visit(v)) return Status::Ok();
    }
    if (page->size() < kVersionPage) return Status::Ok();
    after = page->back().seq;
  }
}

Result<std::vector<ChainInfo>> Store::ChainsAt(NsId ns, std::string_view subject,
                                               std::string_view relation) {
  std::lock_guard lock(impl_->mu);
  auto chains = impl_->ChainsAt(ns, subject, relation);
  if (!chains) return chains.error();
  std::vector<ChainInfo> out;
  for (const ChainRow& c : *chains) out.push_back(ToInfo(c));
  return out;
}

Result<ChainInfo> Store::ChainAt(NsId ns, std::string_view subject, ChainId id,
                                 std::string_view relation) {
  std::lock_guard lock(impl_->mu);
  auto chain = impl_->ChainById(id);
  if (!chain && !chain.error().IsNotFound()) return chain.error();
  if (!chain || chain->ns != ns || chain->subject != subject || chain->relation != relation) {
    return Status::NotFound(fmt::format("{} has no chain {}", subject, id));
  }
  return ToInfo(*chain);
}

namespace {

// Where a named version lies: its chain and its number there.
struct VersionRef {
  ChainId chain = 0;
  std::int64_t seq = 0;
};

// The version `spec` names within one chain (MatchVersion's rule). A number
// the chain has names its version directly; only a prefix, or a number no
// version has that may still be a prefix, scans the chain's grain ids.
Result<VersionRef> LocateInChain(StoreImpl* s, ChainId chain, const VersionSpec& spec,
                                 std::string_view version, std::string_view subject) {
  if (spec.NamesNone()) {
    return Status::NotFound(fmt::format("{} has no version {}", subject, version));
  }
  if (spec.number != 0) {
    auto has = VersionBodyId(s, chain, spec.number);  // purged or not
    if (!has) return has.error();
    if (has->has_value()) return VersionRef{chain, spec.number};
    if (spec.id_prefix.empty()) {
      return Status::NotFound(fmt::format("{} has no version {}", subject, version));
    }
  }
  auto versions = s->VersionCandidates(chain, spec);
  if (!versions) return versions.error();
  auto index = MatchVersion(*versions, spec, version, subject);
  if (!index) return index.error();
  return VersionRef{chain, (*versions)[*index].seq};
}

// LocateInChain for a version named as the caller wrote it.
Result<VersionRef> LocateNamedInChain(StoreImpl* s, ChainId chain, std::string_view version,
                                      std::string_view subject) {
  auto spec = ParseVersionSpec(version);
  if (!spec) return spec.error();
  return LocateInChain(s, chain, *spec, version, subject);
}

// The version `spec` names at `subject`: a number in the chain History shows;
// a grain id in any chain at `subject` (an older file deleted at the same
// path too), so a prefix two chains share there is ambiguous. The one rule
// ReadVersion and FindVersion share.
Result<VersionRef> LocateAtPath(StoreImpl* s, NsId ns, std::string_view subject,
                                std::string_view relation, std::string_view version) {
  auto chain = FindLatest(s, ns, subject, relation);
  if (!chain) return chain.error();
  auto parsed = ParseVersionSpec(version);
  if (!parsed) return parsed.error();
  const VersionSpec& spec = *parsed;
  auto ref = LocateInChain(s, chain->id, spec, version, subject);
  // A number names a version of the chain History shows when it has one;
  // a prefix may also start an id in another chain at `subject`, and then
  // it names no one version (ambiguous, as within one chain).
  const bool by_number = ref && spec.number != 0 && ref->seq == spec.number;
  if (by_number || spec.id_prefix.empty()) return ref;
  if (!ref && !ref.error().IsNotFound()) return ref;
  auto chains = s->ChainsAt(ns, subject, relation);
  if (!chains) return chains.error();
  VersionRef found = ref ? *ref : VersionRef{};
  int matches = ref ? 1 : 0;
  for (const ChainRow& other : *chains) {
    if (other.id == chain->id) continue;
    auto versions = s->VersionCandidates(other.id, VersionSpec{0, spec.id_prefix});
    if (!versions) return versions.error();
    for (const VersionInfo& v : *versions) {  // each one starts with the prefix
      found = VersionRef{other.id, v.seq};
      ++matches;
    }
  }
  if (matches > 1) {
    return Status::InvalidArgument(fmt::format("grain id prefix {} is ambiguous", version));
  }
  if (matches == 1) return found;
  return ref;
}

// The listing entry of a located version.
Result<VersionInfo> VersionAt(StoreImpl* s, const VersionRef& ref, std::string_view version,
                              std::string_view subject) {
  auto found = s->Version(ref.chain, ref.seq);
  if (!found) return found.error();
  if (found->has_value()) return std::move(**found);
  return Status::NotFound(fmt::format("{} has no version {}", subject, version));
}

}  // namespace

Result<std::string> Store::ReadVersion(NsId ns, std::string_view subject,
                                       std::string_view version, std::string_view relation) {
  std::lock_guard lock(impl_->mu);
  // One snapshot: a purge committing between the statements would leave the
  // version's body id naming a row that is gone.
  return impl_->InRead([&]() -> Result<std::string> {
    auto ref = LocateAtPath(impl_.get(), ns, subject, relation, version);
    if (!ref) return ref.error();
    return VersionBody(impl_.get(), ref->chain, ref->seq, version, subject);
  });
}

Result<std::string> Store::ReadChainVersion(ChainId chain, std::string_view subject,
                                            std::string_view version) {
  std::lock_guard lock(impl_->mu);
  return impl_->InRead([&]() -> Result<std::string> {
    auto ref = LocateNamedInChain(impl_.get(), chain, version, subject);
    if (!ref) return ref.error();
    return VersionBody(impl_.get(), ref->chain, ref->seq, version, subject);
  });
}

Result<std::string> Store::ReadChainBody(ChainId chain, std::int64_t body_id) {
  // From the newest version back: the body sought is nearly always one of
  // the last few.
  static constexpr char kHeld[] =
      "SELECT 1 FROM grains WHERE chain_id = ? AND body_id = ? ORDER BY seq DESC LIMIT 1";
  if (body_id == 0) return std::string();
  std::lock_guard lock(impl_->mu);
  StoreImpl& s = *impl_;
  return s.InRead([&]() -> Result<std::string> {
    auto st = s.db.Prepare(kHeld);
    if (!st) return st.error();
    st->BindInt64(1, static_cast<std::int64_t>(chain));
    st->BindInt64(2, body_id);
    StepResult r = st->Step();
    if (r == StepResult::kError) return st->status();
    if (r == StepResult::kDone) {
      return Status::NotFound(fmt::format("no version of chain {} holds body {}", chain, body_id));
    }
    return s.BodyData(body_id);
  });
}

Result<VersionInfo> Store::FindVersion(NsId ns, std::string_view subject,
                                       std::string_view version, std::string_view relation) {
  std::lock_guard lock(impl_->mu);
  return impl_->InRead([&]() -> Result<VersionInfo> {
    auto ref = LocateAtPath(impl_.get(), ns, subject, relation, version);
    if (!ref) return ref.error();
    return VersionAt(impl_.get(), *ref, version, subject);
  });
}

Result<VersionInfo> Store::FindChainVersion(ChainId chain, std::string_view subject,
                                            std::string_view version) {
  std::lock_guard lock(impl_->mu);
  return impl_->InRead([&]() -> Result<VersionInfo> {
    auto ref = LocateNamedInChain(impl_.get(), chain, version, subject);
    if (!ref) return ref.error();
    return VersionAt(impl_.get(), *ref, version, subject);
  });
}

Status Store::Restore(NsId ns, std::string_view key, ChainId wanted) {
  static constexpr char kDeleted[] =
      "SELECT id FROM chains WHERE ns_id = ?1 AND subject = ?2 AND relation = ?3 AND state = 2 "
      "AND (?4 = 0 OR id = ?4) ORDER BY deleted_ns DESC, id DESC LIMIT 1";
  static constexpr char kPurgedHere[] =
      "SELECT 1 FROM chains WHERE ns_id = ?1 AND subject = ?2 AND relation = ?3 AND state = 3 "
      "AND (?4 = 0 OR id = ?4)";
  std::lock_guard lock(impl_->mu);
  StoreImpl& s = *impl_;
  Transaction txn(&s.db);
  GRAINSTORE_RETURN_IF_ERROR(txn.Begin());
  std::int64_t chain_id = 0;
  {
    auto st = s.db.Prepare(kDeleted);
    if (!st) return st.error();
    st->BindInt64(1, ns);
    st->BindText(2, key);
    st->BindText(3, kMemoryFileRelation);
    st->BindInt64(4, static_cast<std::int64_t>(wanted));
    StepResult r = st->Step();
    if (r == StepResult::kError) return st->status();
    if (r == StepResult::kDone) {
      // A purged file is named as such: its tombstone is there, its bodies are not.
      auto purged = s.db.Prepare(kPurgedHere);
      if (!purged) return purged.error();
      purged->BindInt64(1, ns);
      purged->BindText(2, key);
      purged->BindText(3, kMemoryFileRelation);
      purged->BindInt64(4, static_cast<std::int64_t>(wanted));
      const StepResult p = purged->Step();
      if (p == StepResult::kError) return purged->status();
      if (p == StepResult::kRow) {
        return Status::NotFound(fmt::format(
            "the deleted file at {} was purged: its versions are erased and cannot be restored",
            key));
      }
      if (wanted != 0) {
        return Status::NotFound(fmt::format("chain {} is not a deleted file at {}", wanted, key));
      }
      return Status::NotFound(fmt::format("no deleted file at {}", key));
    }
    chain_id = st->ColumnInt64(0);
  }
  auto existing = s.NodeByKey(ns, key);
  if (existing) return Status::AlreadyExists(fmt::format("{} already exists", key));
  if (!existing.error().IsNotFound()) return existing.error();
  auto chain = s.ChainById(static_cast<ChainId>(chain_id));
  if (!chain) return chain.error();
  if (chain->head_grain == 0) return Status::Corruption("a chain head is missing");
  const std::int64_t body_id = chain->head_body;
  auto body = s.BodyData(body_id);
  if (!body) return body.error();
  std::int64_t now = NowNs();
  auto parent = s.EnsureParents(ns, key, now);
  if (!parent) return parent.error();
  NewNode spec{.kind = NodeKind::kFile, .mode = 0644, .uid = parent->uid,
               .gid = parent->gid};
  auto node = s.InsertNode(ns, *parent, BaseName(key), spec, now);
  if (!node) return node.error();
  GRAINSTORE_RETURN_IF_ERROR(s.SetChainState(chain->id, ChainState::kLive, 0, 0));
  GRAINSTORE_RETURN_IF_ERROR(s.UpdateNodeContent(*node, body_id, body->size(), chain->id,
                                                 Versioning::kVersioned, now, now));
  GRAINSTORE_RETURN_IF_ERROR(
      s.LogOp(ns, "restore", key, "", node->id, chain->id, chain->head_id, now));
  return txn.Commit();
}

Status Store::Purge(NsId ns, std::string_view key) {
  static constexpr char kDeleted[] =
      "SELECT id FROM chains WHERE ns_id = ? AND subject = ? AND relation = ? AND state = 2 "
      "ORDER BY id";
  static constexpr char kPurged[] =
      "SELECT 1 FROM chains WHERE ns_id = ? AND subject = ? AND relation = ? AND state = 3";
  static constexpr char kBodies[] =
      "SELECT body_id FROM grains WHERE chain_id = ? AND body_id IS NOT NULL ORDER BY seq";
  // flags | kGrainFlagPurged. The salt goes with the body: with it, a grain's
  // id would confirm a guessed body (docs/storage-format.md, "Grain ids").
  static constexpr char kErase[] =
      "UPDATE grains SET body_id = NULL, salt = NULL, flags = flags | 2 WHERE chain_id = ?";
  // The chain keeps its deletion time; the purge's is the op-log's entry.
  static constexpr char kMarkPurged[] = "UPDATE chains SET state = 3, revivable = 0 WHERE id = ?";
  std::lock_guard lock(impl_->mu);
  StoreImpl& s = *impl_;
  {
    Transaction txn(&s.db);
    GRAINSTORE_RETURN_IF_ERROR(txn.Begin());
    std::vector<std::int64_t> chains;
    {
      auto st = s.db.Prepare(kDeleted);
      if (!st) return st.error();
      st->BindInt64(1, ns);
      st->BindText(2, key);
      st->BindText(3, kMemoryFileRelation);
      for (StepResult r; (r = st->Step()) != StepResult::kDone;) {
        if (r == StepResult::kError) return st->status();
        chains.push_back(st->ColumnInt64(0));
      }
    }
    if (chains.empty()) {
      // Purged before: only the WAL's truncation may be left to finish, even
      // when a new file has been written at the path since.
      auto purged = s.db.Prepare(kPurged);
      if (!purged) return purged.error();
      purged->BindInt64(1, ns);
      purged->BindText(2, key);
      purged->BindText(3, kMemoryFileRelation);
      const StepResult r = purged->Step();
      if (r == StepResult::kError) return purged->status();
      if (r == StepResult::kDone) {
        auto live = s.LiveChain(ns, key, kMemoryFileRelation);
        if (!live) return live.error();
        if (live->has_value()) {
          return Status::Conflict(fmt::format("{} is live; delete it before purging", key));
        }
        return Status::NotFound(fmt::format("no deleted file at {}", key));
      }
    }
    std::int64_t now = NowNs();
    for (std::int64_t chain : chains) {
      std::vector<std::int64_t> bodies;
      {
        auto st = s.db.Prepare(kBodies);
        if (!st) return st.error();
        st->BindInt64(1, chain);
        for (StepResult r; (r = st->Step()) != StepResult::kDone;) {
          if (r == StepResult::kError) return st->status();
          bodies.push_back(st->ColumnInt64(0));
        }
      }
      auto erase = s.db.Prepare(kErase);
      if (!erase) return erase.error();
      erase->BindInt64(1, chain);
      GRAINSTORE_RETURN_IF_ERROR(erase->Run());
      for (std::int64_t b : bodies) GRAINSTORE_RETURN_IF_ERROR(s.AdjustRefs(b, -1));
      // A body the file shared with another (the same content, stored once)
      // stays; if it is a delta built on the purged versions, it is stored
      // whole now, so they go too (a splice's base holds the bytes its edit
      // removed). One built on the other file's own versions stays a delta.
      GRAINSTORE_RETURN_IF_ERROR(s.StoreWholeOverPurged(bodies));
      auto purged = s.db.Prepare(kMarkPurged);
      if (!purged) return purged.error();
      purged->BindInt64(1, chain);
      GRAINSTORE_RETURN_IF_ERROR(purged->Run());
      GRAINSTORE_RETURN_IF_ERROR(
          s.LogOp(ns, "purge", key, "", 0, static_cast<ChainId>(chain), "", now));
    }
    GRAINSTORE_RETURN_IF_ERROR(txn.Commit());
  }
  // Old page images of the erased bodies may still sit in the WAL, and in the
  // database file until the checkpoint copies the zeroed pages over them,
  // which a reader on an older snapshot holds back.
  Status truncated = CheckpointTruncate(&s.db, s.options.busy_timeout_ms);
  if (truncated.code() == StatusCode::kBusy) {
    return Status::Busy(fmt::format(
        "{} is purged, but {}, so old pages of it may remain in the store's files (the "
        "database or its WAL): run purge again once readers finish",
        key, truncated.message()));
  }
  if (!truncated.ok()) {  // a full disk: the checkpoint cannot grow the database file
    std::string message = fmt::format(
        "{} is purged, but the store's files could not be rewritten without its old pages "
        "({}), so they may remain there (the database or its WAL): run purge again once that "
        "is fixed",
        key, truncated.message());
    return truncated.code() == StatusCode::kNoSpace ? Status::NoSpace(std::move(message))
                                                    : Status::IOError(std::move(message));
  }
  return truncated;
}

}  // namespace grainstore
