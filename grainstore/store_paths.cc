// Store operations addressed by key ("/memories/a/b.txt"): the memory tool's
// and the CLI's view of the tree.
#include <unistd.h>

#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "grainstore/path.h"
#include "grainstore/store.h"
#include "schema.h"
#include "store_impl.h"

namespace grainstore {
namespace {

NewNode DefaultFile(std::uint32_t uid, std::uint32_t gid) {
  return NewNode{.kind = NodeKind::kFile, .mode = 0644, .uid = uid, .gid = gid};
}

}  // namespace

Result<NodeInfo> Store::StatKey(NsId ns, std::string_view key) {
  std::lock_guard lock(impl_->mu);
  auto row = impl_->InRead([&] { return impl_->NodeByKey(ns, key); });
  if (!row) return row.error();
  return std::move(*row);
}

Result<std::optional<NodeInfo>> Store::FileInTheWay(NsId ns, std::string_view key) {
  std::lock_guard lock(impl_->mu);
  return impl_->InRead([&]() -> Result<std::optional<NodeInfo>> {
    for (std::string at(key); at.size() > kMemoriesRoot.size(); at = ParentKey(at)) {
      auto node = impl_->NodeByKey(ns, at);
      if (node) {
        if (node->kind == NodeKind::kDirectory) return std::optional<NodeInfo>();
        return std::optional<NodeInfo>(std::move(*node));
      }
      if (!node.error().IsNotFound()) return node.error();
    }
    return std::optional<NodeInfo>();
  });
}

Result<std::string> Store::ReadFile(NsId ns, std::string_view key, NodeInfo* info) {
  std::lock_guard lock(impl_->mu);
  StoreImpl& s = *impl_;
  // The cache keeps bodies only; a caller that wants the node's record too
  // reads it from SQL.
  const bool want_info = info != nullptr;
  // Nothing committed since the cache was last checked: a hit needs no SQL.
  if (!want_info && s.NothingCommittedSinceSeen()) {
    if (const ReadCache::Entry* hit = s.read_cache.Find(ns, key)) return hit->body;
  }
  // One read transaction: the stamp and the row describe the same state.
  Transaction txn(&s.db);
  GRAINSTORE_RETURN_IF_ERROR(txn.Begin(Transaction::Kind::kRead));
  // Empties the cache if anything committed since it was last checked.
  if (auto version = s.CurrentDataVersion(); !version) return version.error();
  if (!want_info) {
    if (const ReadCache::Entry* hit = s.read_cache.Find(ns, key)) {
      GRAINSTORE_RETURN_IF_ERROR(txn.Commit());
      return hit->body;
    }
  }
  std::string body;
  NodeKind kind;
  if (want_info) {
    // The node's row, then the body it names: one key lookup, as without info.
    auto row = s.NodeByKey(ns, key);
    if (!row) return row.error();
    kind = row->kind;
    if (kind == NodeKind::kFile) {
      auto data = s.BodyData(row->body_id);
      if (!data) return data.error();
      body = std::move(*data);
    }
    *info = std::move(*row);
  } else {
    auto found = s.KindAndBodyByKey(ns, key, &body);
    if (!found) return found.error();
    kind = *found;
  }
  GRAINSTORE_RETURN_IF_ERROR(txn.Commit());
  if (kind != NodeKind::kFile) return Status::IsADirectory(fmt::format("{} is not a file", key));
  s.read_cache.Put(ns, key, body);
  return body;
}

Result<WriteResult> Store::PutFile(NsId ns, std::string_view key, std::string_view body) {
  std::lock_guard lock(impl_->mu);
  StoreImpl& s = *impl_;
  Transaction txn(&s.db);
  GRAINSTORE_RETURN_IF_ERROR(txn.Begin());
  std::int64_t now = NowNs();
  WriteResult out;
  auto existing = s.NodeByKey(ns, key);
  NodeInfo node;
  if (existing) {
    if (existing->kind != NodeKind::kFile) {
      return Status::IsADirectory(fmt::format("{} is not a file", key));
    }
    // The size is weighed after the path: what stands there, or above it,
    // is the first thing wrong with the write (the memory tool's order).
    GRAINSTORE_RETURN_IF_ERROR(CheckBodySize(body.size()));
    node = std::move(*existing);
  } else if (existing.error().IsNotFound()) {
    if (key == kMemoriesRoot) return Status::IsADirectory("the root is a directory");
    auto parent = s.EnsureParents(ns, key, now);
    if (!parent) return parent.error();
    GRAINSTORE_RETURN_IF_ERROR(CheckBodySize(body.size()));
    auto made = s.InsertNode(ns, *parent, BaseName(key),
                             DefaultFile(parent->uid, parent->gid), now);
    if (!made) return made.error();
    node = std::move(*made);
    out.created = true;
  } else {
    return existing.error();
  }
  const bool created = out.created;
  GRAINSTORE_RETURN_IF_ERROR(s.SealBody(&node, body, now, now, Saver::kTool, &out));
  out.created = created;
  GRAINSTORE_RETURN_IF_ERROR(txn.Commit());
  return out;
}

Result<WriteResult> Store::EditFile(NsId ns, std::string_view key, const EditFn& edit) {
  std::lock_guard lock(impl_->mu);
  StoreImpl& s = *impl_;
  Transaction txn(&s.db);
  GRAINSTORE_RETURN_IF_ERROR(txn.Begin());
  auto node = s.NodeByKey(ns, key);
  if (!node) return node.error();
  if (node->kind != NodeKind::kFile) {
    return Status::IsADirectory(fmt::format("{} is not a file", key));
  }
  auto current = s.BodyData(node->body_id);
  if (!current) return current.error();
  std::string next;
  GRAINSTORE_RETURN_IF_ERROR(edit(*current, &next));
  std::int64_t now = NowNs();
  WriteResult out;
  // The edit's result may be stored as a splice on what it was made from.
  const KnownBody edited{.id = node->body_id, .content = *current};
  GRAINSTORE_RETURN_IF_ERROR(
      s.SealBody(&*node, next, now, now, Saver::kTool, &out, {.known = &edited}));
  GRAINSTORE_RETURN_IF_ERROR(txn.Commit());
  return out;
}

Status Store::MakeDirs(NsId ns, std::string_view key) {
  std::lock_guard lock(impl_->mu);
  StoreImpl& s = *impl_;
  Transaction txn(&s.db);
  GRAINSTORE_RETURN_IF_ERROR(txn.Begin());
  auto existing = s.NodeByKey(ns, key);
  if (existing) {
    if (existing->kind == NodeKind::kDirectory) return Status::Ok();
    return Status::AlreadyExists(fmt::format("{} exists and is not a directory", key));
  }
  if (!existing.error().IsNotFound()) return existing.error();
  std::int64_t now = NowNs();
  // EnsureParents creates the directories above the last segment; the last
  // segment is made here.
  auto parent = s.EnsureParents(ns, key, now);
  if (!parent) return parent.error();
  NewNode dir{.kind = NodeKind::kDirectory, .mode = 0755, .uid = parent->uid,
              .gid = parent->gid};
  auto made = s.InsertNode(ns, *parent, BaseName(key), dir, now);
  if (!made) return made.error();
  GRAINSTORE_RETURN_IF_ERROR(s.LogOp(ns, "mkdir", made->key, "", made->id, 0, "", now));
  return txn.Commit();
}

Status Store::DeleteKey(NsId ns, std::string_view key) {
  if (key == kMemoriesRoot) return Status::InvalidArgument("cannot delete the root");
  std::lock_guard lock(impl_->mu);
  StoreImpl& s = *impl_;
  Transaction txn(&s.db);
  GRAINSTORE_RETURN_IF_ERROR(txn.Begin());
  auto node = s.NodeByKey(ns, key);
  if (!node) return node.error();
  GRAINSTORE_RETURN_IF_ERROR(s.RemoveTree(*node, NowNs(), Vacate::kDelete));
  return txn.Commit();
}

Status Store::RenameKey(NsId ns, std::string_view old_key, std::string_view new_key) {
  if (old_key == kMemoriesRoot) return Status::InvalidArgument("cannot rename the root");
  std::lock_guard lock(impl_->mu);
  StoreImpl& s = *impl_;
  Transaction txn(&s.db);
  GRAINSTORE_RETURN_IF_ERROR(txn.Begin());
  auto dst = s.NodeByKey(ns, new_key);
  if (dst) return Status::AlreadyExists(fmt::format("{} already exists", new_key));
  if (!dst.error().IsNotFound()) return dst.error();
  auto src = s.NodeByKey(ns, old_key);
  if (!src) return src.error();
  if (IsStrictlyInside(new_key, old_key)) {
    return Status::InvalidArgument(fmt::format("cannot move {} inside itself", old_key));
  }
  std::int64_t now = NowNs();
  auto parent = s.EnsureParents(ns, new_key, now);
  if (!parent) return parent.error();
  GRAINSTORE_RETURN_IF_ERROR(
      s.MoveNode(&*src, *parent, BaseName(new_key), src->versioning, now));
  return txn.Commit();
}

Result<std::vector<NodeInfo>> Store::ListChildren(NodeId dir) {
  std::lock_guard lock(impl_->mu);
  auto rows = impl_->Children(dir, "", SIZE_MAX);
  if (!rows) return rows.error();
  std::vector<NodeInfo> out;
  out.reserve(rows->size());
  for (NodeInfo& r : *rows) out.push_back(std::move(r));
  return out;
}

}  // namespace grainstore
