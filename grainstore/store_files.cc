// File semantics over the tree: sealing versions, retiring chains, removing
// and moving subtrees. See docs/storage-format.md ("Versioning rules").
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "grain_id.h"
#include "grainstore/path.h"
#include "store_impl.h"

namespace grainstore {
namespace {

// The chain deleted at `key` last, within the revive window: revived only
// if it was vacated through the mount (unlink or rename-away). An older
// vacated chain is not: another file came and went at the path after it,
// which ended that save. (Purged chains are left out: a purge of the path
// purges the vacated one.)
constexpr char kRevivableSql[] =
    "SELECT id, revivable >= ? FROM chains WHERE ns_id = ? AND subject = ? "
    "AND relation = ? AND state = 2 AND deleted_ns >= ? "
    "ORDER BY deleted_ns DESC, id DESC LIMIT 1";

}  // namespace

Status StoreImpl::SealBody(NodeInfo* node, std::string_view body, std::int64_t mtime,
                           std::int64_t now, Saver saver, WriteResult* out,
                           const SealOptions& options) {
  NodeInfo& n = *node;
  const std::int64_t changed = options.ctime != 0 ? options.ctime : now;
  GRAINSTORE_RETURN_IF_ERROR(CheckBodySize(body.size()));
  if (saver == Saver::kTool && n.versioning == Versioning::kUnversioned) {
    // The memory tool's writes are always versions: a file the mount stored
    // unversioned (a temp or backup name, a file under .git/) becomes a
    // versioned one, its content so far the first version.
    n.versioning = Versioning::kVersioned;
    if (node->body_id != 0) {
      auto current = BodyData(node->body_id);
      if (!current) return current.error();
      if (*current != body) {
        WriteResult first;
        GRAINSTORE_RETURN_IF_ERROR(SealBody(node, *current, n.mtime_ns, now, saver, &first));
      }
    }
  }
  std::string hash;
  // A versioned file's new body is referenced by exactly the one grain
  // appended below (new content always differs from the head's), so a body
  // row inserted here starts with that reference.
  const bool versioned = n.versioning != Versioning::kUnversioned;
  bool inserted = false;
  // An unversioned file's body is planned as a versioned one's: a log or a
  // database's -wal kept under a temp name is appended to at every save,
  // and stored whole each time it cost the square of its size. Its bases
  // stay while a delta holds them (AdjustRefs), and every base an append
  // run picks lies under the file's current body.
  auto plan = PlanBody(*node, body, options.prefix, options.known);
  if (!plan) return plan.error();
  auto body_id = InternBody(body, &hash, versioned ? 1 : 0, &inserted, &*plan);
  if (!body_id) return body_id.error();
  const NodeInfo before = *node;
  // Stored whole without a splice weighed: see below, once the chain is known.
  const bool weigh_splice = inserted && !plan->splice_tried && plan->base_id == 0;
  KeepSealedBody(before, *body_id, inserted, std::move(*plan), body);
  out->created = false;
  out->new_version = false;
  if (n.versioning == Versioning::kUnversioned) {
    GRAINSTORE_RETURN_IF_ERROR(
        UpdateNodeContent(before, *body_id, body.size(), 0, n.versioning, mtime, changed));
    if (before.body_id != *body_id) {
      GRAINSTORE_RETURN_IF_ERROR(LogOp(n.ns, "write", n.key, "", n.id, 0, "", now));
    }
  } else {
    ChainRow chain;
    if (n.chain_id != 0) {
      auto c = ChainById(n.chain_id);
      if (!c) return c.error();
      chain = std::move(*c);
    } else {
      std::int64_t revived = 0;
      if (saver == Saver::kMount) {
        auto found = RevivableChainAt(n.ns, n.key, now, options.revive);
        if (!found) return found.error();
        revived = *found;
      }
      if (revived != 0) {
        auto c = ChainById(static_cast<ChainId>(revived));
        if (!c) return c.error();
        chain = std::move(*c);
        GRAINSTORE_RETURN_IF_ERROR(SetChainState(chain.id, ChainState::kLive, 0, 0));
        GRAINSTORE_RETURN_IF_ERROR(LogOp(n.ns, "revive", n.key, "", n.id, chain.id, "", now));
      } else {
        auto c = NewChain(n.ns, n.key, kMemoryFileRelation, now);
        if (!c) return c.error();
        chain = std::move(*c);
      }
    }
    const std::int64_t head_body = chain.head_grain != 0 ? chain.head_body : -1;
    if (head_body != *body_id) {
      const bool first = chain.head_grain == 0;
      GrainSpec spec{.type = GrainType::kFact, .ns = n.ns, .subject = n.key,
                     .relation = kMemoryFileRelation, .object = "", .body_id = *body_id,
                     .body_hash = hash, .size = body.size(), .op = first ? "create" : "edit",
                     .derived_from = options.derived_from, .body_counted = inserted,
                     .flags = saver == Saver::kMount ? kGrainFlagMountSave : 0};
      auto g = AppendGrain(&chain, spec, now);
      if (!g) return g.error();
      // A body stored whole with no earlier version at hand to weigh a splice
      // on (a file made again where its history is revived, one written by a
      // process that did not seal the last version): the chain's previous
      // version is read now, and the new row may become a splice on it.
      if (weigh_splice && head_body > 0 && body.size() >= kMinDeltaBase) {
        auto previous = BodyData(head_body);
        if (!previous) return previous.error();
        GRAINSTORE_RETURN_IF_ERROR(
            MaybeStoreAsSplice(*body_id, body, {.id = head_body, .content = *previous}));
      }
      GRAINSTORE_RETURN_IF_ERROR(
          LogOp(n.ns, first ? "add" : "supersede", n.key, "", n.id, chain.id, g->id, now));
      out->new_version = true;
      out->grain_id = ToHex(g->id);
    } else {
      out->grain_id = ToHex(chain.head_id);
    }
    out->seq = chain.head_seq;
    n.chain_id = chain.id;
    GRAINSTORE_RETURN_IF_ERROR(
        UpdateNodeContent(before, *body_id, body.size(), chain.id, n.versioning, mtime, changed));
  }
  node->body_id = *body_id;
  n.size = body.size();
  n.mtime_ns = mtime;
  n.ctime_ns = changed;
  out->node = n;
  out->base = BodyBase{.body = *body_id, .size = body.size(), .hash = std::move(hash)};
  return Status::Ok();
}

Result<std::int64_t> StoreImpl::RevivableChainAt(NsId ns, std::string_view key, std::int64_t now,
                                                  int at_least) {
  auto st = db.Prepare(kRevivableSql);
  if (!st) return st.error();
  st->BindInt64(1, at_least);
  st->BindInt64(2, ns);
  st->BindText(3, key);
  st->BindText(4, kMemoryFileRelation);
  st->BindInt64(5, now - options.revive_window_ns);
  StepResult r = st->Step();
  if (r == StepResult::kError) return st->status();
  return r == StepResult::kRow && st->ColumnInt64(1) != 0 ? st->ColumnInt64(0) : 0;
}

Result<bool> StoreImpl::IsYoungMountSave(const ChainRow& chain, std::int64_t now) {
  if (now - chain.created_ns >= options.revive_window_ns || chain.head_seq > 1) return false;
  if (chain.head_grain == 0) return true;  // no version at all
  auto flags = GrainFlags(chain.head_grain);
  if (!flags) return flags.error();
  return (*flags & kGrainFlagMountSave) != 0;
}

Result<std::optional<ChainRow>> StoreImpl::YoungMountChain(std::int64_t chain_id,
                                                           std::int64_t now) {
  auto chain = ChainById(chain_id);
  if (!chain) return chain.error();
  auto young = IsYoungMountSave(*chain, now);
  if (!young) return young.error();
  if (!*young) return std::optional<ChainRow>();
  return std::optional<ChainRow>(std::move(*chain));
}

Status StoreImpl::RetireChain(const NodeInfo& file, std::int64_t now, Vacate vacate,
                              std::string_view moved_to) {
  const NodeInfo& n = file;
  if (n.kind != NodeKind::kFile || n.chain_id == 0) return Status::Ok();
  auto chain = ChainById(n.chain_id);
  if (!chain) return chain.error();
  bool discard = false;
  if (vacate == Vacate::kVacate) {
    auto young = IsYoungMountSave(*chain, now);
    if (!young) return young.error();
    discard = *young;
  }
  if (discard) {
    // A short-lived file saved through the mount and removed within seconds
    // of its creation never keeps a chain of its own (temp files under names
    // we do not recognise).
    GRAINSTORE_RETURN_IF_ERROR(DiscardChain(*chain));
    return LogOp(n.ns, "discard", n.key, moved_to, n.id, 0, "", now);
  }
  GRAINSTORE_RETURN_IF_ERROR(
      SetChainState(chain->id, ChainState::kDeleted, now,
                    vacate == Vacate::kVacate ? kRevivableUnlinked : 0));
  if (!moved_to.empty()) return LogOp(n.ns, "vacate", n.key, moved_to, n.id, chain->id, "", now);
  return LogOp(n.ns, "delete", n.key, "", n.id, chain->id, chain->head_id, now);
}

Status StoreImpl::RemoveTree(const NodeInfo& node, std::int64_t now, Vacate vacate) {
  std::vector<NodeInfo> rows;
  if (node.kind == NodeKind::kDirectory) {
    auto below = Descendants(node.ns, node.key);
    if (!below) return below.error();
    rows = std::move(*below);
    // Deepest first: everything under a directory is removed (and logged)
    // before the directory itself, so the op-log replays in order. A key
    // sorts before every key it is a prefix of ("a/b" < "a/b/c"), so
    // descending key order is a post-order of the tree.
    std::sort(rows.begin(), rows.end(),
              [](const NodeInfo& a, const NodeInfo& b) { return a.key > b.key; });
  }
  rows.push_back(node);
  for (const NodeInfo& row : rows) {
    GRAINSTORE_RETURN_IF_ERROR(RetireChain(row, now, vacate));
    GRAINSTORE_RETURN_IF_ERROR(DeleteNodeRow(row));
    if (row.kind != NodeKind::kFile || row.chain_id == 0) {
      GRAINSTORE_RETURN_IF_ERROR(
          LogOp(row.ns, row.kind == NodeKind::kDirectory ? "rmdir" : "unlink",
                row.key, "", row.id, 0, "", now));
    }
  }
  return TouchDir(node.parent_id, now);
}

namespace {

// Appends a provenance grain recording that a chain moved to `subject`; its
// raw id goes to `grain` when given.
Status AppendRenameGrain(StoreImpl* s, ChainId chain_id, std::string_view subject,
                         std::int64_t body_id, std::uint64_t size, std::int64_t now,
                         std::string* grain = nullptr) {
  auto chain = s->ChainById(chain_id);
  if (!chain) return chain.error();
  if (chain->subject == subject) return Status::Ok();
  auto hash = s->BodyHash(body_id);
  if (!hash) return hash.error();
  const std::string prev = chain->head_id;
  GRAINSTORE_RETURN_IF_ERROR(s->SetChainSubject(chain_id, subject));
  chain->subject = std::string(subject);
  GrainSpec spec{.type = GrainType::kFact, .ns = chain->ns, .subject = subject,
                 .relation = kMemoryFileRelation, .object = "", .body_id = body_id,
                 .body_hash = *hash, .size = size, .op = "rename", .derived_from = prev};
  auto g = s->AppendGrain(&*chain, spec, now);
  if (!g) return g.error();
  if (grain != nullptr) *grain = g->id;
  return Status::Ok();
}

}  // namespace

Status StoreImpl::MoveNode(NodeInfo* src, const NodeInfo& parent, std::string_view name,
                           Versioning target_versioning, std::int64_t now, RenameHint hint) {
  NodeInfo& n = *src;
  if (parent.kind != NodeKind::kDirectory) {
    return Status::NotADirectory(fmt::format("{} is not a directory", parent.key));
  }
  GRAINSTORE_RETURN_IF_ERROR(ValidateName(name));
  const std::string old_key = n.key;
  const std::string new_key = JoinKey(parent.key, name);
  std::string logged_grain;  // a moved file's rename grain, for the op-log
  // The rename's op-log entry precedes a seal's at the new name (revive, add,
  // supersede): replayed in order, the log moves the file before writing it.
  bool rename_logged = false;
  auto log_rename = [&]() -> Status {
    rename_logged = true;
    return LogOp(n.ns, "rename", old_key, new_key, n.id, n.chain_id, logged_grain, now);
  };
  if (new_key.size() > kMaxKeyBytes) return Status::NameTooLong("path is too long");
  const NodeId old_parent = n.parent_id;
  std::vector<NodeInfo> below;
  if (n.kind == NodeKind::kDirectory) {
    auto d = Descendants(n.ns, old_key);
    if (!d) return d.error();
    below = std::move(*d);
    // Every path under the directory changes by the same number of bytes;
    // none may leave the range that paths are read and written in.
    for (const NodeInfo& row : below) {
      if (new_key.size() + (row.key.size() - old_key.size()) > kMaxKeyBytes) {
        return Status::NameTooLong("path is too long");
      }
    }
  }
  GRAINSTORE_RETURN_IF_ERROR(UpdateNodePlace(n.id, parent.id, name, new_key, now));
  n.parent_id = parent.id;
  n.name = std::string(name);
  n.key = new_key;
  n.ctime_ns = now;
  if (n.kind == NodeKind::kDirectory) {
    // substr() counts characters in TEXT and bytes in a BLOB; ?2 is a byte
    // offset, so the key is cut as a BLOB and read back as UTF-8 text.
    static constexpr char kRekey[] =
        "UPDATE nodes SET key = ?1 || CAST(substr(CAST(key AS BLOB), ?2) AS TEXT) "
        "WHERE ns_id = ?3 AND key >= ?4 AND key < ?5";
    auto st = db.Prepare(kRekey);
    if (!st) return st.error();
    std::string lo = old_key + "/", hi = old_key + "0";
    st->BindText(1, new_key);
    st->BindInt64(2, static_cast<std::int64_t>(old_key.size()) + 1);
    st->BindInt64(3, n.ns);
    st->BindText(4, lo);
    st->BindText(5, hi);
    GRAINSTORE_RETURN_IF_ERROR(st->Run());
    for (const NodeInfo& d : below) {
      if (d.kind != NodeKind::kFile || d.chain_id == 0) continue;
      std::string sub = new_key + d.key.substr(old_key.size());
      GRAINSTORE_RETURN_IF_ERROR(
          AppendRenameGrain(this, d.chain_id, sub, d.body_id, d.size, now));
    }
  } else if (n.kind == NodeKind::kFile) {
    const bool was_versioned = n.versioning == Versioning::kVersioned;
    const bool now_versioned = target_versioning == Versioning::kVersioned;
    bool copy_in_place = false;
    // A young file saved through the mount and renamed, through the mount,
    // to where a file was just moved aside to a backup name (mv -b,
    // perl -pi~) is that file's new version, as a rename over it would be;
    // so is an rsync temp copy renamed to its real name. A path vacated by
    // an unlink is not taken this way: a rename is not a save there.
    const bool moves_chain = was_versioned && now_versioned && n.chain_id != 0;
    bool replaces = moves_chain && hint == RenameHint::kTempCopy;
    if (moves_chain && hint == RenameHint::kThroughMount) {
      auto vacated = RevivableChainAt(n.ns, new_key, now, kRevivableMovedAside);
      if (!vacated) return vacated.error();
      replaces = *vacated != 0;
    }
    if (replaces) {
      auto young = YoungMountChain(n.chain_id, now);
      if (!young) return young.error();
      if (*young) {
        // The young file's own chain goes; its content is sealed anew at its
        // real name (reviving a vacated chain there, if any). Until then the
        // node holds its body as a chainless node does
        // (SealBody hands that reference back), so discarding the chain
        // cannot free the body, nor its id be reused under the seal.
        auto body = BodyData(src->body_id);
        if (!body) return body.error();
        GRAINSTORE_RETURN_IF_ERROR(AdjustRefs(src->body_id, 1));
        GRAINSTORE_RETURN_IF_ERROR(DiscardChain(**young));
        GRAINSTORE_RETURN_IF_ERROR(LogOp(n.ns, "discard", old_key, new_key, n.id, 0, "", now));
        n.chain_id = 0;
        GRAINSTORE_RETURN_IF_ERROR(log_rename());
        WriteResult ignored;
        // A rename is a save only where a file was moved aside: a chain
        // vacated by an unlink stays deleted, as for any rename onto its path.
        GRAINSTORE_RETURN_IF_ERROR(SealBody(src, *body, n.mtime_ns, now, Saver::kMount,
                                            &ignored, {.revive = kRevivableMovedAside}));
        copy_in_place = true;
      }
    }
    if (copy_in_place) {
      // Sealed above.
    } else if (moves_chain) {
      GRAINSTORE_RETURN_IF_ERROR(AppendRenameGrain(this, n.chain_id, new_key, src->body_id,
                                                   n.size, now, &logged_grain));
    } else if (was_versioned && !now_versioned) {
      // Moved to a temp/backup name: the path is vacated, its chain revivable;
      // but a young temp copy on its way to its real name keeps no chain.
      std::optional<ChainRow> discarded;
      if (n.chain_id != 0 && hint == RenameHint::kTempCopy) {
        auto young = YoungMountChain(n.chain_id, now);
        if (!young) return young.error();
        discarded = std::move(*young);
      }
      if (n.chain_id != 0 && !discarded) {
        GRAINSTORE_RETURN_IF_ERROR(
            SetChainState(n.chain_id, ChainState::kDeleted, now, kRevivableMovedAside));
        GRAINSTORE_RETURN_IF_ERROR(LogOp(n.ns, "vacate", old_key, new_key, n.id, n.chain_id,
                                         "", now));
      }
      const NodeInfo before = *src;
      n.chain_id = 0;
      n.versioning = Versioning::kUnversioned;
      // The node takes its own reference on the body before the chain's go.
      GRAINSTORE_RETURN_IF_ERROR(UpdateNodeContent(before, src->body_id, n.size, 0,
                                                   n.versioning, n.mtime_ns, now));
      if (discarded) {
        GRAINSTORE_RETURN_IF_ERROR(DiscardChain(*discarded));
        GRAINSTORE_RETURN_IF_ERROR(LogOp(n.ns, "discard", old_key, new_key, n.id, 0, "", now));
      }
    } else if (!was_versioned && now_versioned) {
      n.versioning = Versioning::kVersioned;
      auto body = BodyData(src->body_id);
      if (!body) return body.error();
      GRAINSTORE_RETURN_IF_ERROR(log_rename());
      WriteResult ignored;
      GRAINSTORE_RETURN_IF_ERROR(
          SealBody(src, *body, n.mtime_ns, now, Saver::kMount, &ignored));
    }
  }
  GRAINSTORE_RETURN_IF_ERROR(TouchDir(old_parent, now));
  if (parent.id != old_parent) GRAINSTORE_RETURN_IF_ERROR(TouchDir(parent.id, now));
  return rename_logged ? Status::Ok() : log_rename();
}

}  // namespace grainstore
