// Store operations addressed by node id: the mount's view of the tree.
#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "grain_id.h"
#include "grainstore/path.h"
#include "grainstore/store.h"
#include "store_impl.h"

namespace grainstore {

Result<NodeInfo> Store::GetNode(NodeId id) {
  std::lock_guard lock(impl_->mu);
  auto row = impl_->InRead([&] { return impl_->NodeById(id); });
  if (!row) return row.error();
  return std::move(*row);
}

Result<std::uint64_t> Store::CountNodes(NsId ns) {
  // Counted from nodes_by_key's entries of `ns`, not from the table's rows.
  static constexpr char kSql[] = "SELECT count(*) FROM nodes WHERE ns_id = ?";
  std::lock_guard lock(impl_->mu);
  return impl_->InRead([&]() -> Result<std::uint64_t> {
    auto st = impl_->db.Prepare(kSql);
    if (!st) return st.error();
    st->BindInt64(1, ns);
    if (st->Step() != StepResult::kRow) return st->status();
    return static_cast<std::uint64_t>(st->ColumnInt64(0));
  });
}

Result<NodeInfo> Store::Lookup(NodeId parent, std::string_view name) {
  std::lock_guard lock(impl_->mu);
  auto row = impl_->InRead([&] { return impl_->NodeByParent(parent, name); });
  if (!row) return row.error();
  return std::move(*row);
}

Result<std::vector<NodeInfo>> Store::ReadDir(NodeId dir, std::string_view after_name,
                                             std::size_t limit) {
  std::lock_guard lock(impl_->mu);
  auto rows = impl_->InRead([&] { return impl_->Children(dir, after_name, limit); });
  if (!rows) return rows.error();
  std::vector<NodeInfo> out;
  out.reserve(rows->size());
  for (NodeInfo& r : *rows) out.push_back(std::move(r));
  return out;
}

Result<NodeInfo> Store::CreateNode(NodeId parent, std::string_view name, const NewNode& spec) {
  std::lock_guard lock(impl_->mu);
  StoreImpl& s = *impl_;
  Transaction txn(&s.db);
  GRAINSTORE_RETURN_IF_ERROR(txn.Begin());
  auto dir = s.NodeById(parent);
  if (!dir) return dir.error();
  std::int64_t now = NowNs();
  auto made = s.InsertNode(dir->ns, *dir, name, spec, now);
  if (!made) return made.error();
  const char* op = spec.kind == NodeKind::kDirectory ? "mkdir"
                   : spec.kind == NodeKind::kSymlink ? "symlink"
                                                     : "create";
  GRAINSTORE_RETURN_IF_ERROR(
      s.LogOp(made->ns, op, made->key, "", made->id, 0, "", now));
  if (spec.seal_empty && spec.kind == NodeKind::kFile) {
    WriteResult out;
    GRAINSTORE_RETURN_IF_ERROR(s.SealBody(&*made, "", now, now, Saver::kMount, &out));
    GRAINSTORE_RETURN_IF_ERROR(txn.Commit());
    return std::move(out.node);
  }
  GRAINSTORE_RETURN_IF_ERROR(txn.Commit());
  return std::move(*made);
}

Status Store::RemoveNode(NodeId parent, std::string_view name, bool want_dir, Vacate vacate,
                         NodeId* removed) {
  std::lock_guard lock(impl_->mu);
  StoreImpl& s = *impl_;
  Transaction txn(&s.db);
  GRAINSTORE_RETURN_IF_ERROR(txn.Begin());
  auto node = s.NodeByParent(parent, name);
  if (!node) return node.error();
  const bool is_dir = node->kind == NodeKind::kDirectory;
  if (want_dir && !is_dir) return Status::NotADirectory(fmt::format("{} is not a directory", name));
  if (!want_dir && is_dir) return Status::IsADirectory(fmt::format("{} is a directory", name));
  if (is_dir) {
    auto kids = s.Children(node->id, "", 1);
    if (!kids) return kids.error();
    if (!kids->empty()) return Status::NotEmpty(fmt::format("{} is not empty", name));
  }
  GRAINSTORE_RETURN_IF_ERROR(s.RemoveTree(*node, NowNs(), vacate));
  GRAINSTORE_RETURN_IF_ERROR(txn.Commit());
  if (removed != nullptr) *removed = node->id;
  return Status::Ok();
}

Result<NodeInfo> Store::RenameNode(NodeId parent, std::string_view name, NodeId new_parent,
                                   std::string_view new_name, RenameMode mode,
                                   Versioning target_versioning, RenameHint hint,
                                   NodeId* replaced) {
  if (replaced != nullptr) *replaced = 0;
  std::lock_guard lock(impl_->mu);
  StoreImpl& s = *impl_;
  Transaction txn(&s.db);
  GRAINSTORE_RETURN_IF_ERROR(txn.Begin());
  auto src = s.NodeByParent(parent, name);
  if (!src) return src.error();
  auto dir = s.NodeById(new_parent);
  if (!dir) return dir.error();
  if (dir->kind != NodeKind::kDirectory) {
    return Status::NotADirectory(fmt::format("{} is not a directory", dir->key));
  }
  const bool src_dir = src->kind == NodeKind::kDirectory;
  if (src_dir && (dir->id == src->id || IsStrictlyInside(dir->key, src->key))) {
    return Status::InvalidArgument(fmt::format("cannot move {} inside itself", src->key));
  }
  std::int64_t now = NowNs();
  auto dst = s.NodeByParent(new_parent, new_name);
  if (dst) {
    if (dst->id == src->id) return std::move(*src);
    if (mode == RenameMode::kNoReplace) {
      return Status::AlreadyExists(fmt::format("{} exists", dst->key));
    }
    const bool dst_dir = dst->kind == NodeKind::kDirectory;
    if (src_dir && !dst_dir) {
      return Status::NotADirectory(fmt::format("{} is not a directory", dst->key));
    }
    if (!src_dir && dst_dir) {
      return Status::IsADirectory(fmt::format("{} is a directory", dst->key));
    }
    if (dst_dir) {
      auto kids = s.Children(dst->id, "", 1);
      if (!kids) return kids.error();
      if (!kids->empty()) return Status::NotEmpty(fmt::format("{} is not empty", dst->key));
    }
    // A target with a history keeps it when the new name is versioned, and
    // also under a name the policy leaves unversioned (a file the memory tool
    // made as notes.bak, or in a directory named .~tmp~) when a save's temp
    // copy is moved over it (sed -i, perl -pi, mktemp + mv). But a file moved
    // to its own name plus a suffix is being put aside as a backup (mv -b,
    // perl -pi~, JetBrains' ___jb_old___): MoveNode vacates it, and the file
    // that lay at the backup name is tombstoned.
    const bool put_aside = parent == new_parent && src->chain_id != 0 &&
                           new_name.size() > name.size() && new_name.starts_with(name);
    const bool supersede = !src_dir && dst->kind == NodeKind::kFile &&
                           src->kind == NodeKind::kFile && dst->chain_id != 0 &&
                           (target_versioning == Versioning::kVersioned || !put_aside);
    if (supersede) {
      // Rename over an existing file: the target's chain continues with the
      // moved content; the moved node (and its st_ino) takes the target's place.
      // Read the body first: retiring a young chain may drop its last reference.
      auto body = s.BodyData(src->body_id);
      if (!body) return body.error();
      // The new version may be stored as a splice on the target's (a save
      // through a temp copy changes a few lines of a large file).
      std::string target_body;
      KnownBody target;
      if (s.WorthSplicing(*dst, body->size())) {
        auto held = s.BodyData(dst->body_id);
        if (!held) return held.error();
        target_body = std::move(*held);
        target = {.id = dst->body_id, .content = target_body};
      }
      GRAINSTORE_RETURN_IF_ERROR(s.RetireChain(*src, now, Vacate::kVacate, dst->key));
      // The new version derives from the source's last one, unless the
      // source's chain was a temp file's and is gone.
      std::string derived_from;
      if (src->chain_id != 0) {
        auto moved = s.ChainById(src->chain_id);
        if (moved) {
          derived_from = moved->head_id;
        } else if (!moved.error().IsNotFound()) {
          return moved.error();
        }
      }
      const NodeInfo src_before = *src;
      const std::string old_key = src->key;
      const ChainId chain = dst->chain_id;
      // The op-log replays in order: the target's node goes (its chain does
      // not: `unlink` names none), the file moves there, then its content is
      // sealed as the chain's next version (SealBody's `supersede`).
      GRAINSTORE_RETURN_IF_ERROR(s.DeleteNodeRow(*dst));
      GRAINSTORE_RETURN_IF_ERROR(
          s.LogOp(dst->ns, "unlink", dst->key, "", dst->id, 0, "", now));
      GRAINSTORE_RETURN_IF_ERROR(
          s.UpdateNodePlace(src->id, new_parent, new_name, dst->key, now));
      src->parent_id = new_parent;
      src->name = std::string(new_name);
      src->key = dst->key;
      src->chain_id = chain;
      src->versioning = Versioning::kVersioned;
      GRAINSTORE_RETURN_IF_ERROR(s.LogOp(src->ns, "rename", old_key, src->key,
                                         src->id, chain, "", now));
      WriteResult ignored;
      GRAINSTORE_RETURN_IF_ERROR(
          s.SealBody(&*src, *body, src->mtime_ns, now, Saver::kMount, &ignored,
                     {.derived_from = derived_from, .known = target.id != 0 ? &target : nullptr}));
      // SealBody saw the node already on the target's chain; the reference a
      // chainless source held on its old body goes now, after the new grain's.
      if (src_before.chain_id == 0) {
        GRAINSTORE_RETURN_IF_ERROR(s.AdjustRefs(src_before.body_id, -1));
      }
      // The temp copy's body was stored whole when it was written, before
      // the target's was at hand.
      if (target.id != 0) {
        GRAINSTORE_RETURN_IF_ERROR(s.MaybeStoreAsSplice(src->body_id, *body, target));
      }
      GRAINSTORE_RETURN_IF_ERROR(s.TouchDir(parent, now));
      if (new_parent != parent) GRAINSTORE_RETURN_IF_ERROR(s.TouchDir(new_parent, now));
      GRAINSTORE_RETURN_IF_ERROR(txn.Commit());
      if (replaced != nullptr) *replaced = dst->id;
      return std::move(*src);
    }
    GRAINSTORE_RETURN_IF_ERROR(s.RemoveTree(*dst, now, Vacate::kVacate));
  } else if (!dst.error().IsNotFound()) {
    return dst.error();
  }
  GRAINSTORE_RETURN_IF_ERROR(s.MoveNode(&*src, *dir, new_name, target_versioning, now, hint));
  GRAINSTORE_RETURN_IF_ERROR(txn.Commit());
  if (replaced != nullptr) *replaced = dst ? dst->id : 0;
  return std::move(*src);
}

Result<NodeInfo> Store::SetAttributes(NodeId id, const AttrUpdate& u) {
  static constexpr char kSql[] =
      "UPDATE nodes SET mode = ?, uid = ?, gid = ?, atime_ns = ?, mtime_ns = ?, ctime_ns = ? "
      "WHERE id = ?";
  std::lock_guard lock(impl_->mu);
  StoreImpl& s = *impl_;
  Transaction txn(&s.db);
  GRAINSTORE_RETURN_IF_ERROR(txn.Begin());
  auto row = s.NodeById(id);
  if (!row) return row.error();
  NodeInfo& n = *row;
  const auto access = [](const NodeInfo& x) { return std::tuple(x.mode, x.uid, x.gid); };
  const auto access_before = access(n);
  if (u.mode) n.mode = *u.mode & 07777;
  if (u.uid) n.uid = *u.uid;
  if (u.gid) n.gid = *u.gid;
  if (u.atime_ns) n.atime_ns = *u.atime_ns;
  if (u.mtime_ns) n.mtime_ns = *u.mtime_ns;
  n.ctime_ns = u.ctime_ns ? *u.ctime_ns : NowNs();
  auto st = s.db.Prepare(kSql);
  if (!st) return st.error();
  st->BindInt64(1, n.mode);
  st->BindInt64(2, n.uid);
  st->BindInt64(3, n.gid);
  st->BindInt64(4, n.atime_ns);
  st->BindInt64(5, n.mtime_ns);
  st->BindInt64(6, n.ctime_ns);
  st->BindInt64(7, static_cast<std::int64_t>(id));
  GRAINSTORE_RETURN_IF_ERROR(st->Run());
  // A change of who may do what is logged, so that other processes (a second
  // mount of the store) apply it; times alone (touch, a writeback close) are
  // not worth an entry each.
  if (access(n) != access_before) {
    GRAINSTORE_RETURN_IF_ERROR(
        s.LogOp(n.ns, "setattr", n.key, "", n.id, n.chain_id, "", n.ctime_ns));
  }
  GRAINSTORE_RETURN_IF_ERROR(txn.Commit());
  return std::move(n);
}

Result<std::string> Store::ReadBody(NodeId id, NodeInfo* info, BodyBase* base) {
  std::lock_guard lock(impl_->mu);
  StoreImpl& s = *impl_;
  return s.InRead([&]() -> Result<std::string> {
    auto row = s.NodeById(id);
    if (!row) return row.error();
    if (row->kind != NodeKind::kFile) {
      return Status::IsADirectory(fmt::format("{} is not a file", row->key));
    }
    auto body = s.BodyData(row->body_id);
    if (!body) return body.error();
    if (base != nullptr) {
      auto hash = s.BodyHash(row->body_id);
      if (!hash) return hash.error();
      *base = BodyBase{.body = row->body_id, .size = body->size(), .hash = std::move(*hash)};
    }
    if (info != nullptr) *info = std::move(*row);
    return body;
  });
}

Result<WriteResult> Store::WriteBody(NodeId id, std::string_view body,
                                     std::optional<std::int64_t> mtime_ns,
                                     std::string_view amends, const BodyBase* appended_to) {
  GRAINSTORE_RETURN_IF_ERROR(CheckBodySize(body.size()));
  std::lock_guard lock(impl_->mu);
  StoreImpl& s = *impl_;
  Transaction txn(&s.db);
  GRAINSTORE_RETURN_IF_ERROR(txn.Begin());
  auto row = s.NodeById(id);
  if (!row) return row.error();
  if (row->kind != NodeKind::kFile) {
    return Status::IsADirectory(fmt::format("{} is not a file", row->key));
  }
  std::int64_t now = NowNs();
  WriteResult out;
  // Body ids of unversioned files' freed bodies can be handed out again
  // (another mount may have truncated such a file and stored other bytes of
  // the same size since), so for those the content hash is compared too.
  bool replaced = appended_to != nullptr && appended_to->body >= 0 &&
                  (appended_to->body != row->body_id || appended_to->size != row->size);
  if (appended_to != nullptr && appended_to->body > 0 && !replaced &&
      row->versioning == Versioning::kUnversioned) {
    auto hash = s.BodyHash(row->body_id);
    if (!hash) return hash.error();
    replaced = appended_to->hash.empty() || *hash != appended_to->hash;
  }
  if (replaced && body.size() >= appended_to->size) {
    // Another writer replaced the body these bytes were appended to: append
    // them to what it stored, as O_APPEND writes to one file would land.
    auto current = s.BodyData(row->body_id);
    if (!current) return current.error();
    out.body = std::move(current).value();
    out.body.append(body.substr(appended_to->size));  // SealBody checks its size
    out.rebased = true;
    body = out.body;
  }
  // Bytes appended to the body the file still has begin with that body, whose
  // hash the caller holds: the append is then recognised and hashed without
  // touching the bytes before it (a large log grows at the cost of its new
  // lines).
  const BodyBase* prefix =
      appended_to != nullptr && !replaced && body.size() >= appended_to->size ? appended_to
                                                                               : nullptr;
  // The change time is the draft's last change, as a local disk keeps it: its
  // last write (its mtime) or a later chmod, chown or utimens (the node's
  // ctime), not the close that seals it. Never later than now: a future
  // mtime set by utimens was set now.
  const std::int64_t changed =
      mtime_ns ? std::min(now, std::max(*mtime_ns, row->ctime_ns)) : now;
  GRAINSTORE_RETURN_IF_ERROR(s.SealBody(&*row, body, mtime_ns.value_or(now), now, Saver::kMount,
                                        &out, {.prefix = prefix, .ctime = changed}));
  std::string amended;
  if (out.new_version && out.seq > 1 && FromHex(amends, &amended) && amended.size() == kHashBytes) {
    GRAINSTORE_RETURN_IF_ERROR(s.MarkTransient(out.node.chain_id, out.seq - 1, amended));
  }
  GRAINSTORE_RETURN_IF_ERROR(txn.Commit());
  return out;
}

}  // namespace grainstore
