// Myers line diff in linear space and unified-format output.
#include "line_diff.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/core.h>

namespace cli {
namespace {

// A rectangle of the edit graph: a[left, right) against b[top, bottom).
struct Box {
  std::int64_t left, top, right, bottom;
  std::int64_t width() const { return right - left; }
  std::int64_t height() const { return bottom - top; }
};

// A path piece from (x0, y0) to (x1, y1): at most one edit step plus a
// diagonal run. Forward snakes take the edit first, backward ones last.
struct Snake {
  std::int64_t x0, y0, x1, y1;
  bool edit_last = false;
};

// Edit distance beyond which a sub-diff gives up minimality for speed.
constexpr std::int64_t kMaxCost = 1024;

// Compares lines by small integer ids (equal text -> equal id).
class Differ {
 public:
  Differ(const std::vector<int>& a, const std::vector<int>& b)
      : a_(a),
        b_(b),
        a_changed_(a.size(), false),
        b_changed_(b.size(), false) {}

  void Run() {
    Compare(Box{0, 0, static_cast<std::int64_t>(a_.size()),
                static_cast<std::int64_t>(b_.size())});
  }
  const std::vector<bool>& a_changed() const { return a_changed_; }
  const std::vector<bool>& b_changed() const { return b_changed_; }

 private:
  void Compare(Box box) {
    // Strip the common prefix and suffix: cheap, and most edits are local.
    while (box.left < box.right && box.top < box.bottom &&
           a_[box.left] == b_[box.top]) {
      ++box.left;
      ++box.top;
    }
    while (box.left < box.right && box.top < box.bottom &&
           a_[box.right - 1] == b_[box.bottom - 1]) {
      --box.right;
      --box.bottom;
    }
    if (box.left == box.right) {
      for (auto y = box.top; y < box.bottom; ++y) b_changed_[y] = true;
      return;
    }
    if (box.top == box.bottom) {
      for (auto x = box.left; x < box.right; ++x) a_changed_[x] = true;
      return;
    }
    const Snake s = MiddleSnake(box);
    Compare(Box{box.left, box.top, s.x0, s.y0});
    if (s.x1 - s.x0 > s.y1 - s.y0)
      a_changed_[s.edit_last ? s.x1 - 1 : s.x0] = true;
    if (s.y1 - s.y0 > s.x1 - s.x0)
      b_changed_[s.edit_last ? s.y1 - 1 : s.y0] = true;
    Compare(Box{s.x1, s.y1, box.right, box.bottom});
  }

  // Finds the middle snake of an optimal path through `box` (both sides
  // non-empty and differing at both ends), searching from both corners.
  Snake MiddleSnake(const Box& box) {
    const std::int64_t size = box.width() + box.height();
    const std::int64_t max = (size + 1) / 2;
    const std::int64_t delta = box.width() - box.height();
    const std::int64_t off = max + 1;
    vf_.assign(2 * max + 3, 0);
    vb_.assign(2 * max + 3, 0);
    vf_[off + 1] = box.left;
    vb_[off + 1] = box.bottom;
    for (std::int64_t d = 0; d <= max; ++d) {
      if (d > kMaxCost) {
        // Too expensive to stay minimal: split at the middle of the box. Both
        // halves are strictly smaller because the box is large here.
        const std::int64_t mx = box.left + box.width() / 2;
        const std::int64_t my = box.top + box.height() / 2;
        return Snake{mx, my, mx, my, false};
      }
      Snake s;
      if (Forward(box, d, delta, off, &s)) return s;
      if (Backward(box, d, delta, off, &s)) return s;
    }
    return Snake{box.left, box.top, box.right, box.bottom};  // unreachable
  }

  bool Forward(const Box& box, std::int64_t d, std::int64_t delta,
               std::int64_t off, Snake* out) {
    for (std::int64_t k = d; k >= -d; k -= 2) {
      const std::int64_t c = k - delta;
      std::int64_t px, x;
      if (k == -d || (k != d && vf_[off + k - 1] < vf_[off + k + 1])) {
        px = x = vf_[off + k + 1];
      } else {
        px = vf_[off + k - 1];
        x = px + 1;
      }
      std::int64_t y = box.top + (x - box.left) - k;
      const std::int64_t py = (d == 0 || x != px) ? y : y - 1;
      while (x < box.right && y < box.bottom && a_[x] == b_[y]) {
        ++x;
        ++y;
      }
      vf_[off + k] = x;
      if ((delta & 1) != 0 && c >= -(d - 1) && c <= d - 1 &&
          y >= vb_[off + c]) {
        *out = Snake{px, py, x, y, false};
        return true;
      }
    }
    return false;
  }

