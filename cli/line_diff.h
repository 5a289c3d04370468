// A line diff (Myers' O(ND) algorithm in linear space, after GNU diff's
// compareseq) and its rendering in unified format, as `diff -u` prints it.
// Pure functions; used by `areev diff`.
#ifndef CLI_LINE_DIFF_H_
#define CLI_LINE_DIFF_H_

#include <string>
#include <string_view>
#include <vector>

namespace cli {

// One step of an edit script turning `a` into `b`.
struct DiffOp {
  enum Kind { kEqual, kDelete, kInsert } kind;
  std::size_t a_index;  // line index in a (kEqual, kDelete)
  std::size_t b_index;  // line index in b (kEqual, kInsert)
};

// Splits text into lines; each line keeps its '\n', so a last line without
// one compares unequal to the same text with it (as diff(1) does).
std::vector<std::string_view> SplitLines(std::string_view text);

// A shortest edit script from `a` to `b`: deletions before insertions within
// each change, equal lines in order.
std::vector<DiffOp> DiffLines(const std::vector<std::string_view>& a,
                              const std::vector<std::string_view>& b);

// The unified diff of two texts with `context` lines around each change, or ""
// when they are equal. Headers: "--- {a_label}" and "+++ {b_label}". A last
// line without '\n' is followed by "\ No newline at end of file".
std::string UnifiedDiff(std::string_view a, std::string_view b,
                        std::string_view a_label, std::string_view b_label,
                        std::size_t context = 3);

}  // namespace cli

#endif  // CLI_LINE_DIFF_H_
