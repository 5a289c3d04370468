// Store::ListTree: a subtree listed from the key index alone. Keys below K
// are exactly those in [K + "/", K + "0") ('0' follows '/'), and since schema
// v7 nodes_by_key holds each node's kind and size beside its key, so a
// listing reads index entries in key order and never a node's row. Subtrees
// past the depth or refused by the filter are stepped over with a new seek,
// so a listing reads about what it shows, not all that lies below.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "grainstore/store.h"
#include "store_impl.h"

namespace grainstore {

const char kTreeSql[] =
    "SELECT key, kind, size, id FROM nodes INDEXED BY nodes_by_key "
    "WHERE ns_id = ? AND key >= ? AND key < ? ORDER BY key";

namespace {

// A directory before what is in it, siblings by name: byte order with '/'
// below every byte a name can hold. (Key order puts "a.txt" before "a/x",
// '.' being below '/'.)
bool PreOrderLess(const TreeEntry& a, const TreeEntry& b) {
  const std::string& x = a.path;
  const std::string& y = b.path;
  const std::size_t n = std::min(x.size(), y.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (x[i] == y[i]) continue;
    if (x[i] == '/') return true;
    if (y[i] == '/') return false;
    return static_cast<unsigned char>(x[i]) < static_cast<unsigned char>(y[i]);
  }
  return x.size() < y.size();
}

// The first `depth` segments of `path` ("a/b/c", 2: "a/b").
std::string_view Leading(std::string_view path, int depth) {
  std::size_t at = 0;
  for (int i = 0; i < depth; ++i) {
    at = path.find('/', at);
    if (at == std::string_view::npos) return path;
    if (i + 1 < depth) ++at;
  }
  return path.substr(0, at);
}

}  // namespace

Result<std::vector<TreeEntry>> Store::ListTree(NsId ns, std::string_view dir_key, int max_depth,
                                               const TreeFilter& keep) {
  std::lock_guard lock(impl_->mu);
  StoreImpl& s = *impl_;
  return s.InRead([&]() -> Result<std::vector<TreeEntry>> {
    const std::string prefix = std::string(dir_key) + "/";
    const std::string end = std::string(dir_key) + "0";
    std::vector<TreeEntry> out;
    std::set<std::string, std::less<>> refused;  // directories left out, as paths below dir_key
    std::string from = prefix;
    bool more = true;
    while (more) {  // one seek, then one more per subtree stepped over
      auto st = s.db.Prepare(kTreeSql);
      if (!st) return st.error();
      st->BindInt64(1, ns);
      st->BindText(2, from);
      st->BindText(3, end);
      more = false;
      for (;;) {
        const StepResult r = st->Step();
        if (r == StepResult::kDone) break;
        if (r == StepResult::kError) return st->status();
        const std::string_view key = st->ColumnTextView(0);
        const std::string_view path = key.substr(prefix.size());
        const int depth = 1 + static_cast<int>(std::count(path.begin(), path.end(), '/'));
        // Below a refused directory, or too deep: seek past that subtree.
        std::string_view skip;
        for (int d = 1; d < depth && d <= max_depth; ++d) {
          const std::string_view above = Leading(path, d);
          if (d == max_depth || refused.contains(above)) {
            skip = above;
            break;
          }
        }
        if (!skip.empty()) {
          from = prefix;
          from.append(skip);
          from.push_back('0');  // the first key past the subtree [skip + "/", skip + "0")
          more = true;
          break;
        }
        const auto kind = static_cast<NodeKind>(st->ColumnInt64(1));
        const std::size_t slash = path.rfind('/');
        const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
        if (!keep(name, kind)) {
          if (kind == NodeKind::kDirectory) refused.emplace(path);
          continue;
        }
        out.push_back({.path = std::string(path),
                       .id = static_cast<NodeId>(st->ColumnInt64(3)),
                       .kind = kind,
                       .size = static_cast<std::uint64_t>(st->ColumnInt64(2))});
      }
    }
    // Key order already is this order unless a name holds a byte below '/'.
    if (!std::is_sorted(out.begin(), out.end(), PreOrderLess)) {
      std::sort(out.begin(), out.end(), PreOrderLess);
    }
    return out;
  });
}

}  // namespace grainstore