  bool Backward(const Box& box, std::int64_t d, std::int64_t delta,
                std::int64_t off, Snake* out) {
    for (std::int64_t c = d; c >= -d; c -= 2) {
      const std::int64_t k = c + delta;
      std::int64_t py, y;
      if (c == -d || (c != d && vb_[off + c - 1] > vb_[off + c + 1])) {
        py = y = vb_[off + c + 1];
      } else {
        py = vb_[off + c - 1];
        y = py - 1;
      }
      std::int64_t x = box.left + (y - box.top) + k;
      const std::int64_t px = (d == 0 || y != py) ? x : x + 1;
      while (x > box.left && y > box.top && a_[x - 1] == b_[y - 1]) {
        --x;
        --y;
      }
      vb_[off + c] = y;
      if ((delta & 1) == 0 && k >= -d && k <= d && x <= vf_[off + k]) {
        *out = Snake{x, y, px, py, true};
        return true;
      }
    }
    return false;
  }

  const std::vector<int>& a_;
  const std::vector<int>& b_;
  std::vector<bool> a_changed_;
  std::vector<bool> b_changed_;
  std::vector<std::int64_t> vf_;
  std::vector<std::int64_t> vb_;
};

}  // namespace

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    std::size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    lines.push_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

std::vector<DiffOp> DiffLines(const std::vector<std::string_view>& a,
                              const std::vector<std::string_view>& b) {
  // Lines are interned to ids; ids[line] = {id, count in a, count in b}.
  struct Entry {
    int id;
    std::size_t in_a = 0, in_b = 0;
  };
  std::unordered_map<std::string_view, Entry> ids;
  std::vector<int> ai, bi;
  for (auto line : a) {
    auto it = ids.emplace(line, Entry{static_cast<int>(ids.size())}).first;
    ++it->second.in_a;
    ai.push_back(it->second.id);
  }
  for (auto line : b) {
    auto it = ids.emplace(line, Entry{static_cast<int>(ids.size())}).first;
    ++it->second.in_b;
    bi.push_back(it->second.id);
  }
  // A line absent from the other side can never match: mark it changed and
  // diff only the rest (as GNU diff does), which keeps the result minimal.
  std::vector<bool> a_changed(a.size(), true), b_changed(b.size(), true);
  std::vector<int> af, bf;
  std::vector<std::size_t> a_map, b_map;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (ids.at(a[i]).in_b == 0) continue;
    af.push_back(ai[i]);
    a_map.push_back(i);
  }
  for (std::size_t j = 0; j < b.size(); ++j) {
    if (ids.at(b[j]).in_a == 0) continue;
    bf.push_back(bi[j]);
    b_map.push_back(j);
  }
  Differ differ(af, bf);
  differ.Run();
  for (std::size_t i = 0; i < af.size(); ++i)
    a_changed[a_map[i]] = differ.a_changed()[i];
  for (std::size_t j = 0; j < bf.size(); ++j)
    b_changed[b_map[j]] = differ.b_changed()[j];
  std::vector<DiffOp> ops;
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (i < a.size() && a_changed[i]) {
      ops.push_back({DiffOp::kDelete, i++, j});
    } else if (j < b.size() && b_changed[j]) {
      ops.push_back({DiffOp::kInsert, i, j++});
    } else {
      ops.push_back({DiffOp::kEqual, i++, j++});
    }
  }
  return ops;
}

namespace {

// "@@ -l,s +l,s @@" range: a one-line range omits ",1"; an empty range names
// the line before it.
std::string Range(std::size_t first, std::size_t count) {
  if (count == 0) return fmt::format("{},0", first);
  if (count == 1) return fmt::format("{}", first + 1);
  return fmt::format("{},{}", first + 1, count);
}

void AppendLine(std::string* out, char tag, std::string_view line) {
  out->push_back(tag);
  out->append(line);
  if (line.empty() || line.back() != '\n')
    out->append("\n\\ No newline at end of file\n");
}

// The lines both texts begin with and end with, as byte offsets: the
// middle, a[begin, a_end) against b[begin, b_end), starts and ends at line
// starts, and is all that needs diffing (GNU diff's find_identical_ends).
struct Middle {
  std::size_t begin = 0;  // in both texts
  std::size_t a_end = 0;
  std::size_t b_end = 0;
};

Middle FindMiddle(std::string_view a, std::string_view b) {
  Middle m;
  const std::size_t shorter = std::min(a.size(), b.size());
  std::size_t same = 0;
  while (same < shorter && a[same] == b[same]) ++same;
  // Back to the start of the line the texts part in.
  const std::size_t nl = a.substr(0, same).rfind('\n');
  m.begin = nl == std::string_view::npos ? 0 : nl + 1;
  // The same from the end, within what follows that line start on both
  // sides (never lines the prefix took: "x\nx\n" against "x\n").
  std::size_t tail = 0;
  while (tail < a.size() - m.begin && tail < b.size() - m.begin &&
         a[a.size() - 1 - tail] == b[b.size() - 1 - tail]) {
    ++tail;
  }
  // Forward to a line start in both: the bytes before a shorter tail are
  // the tail's own, the same on both sides.
  auto line_start = [&m](std::string_view t, std::size_t at) {
    return at == m.begin || t[at - 1] == '\n';
  };
  if (tail > 0 && !(line_start(a, a.size() - tail) && line_start(b, b.size() - tail))) {
    const std::size_t first_nl = a.find('\n', a.size() - tail);
    tail = first_nl == std::string_view::npos ? 0 : a.size() - first_nl - 1;
  }
  m.a_end = a.size() - tail;
  m.b_end = b.size() - tail;
  return m;
}

// The start of the line `lines` lines before the one starting at `at`
// (stopping at the text's start); `*moved` counts the lines passed.
std::size_t LinesBack(std::string_view t, std::size_t at, std::size_t lines, std::size_t* moved) {
  *moved = 0;
  while (*moved < lines && at > 0) {
    const std::size_t nl = t.substr(0, at - 1).rfind('\n');
    at = nl == std::string_view::npos ? 0 : nl + 1;
    ++*moved;
  }
  return at;
}

// The end of the `lines` lines starting at `at` (stopping at the text's
// end); `*moved` counts them.
std::size_t LinesOn(std::string_view t, std::size_t at, std::size_t lines, std::size_t* moved) {
  *moved = 0;
  while (*moved < lines && at < t.size()) {
    const std::size_t nl = t.find('\n', at);
    at = nl == std::string_view::npos ? t.size() : nl + 1;
    ++*moved;
  }
  return at;
}

}  // namespace

