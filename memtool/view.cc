// `view`: numbered file content (C11) or a two-level directory listing (C9,
// C10).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"
#include "format.h"

namespace memtool::internal {
namespace {

using grainstore::ChildEntry;
using grainstore::NodeInfo;
using grainstore::NodeKind;

constexpr std::size_t kMaxViewLines = 999'999;

ToolResult NotExist(std::string_view raw) {
  std::string msg = "The path ";
  msg.append(raw);
  msg.append(" does not exist. Please provide a valid path.");
  return Failure(std::move(msg));
}

// Hidden names, node_modules and symlinks never appear in listings.
bool Listed(const ChildEntry& node) {
  if (node.kind == NodeKind::kSymlink) return false;
  if (!node.name.empty() && node.name.front() == '.') return false;
  return node.name != "node_modules";
}

void AppendEntry(std::string* out, const ChildEntry& node, std::string_view raw,
                 std::string_view parent_rel) {
  const bool dir = node.kind == NodeKind::kDirectory;
  out->push_back('\n');
  if (dir) {
    out->append("4K");
  } else {
    AppendSize(out, node.size);
  }
  out->push_back('\t');
  out->append(raw);
  out->push_back('/');
  out->append(parent_rel);
  out->append(node.name);
  if (dir) out->push_back('/');
}

ToolResult ViewDirectory(const Target& t, const PathArg& p, const NodeInfo& dir) {
  grainstore::Result<std::vector<ChildEntry>> children = t.store->ListEntries(dir.id);
  if (!children.has_value()) return StorageFailure(p.raw, children.error());
  std::string out;
  out.reserve(160 + children->size() * (p.raw.size() + 32));
  out.append("Here're the files and directories up to 2 levels deep in ");
  out.append(p.raw);
  out.append(", excluding hidden items and node_modules:\n4K\t");
  out.append(p.raw);
  std::string rel;
  for (const ChildEntry& child : *children) {
    if (!Listed(child)) continue;
    AppendEntry(&out, child, p.raw, "");
    if (child.kind != NodeKind::kDirectory) continue;
    grainstore::Result<std::vector<ChildEntry>> grandchildren = t.store->ListEntries(child.id);
    if (!grandchildren.has_value()) return StorageFailure(p.raw, grandchildren.error());
    rel.assign(child.name);
    rel.push_back('/');
    for (const ChildEntry& grandchild : *grandchildren) {
      if (Listed(grandchild)) AppendEntry(&out, grandchild, p.raw, rel);
    }
  }
  return Success(std::move(out));
}

// Python slice bounds [first, end) over `n` lines for a view_range (C11).
void SliceBounds(const ViewRange& range, std::size_t n, std::size_t* first, std::size_t* end) {
  const auto count = static_cast<std::int64_t>(n);
  const std::int64_t start = std::max<std::int64_t>(1, range.first) - 1;
  std::int64_t stop = range.last == -1 ? count : range.last;
  if (stop < 0) stop = std::max<std::int64_t>(0, stop + count);
  stop = std::min(stop, count);
  const std::int64_t begin = std::min(start, count);
  *first = static_cast<std::size_t>(begin);
  *end = static_cast<std::size_t>(std::max(begin, stop));
}

ToolResult ViewFile(const PathArg& p, std::string_view body,
                    const std::optional<ViewRange>& range) {
  const std::size_t n = CountSplitLines(body);
  if (n > kMaxViewLines) {
    std::string msg = "File ";
    msg.append(p.raw);
    msg.append(" exceeds maximum line limit of 999,999 lines.");
    return Failure(std::move(msg));
  }
  std::size_t first = 0;
  std::size_t end = n;
  if (range) SliceBounds(*range, n, &first, &end);
  std::string out;
  out.reserve(48 + p.raw.size() + body.size() + (end - first) * 8);
  out.append("Here's the content of ");
  out.append(p.raw);
  out.append(" with line numbers:\n");
  if (end > first) AppendNumberedLines(&out, body, first, end - first);
  return Success(std::move(out));
}

// A lookup that failed: a missing path (or one under a file) is the
// contract's "does not exist"; anything else is a storage failure.
ToolResult MissingOrFailure(std::string_view raw, const grainstore::Status& status) {
  if (status.code() == grainstore::StatusCode::kNotFound ||
      status.code() == grainstore::StatusCode::kNotADirectory) {
    return NotExist(raw);
  }
  return StorageFailure(raw, status);
}

}  // namespace

ToolResult View(const Target& t, const PathArg& p, const std::optional<ViewRange>& range) {
  // Files are most views: read the body alone, and the node only when the
  // key names something else (the root always is a directory).
  if (!p.path.is_root()) {
    grainstore::Result<std::string> body = t.store->ReadFile(t.ns, p.path.key);
    if (body.has_value()) return ViewFile(p, *body, range);
    if (body.error().code() != grainstore::StatusCode::kIsADirectory) {
      return MissingOrFailure(p.raw, body.error());
    }
  }
  grainstore::Result<NodeInfo> node = t.store->StatKey(t.ns, p.path.key);
  if (!node.has_value()) return MissingOrFailure(p.raw, node.error());
  if (node->kind != NodeKind::kDirectory) return NotExist(p.raw);  // a symlink
  return ViewDirectory(t, p, *node);
}

}  // namespace memtool::internal
