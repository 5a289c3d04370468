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

using grainstore::NodeInfo;
using grainstore::NodeKind;
using grainstore::TreeEntry;

constexpr std::size_t kMaxViewLines = 999'999;

ToolResult NotExist(std::string_view raw) {
  std::string msg = "The path ";
  msg.append(raw);
  msg.append(" does not exist. Please provide a valid path.");
  return Failure(std::move(msg));
}

// Hidden names, node_modules and symlinks never appear in listings, nor does
// anything below them.
bool Listed(std::string_view name, NodeKind kind) {
  if (kind == NodeKind::kSymlink) return false;
  if (!name.empty() && name.front() == '.') return false;
  return name != "node_modules";
}

ToolResult ViewDirectory(const Target& t, const PathArg& p, const NodeInfo& dir) {
  // Two levels, read at one moment: each child, then what a child directory
  // holds, siblings by name.
  grainstore::Result<std::vector<TreeEntry>> entries = t.store->ListTree(t.ns, dir.key, 2, Listed);
  if (!entries.has_value()) return StorageFailure(p.raw, entries.error());
  std::string out;
  out.reserve(160 + entries->size() * (p.raw.size() + 32));
  out.append("Here're the files and directories up to 2 levels deep in ");
  out.append(p.raw);
  out.append(", excluding hidden items and node_modules:\n4K\t");
  out.append(p.raw);
  for (const TreeEntry& entry : *entries) {
    const bool is_dir = entry.kind == NodeKind::kDirectory;
    out.push_back('\n');
    if (is_dir) {
      out.append("4K");
    } else {
      AppendSize(&out, entry.size);
    }
    out.push_back('\t');
    out.append(p.raw);
    out.push_back('/');
    out.append(entry.path);
    if (is_dir) out.push_back('/');
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
  if (p.path.too_long) return NotExist(p.raw);  // nothing that long is ever stored
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