std::string UnifiedDiff(std::string_view a, std::string_view b,
                        std::string_view a_label, std::string_view b_label,
                        std::size_t context) {
  if (a == b) return "";
  // Only the middle is split and diffed, with `context` of the equal lines
  // around it for the hunks: a one-line change in a file of millions of lines
  // costs what its context does (it took 50 times the two texts in memory,
  // and more than linear time, before).
  const Middle m = FindMiddle(a, b);
  std::size_t before = 0;
  std::size_t after = 0;
  const std::size_t from = LinesBack(a, m.begin, context, &before);
  const std::size_t a_to = LinesOn(a, m.a_end, context, &after);
  const std::size_t b_to = b.size() - (a.size() - a_to);  // the same lines in b
  const auto al = SplitLines(a.substr(from, a_to - from));
  const auto bl = SplitLines(b.substr(from, b_to - from));
  const auto offset = static_cast<std::size_t>(std::count(a.begin(), a.begin() + from, '\n'));
  const std::vector<std::string_view> am(al.begin() + before, al.end() - after);
  const std::vector<std::string_view> bm(bl.begin() + before, bl.end() - after);
  std::vector<DiffOp> ops;
  for (std::size_t i = 0; i < before; ++i) ops.push_back({DiffOp::kEqual, i, i});
  for (DiffOp op : DiffLines(am, bm)) {
    op.a_index += before;
    op.b_index += before;
    ops.push_back(op);
  }
  for (std::size_t k = 0; k < after; ++k) {
    ops.push_back({DiffOp::kEqual, al.size() - after + k, bl.size() - after + k});
  }
  // More context than there are lines shows them all; the cap also keeps
  // 2 * context and end + context from overflowing (-U 18446744073709551615).
  context = std::min(context, ops.size());
  std::string out;
  std::size_t pos = 0;
  while (pos < ops.size()) {
    // Find the next change, then extend the hunk while changes stay within
    // 2*context equal lines of each other.
    while (pos < ops.size() && ops[pos].kind == DiffOp::kEqual) ++pos;
    if (pos == ops.size()) break;
    std::size_t begin = pos >= context ? pos - context : 0;
    std::size_t end = pos;
    while (end < ops.size()) {
      std::size_t run = end;
      while (run < ops.size() && ops[run].kind == DiffOp::kEqual) ++run;
      if (run == ops.size() || run - end > 2 * context) {
        end = std::min(ops.size(), end + context);
        break;
      }
      end = run;
      while (end < ops.size() && ops[end].kind != DiffOp::kEqual) ++end;
    }
    if (out.empty()) out = fmt::format("--- {}\n+++ {}\n", a_label, b_label);
    std::size_t a_count = 0, b_count = 0;
    for (std::size_t i = begin; i < end; ++i) {
      if (ops[i].kind != DiffOp::kInsert) ++a_count;
      if (ops[i].kind != DiffOp::kDelete) ++b_count;
    }
    out += fmt::format("@@ -{} +{} @@\n", Range(offset + ops[begin].a_index, a_count),
                       Range(offset + ops[begin].b_index, b_count));
    for (std::size_t i = begin; i < end; ++i) {
      const DiffOp& op = ops[i];
      if (op.kind == DiffOp::kEqual) AppendLine(&out, ' ', al[op.a_index]);
      if (op.kind == DiffOp::kDelete) AppendLine(&out, '-', al[op.a_index]);
      if (op.kind == DiffOp::kInsert) AppendLine(&out, '+', bl[op.b_index]);
    }
    pos = end;
  }
  return out;
}

}  // namespace cli
