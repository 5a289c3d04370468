// Node rows: the tree as stored.
#include <time.h>

#include <fmt/format.h>

#include "grainstore/path.h"
#include "store_impl.h"

namespace grainstore {
namespace {

#define GS_NODE_COLS                                                                     \
  "id, ns_id, parent_id, name, key, kind, mode, uid, gid, size, atime_ns, mtime_ns, " \
  "ctime_ns, body_id, chain_id, versioning, symlink"

constexpr std::uint64_t kDirSize = 4096;

NodeInfo ReadNode(const Statement& st) {
  NodeInfo n;
  n.id = static_cast<NodeId>(st.ColumnInt64(0));
  n.ns = st.ColumnInt64(1);
  n.parent_id = st.ColumnIsNull(2) ? 0 : static_cast<NodeId>(st.ColumnInt64(2));
  n.name = st.ColumnText(3);
  n.key = st.ColumnText(4);
  n.kind = static_cast<NodeKind>(st.ColumnInt64(5));
  n.mode = static_cast<std::uint32_t>(st.ColumnInt64(6));
  n.uid = static_cast<std::uint32_t>(st.ColumnInt64(7));
  n.gid = static_cast<std::uint32_t>(st.ColumnInt64(8));
  n.size = static_cast<std::uint64_t>(st.ColumnInt64(9));
  n.atime_ns = st.ColumnInt64(10);
  n.mtime_ns = st.ColumnInt64(11);
  n.ctime_ns = st.ColumnInt64(12);
  n.body_id = st.ColumnIsNull(13) ? 0 : st.ColumnInt64(13);
  n.chain_id = static_cast<ChainId>(st.ColumnInt64(14));
  n.versioning = static_cast<Versioning>(st.ColumnInt64(15));
  if (!st.ColumnIsNull(16)) n.symlink_target = st.ColumnText(16);
  return n;
}

Result<NodeInfo> OneNode(Statement& st, std::string_view what) {
  switch (st.Step()) {
    case StepResult::kRow: return ReadNode(st);
    case StepResult::kDone:
      return Status::NotFound(fmt::format("no such file or directory: {}", what));
    case StepResult::kError: break;
  }
  return st.status();
}

}  // namespace

std::int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

Status CheckBodySize(std::size_t size) {
  if (size <= Limits::kMaxBodyBytes) return Status::Ok();
  return Status::TooLarge(
      fmt::format("{} bytes exceeds the {}-byte file limit", size, Limits::kMaxBodyBytes));
}

Result<NodeInfo> StoreImpl::NodeByKey(NsId ns, std::string_view key) {
  static constexpr char kSql[] =
      "SELECT " GS_NODE_COLS " FROM nodes WHERE ns_id = ? AND key = ?";
  auto st = db.Prepare(kSql);
  if (!st) return st.error();
  st->BindInt64(1, ns);
  st->BindText(2, key);
  return OneNode(*st, key);
}

// Every nodes column named here is in nodes_by_key, so SQLite reads the index
// entry and the body row only (schema v5).
const char kKindAndBodyByKeySql[] =
    "SELECT n.kind, b.bytes, b.base_id, n.body_id, b.id, b.size FROM nodes n "
    "INDEXED BY nodes_by_key "
    "LEFT JOIN bodies b ON b.id = n.body_id WHERE n.ns_id = ? AND n.key = ?";

Result<NodeKind> StoreImpl::KindAndBodyByKey(NsId ns, std::string_view key, std::string* body) {
  auto st = db.Prepare(kKindAndBodyByKeySql);
  if (!st) return st.error();
  st->BindInt64(1, ns);
  st->BindText(2, key);
  switch (st->Step()) {
    case StepResult::kRow: break;
    case StepResult::kDone: return Status::NotFound(fmt::format("no such file or directory: {}", key));
    case StepResult::kError: return st->status();
  }
  const auto kind = static_cast<NodeKind>(st->ColumnInt64(0));
  if (kind != NodeKind::kFile) return kind;
  // The join keeps a node whose body row is gone (damage to the file): that
  // is no empty file.
  if (st->ColumnInt64(3) != 0 && st->ColumnIsNull(4)) {
    return Status::Corruption(fmt::format("the body of {} is missing", key));
  }
  if (st->ColumnIsNull(2)) {
    std::string_view data = st->ColumnBlobView(1);
    body->assign(data.data(), data.size());
    return kind;
  }
  auto assembled = AssembleBody(  // a delta
      {.bytes = st->ColumnBlobView(1), .base_id = st->ColumnInt64(2), .size = st->ColumnInt64(5)});
  if (!assembled) return assembled.error();
  *body = std::move(*assembled);
  return kind;
}

Result<NodeInfo> StoreImpl::NodeById(NodeId id) {
  static constexpr char kSql[] = "SELECT " GS_NODE_COLS " FROM nodes WHERE id = ?";
  auto st = db.Prepare(kSql);
  if (!st) return st.error();
  st->BindInt64(1, static_cast<std::int64_t>(id));
  return OneNode(*st, fmt::format("#{}", id));
}

Result<NodeInfo> StoreImpl::NodeByParent(NodeId parent, std::string_view name) {
  static constexpr char kSql[] =
      "SELECT " GS_NODE_COLS " FROM nodes WHERE parent_id = ? AND name = ?";
  auto st = db.Prepare(kSql);
  if (!st) return st.error();
  st->BindInt64(1, static_cast<std::int64_t>(parent));
  st->BindText(2, name);
  return OneNode(*st, name);
}

Result<std::vector<NodeInfo>> StoreImpl::Children(NodeId parent, std::string_view after,
                                                 std::size_t limit) {
  static constexpr char kSql[] =
      "SELECT " GS_NODE_COLS
      " FROM nodes WHERE parent_id = ? AND name > ? ORDER BY name LIMIT ?";
  auto st = db.Prepare(kSql);
  if (!st) return st.error();
  st->BindInt64(1, static_cast<std::int64_t>(parent));
  st->BindText(2, after);
  st->BindInt64(3, limit > static_cast<std::size_t>(INT64_MAX) ? INT64_MAX
                                                               : static_cast<std::int64_t>(limit));
  std::vector<NodeInfo> out;
  for (;;) {
    StepResult r = st->Step();
    if (r == StepResult::kDone) return out;
    if (r == StepResult::kError) return st->status();
    out.push_back(ReadNode(*st));
  }
}

Result<std::vector<NodeInfo>> StoreImpl::Descendants(NsId ns, std::string_view key) {
  // Keys below K are exactly those in [K + "/", K + "0"): '0' follows '/'.
  static constexpr char kSql[] = "SELECT " GS_NODE_COLS
                                 " FROM nodes WHERE ns_id = ? AND key >= ? AND key < ? "
                                 "ORDER BY key";
  auto st = db.Prepare(kSql);
  if (!st) return st.error();
  std::string lo = std::string(key) + "/";
  std::string hi = std::string(key) + "0";
  st->BindInt64(1, ns);
  st->BindText(2, lo);
  st->BindText(3, hi);
  std::vector<NodeInfo> out;
  for (;;) {
    StepResult r = st->Step();
    if (r == StepResult::kDone) return out;
    if (r == StepResult::kError) return st->status();
    out.push_back(ReadNode(*st));
  }
}

Result<NodeInfo> StoreImpl::InsertNode(NsId ns, const NodeInfo& parent, std::string_view name,
                                      const NewNode& spec, std::int64_t now) {
  static constexpr char kSql[] =
      "INSERT INTO nodes(id, ns_id, parent_id, name, key, kind, mode, uid, gid, size, atime_ns, "
      "mtime_ns, ctime_ns, body_id, chain_id, versioning, symlink) "
      "VALUES(" GS_NEXT_NODE_ID ", ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, 0, ?, ?)";
  if (parent.kind != NodeKind::kDirectory) {
    return Status::NotADirectory(fmt::format("{} is not a directory", parent.key));
  }
  GRAINSTORE_RETURN_IF_ERROR(ValidateName(name));
  NodeInfo n;
  n.ns = ns;
  n.parent_id = parent.id;
  n.name = std::string(name);
  n.key = JoinKey(parent.key, name);
  if (n.key.size() > kMaxKeyBytes) return Status::NameTooLong("path is too long");
  n.kind = spec.kind;
  n.mode = spec.mode & 07777;
  n.uid = spec.uid;
  n.gid = spec.gid;
  n.size = spec.kind == NodeKind::kDirectory ? kDirSize
           : spec.kind == NodeKind::kSymlink ? spec.symlink_target.size()
                                             : 0;
  n.atime_ns = n.mtime_ns = n.ctime_ns = now;
  n.versioning = spec.kind == NodeKind::kFile ? spec.versioning : Versioning::kUnversioned;
  if (spec.kind == NodeKind::kSymlink) n.symlink_target = spec.symlink_target;
  auto st = db.Prepare(kSql);
  if (!st) return st.error();
  st->BindInt64(1, ns);
  st->BindInt64(2, static_cast<std::int64_t>(parent.id));
  st->BindText(3, n.name);
  st->BindText(4, n.key);
  st->BindInt64(5, static_cast<std::int64_t>(n.kind));
  st->BindInt64(6, n.mode);
  st->BindInt64(7, n.uid);
  st->BindInt64(8, n.gid);
  st->BindInt64(9, static_cast<std::int64_t>(n.size));
  st->BindInt64(10, now);
  st->BindInt64(11, now);
  st->BindInt64(12, now);
  st->BindInt64(13, static_cast<std::int64_t>(n.versioning));
  if (spec.kind == NodeKind::kSymlink) {
    st->BindText(14, n.symlink_target);
  } else {
    st->BindNull(14);
  }
  Status s = st->Run();
  if (s.IsAlreadyExists()) return Status::AlreadyExists(fmt::format("{} exists", n.key));
  GRAINSTORE_RETURN_IF_ERROR(s);
  n.id = static_cast<NodeId>(db.LastInsertRowid());
  GRAINSTORE_RETURN_IF_ERROR(TouchDir(parent.id, now));
  return n;
}

Result<NodeInfo> StoreImpl::EnsureParents(NsId ns, std::string_view key, std::int64_t now) {
  // Usually the parent exists: one lookup by key instead of a walk. A parent
  // that is a file has only directories above it, so the walk would stop at
  // it too.
  auto parent = NodeByKey(ns, ParentKey(key));
  if (parent) {
    if (parent->kind != NodeKind::kDirectory) {
      return Status::NotADirectory(fmt::format("{} is not a directory", parent->key));
    }
    return parent;
  }
  if (!parent.error().IsNotFound()) return parent.error();
  auto root = Root(ns);
  if (!root) return root.error();
  auto cur = NodeById(*root);
  if (!cur) return cur.error();
  std::string_view rest = key.substr(kMemoriesRoot.size());
  // rest is "/a/b/c": every segment but the last is a directory to ensure.
  std::size_t pos = 1;
  for (;;) {
    std::size_t next = rest.find('/', pos);
    if (next == std::string_view::npos) return cur;
    std::string_view seg = rest.substr(pos, next - pos);
    auto child = NodeByParent(cur->id, seg);
    if (child) {
      if (child->kind != NodeKind::kDirectory) {
        return Status::NotADirectory(fmt::format("{} is not a directory", child->key));
      }
      cur = std::move(child);
    } else if (child.error().IsNotFound()) {
      NewNode dir{.kind = NodeKind::kDirectory, .mode = 0755, .uid = cur->uid,
                  .gid = cur->gid};
      auto made = InsertNode(ns, *cur, seg, dir, now);
      if (!made) return made.error();
      GRAINSTORE_RETURN_IF_ERROR(LogOp(ns, "mkdir", made->key, "", made->id, 0, "", now));
      cur = std::move(made);
    } else {
      return child.error();
    }
    pos = next + 1;
  }
}

Status StoreImpl::TouchDir(NodeId dir, std::int64_t now) {
  static constexpr char kSql[] = "UPDATE nodes SET mtime_ns = ?, ctime_ns = ? WHERE id = ?";
  auto st = db.Prepare(kSql);
  if (!st) return st.error();
  st->BindInt64(1, now);
  st->BindInt64(2, now);
  st->BindInt64(3, static_cast<std::int64_t>(dir));
  return st->Run();
}

Status StoreImpl::DeleteNodeRow(const NodeInfo& node) {
  static constexpr char kSql[] = "DELETE FROM nodes WHERE id = ?";
  // Keeps the id from being handed out again (see GS_NEXT_NODE_ID).
  static constexpr char kRaiseFloor[] =
      "UPDATE counters SET value = ?1 WHERE name = 'node_floor' AND value < ?1";
  for (const char* sql : {kSql, kRaiseFloor}) {
    auto st = db.Prepare(sql);
    if (!st) return st.error();
    st->BindInt64(1, static_cast<std::int64_t>(node.id));
    GRAINSTORE_RETURN_IF_ERROR(st->Run());
  }
  return node.chain_id == 0 ? AdjustRefs(node.body_id, -1) : Status::Ok();
}

Status StoreImpl::UpdateNodePlace(NodeId id, NodeId parent, std::string_view name,
                                  std::string_view key, std::int64_t now) {
  static constexpr char kSql[] =
      "UPDATE nodes SET parent_id = ?, name = ?, key = ?, ctime_ns = ? WHERE id = ?";
  auto st = db.Prepare(kSql);
  if (!st) return st.error();
  st->BindInt64(1, static_cast<std::int64_t>(parent));
  st->BindText(2, name);
  st->BindText(3, key);
  st->BindInt64(4, now);
  st->BindInt64(5, static_cast<std::int64_t>(id));
  return st->Run();
}

Status StoreImpl::UpdateNodeContent(const NodeInfo& before, std::int64_t body_id,
                                    std::uint64_t size, ChainId chain, Versioning versioning,
                                    std::int64_t mtime, std::int64_t now) {
  static constexpr char kSql[] =
      "UPDATE nodes SET body_id = ?, size = ?, chain_id = ?, versioning = ?, mtime_ns = ?, "
      "ctime_ns = ? WHERE id = ?";
  auto st = db.Prepare(kSql);
  if (!st) return st.error();
  if (body_id == 0) {
    st->BindNull(1);
  } else {
    st->BindInt64(1, body_id);
  }
  st->BindInt64(2, static_cast<std::int64_t>(size));
  st->BindInt64(3, static_cast<std::int64_t>(chain));
  st->BindInt64(4, static_cast<std::int64_t>(versioning));
  st->BindInt64(5, mtime);
  st->BindInt64(6, now);
  st->BindInt64(7, static_cast<std::int64_t>(before.id));
  GRAINSTORE_RETURN_IF_ERROR(st->Run());
  const bool held = before.chain_id == 0;
  const bool holds = chain == 0;
  if (held && holds && before.body_id == body_id) return Status::Ok();
  if (holds) GRAINSTORE_RETURN_IF_ERROR(AdjustRefs(body_id, 1));
  return held ? AdjustRefs(before.body_id, -1) : Status::Ok();
}

}  // namespace grainstore
