#include "line_diff.h"

#include <stdlib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace cli {
namespace {

// A directory of its own for patch(1)'s files, removed at the end: runs side
// by side never share the files, and none are left behind.
class ScratchDir {
 public:
  ScratchDir() : path_(::testing::TempDir() + "areev_patch_XXXXXX") {
    made_ = mkdtemp(path_.data()) != nullptr;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (made_) std::filesystem::remove_all(path_, ec);
  }
  bool made() const { return made_; }
  std::string File(const char* name) const { return path_ + "/" + name; }

 private:
  std::string path_;
  bool made_ = false;
};

void WriteFile(const std::string& path, const std::string& text) {
  FILE* f = std::fopen(path.c_str(), "wb");
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
}

std::string ReadFile(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  std::string text;
  char buf[4096];
  std::size_t n;
  while (f != nullptr && (n = std::fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, n);
  if (f != nullptr) std::fclose(f);
  return text;
}

// Length of the longest common subsequence, by dynamic programming.
std::size_t LcsLength(const std::vector<std::string_view>& a,
                      const std::vector<std::string_view>& b) {
  std::vector<std::vector<std::size_t>> t(
      a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = a.size(); i-- > 0;) {
    for (std::size_t j = b.size(); j-- > 0;) {
      t[i][j] = a[i] == b[j] ? t[i + 1][j + 1] + 1
                             : std::max(t[i + 1][j], t[i][j + 1]);
    }
  }
  return t[0][0];
}

TEST(SplitLinesTest, KeepsNewlinesAndUnterminatedTail) {
  auto lines = SplitLines("a\nb\nc");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "a\n");
  EXPECT_EQ(lines[2], "c");
  EXPECT_TRUE(SplitLines("").empty());
  EXPECT_EQ(SplitLines("\n\n").size(), 2u);
}

TEST(DiffLinesTest, RandomInputsGiveMinimalValidScripts) {
  std::mt19937 rng(1234);
  const std::vector<std::string> alphabet = {"a\n", "b\n", "c\n", "d\n", "e"};
  for (int round = 0; round < 3000; ++round) {
    std::vector<std::string_view> a, b;
    const int na = static_cast<int>(rng() % 14),
              nb = static_cast<int>(rng() % 14);
    const std::size_t letters = 2 + rng() % 4;
    for (int i = 0; i < na; ++i) a.push_back(alphabet[rng() % letters]);
    for (int i = 0; i < nb; ++i) b.push_back(alphabet[rng() % letters]);
    const auto ops = DiffLines(a, b);
    std::vector<std::string_view> rebuilt_a, rebuilt_b;
    std::size_t equal = 0;
    for (const auto& op : ops) {
      if (op.kind != DiffOp::kInsert) rebuilt_a.push_back(a[op.a_index]);
      if (op.kind != DiffOp::kDelete) rebuilt_b.push_back(b[op.b_index]);
      if (op.kind == DiffOp::kEqual) {
        ASSERT_EQ(a[op.a_index], b[op.b_index]);
        ++equal;
      }
    }
    ASSERT_EQ(rebuilt_a, a) << "round " << round;
    ASSERT_EQ(rebuilt_b, b) << "round " << round;
    ASSERT_EQ(equal, LcsLength(a, b)) << "round " << round;
  }
}

TEST(UnifiedDiffTest, EqualTextsGiveNothing) {
  EXPECT_EQ(UnifiedDiff("a\nb\n", "a\nb\n", "x", "y"), "");
  EXPECT_EQ(UnifiedDiff("", "", "x", "y"), "");
}

TEST(UnifiedDiffTest, MatchesDiffUFormat) {
  EXPECT_EQ(UnifiedDiff("a\nb\nc\n", "a\nB\nc\n", "old", "new"),
            "--- old\n+++ new\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
  EXPECT_EQ(UnifiedDiff("", "x\n", "old", "new"),
            "--- old\n+++ new\n@@ -0,0 +1 @@\n+x\n");
  EXPECT_EQ(UnifiedDiff("x\n", "", "old", "new"),
            "--- old\n+++ new\n@@ -1 +0,0 @@\n-x\n");
  EXPECT_EQ(UnifiedDiff("a\nb", "a\nb\n", "o", "n"),
            "--- o\n+++ n\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of "
            "file\n+b\n");
}

TEST(UnifiedDiffTest, SeparatesDistantChangesIntoHunks) {
  std::string a, b;
  for (int i = 1; i <= 20; ++i) {
    a += std::to_string(i) + "\n";
    b += (i == 2 || i == 18 ? "X" : std::to_string(i)) + "\n";
  }
  EXPECT_EQ(UnifiedDiff(a, b, "o", "n"),
            "--- o\n+++ n\n"
            "@@ -1,5 +1,5 @@\n 1\n-2\n+X\n 3\n 4\n 5\n"
            "@@ -15,6 +15,6 @@\n 15\n 16\n 17\n-18\n+X\n 19\n 20\n");
}

// Any context at least as long as the texts shows them whole in one hunk;
// the largest size_t once made 2 * context wrap to a small number and
// end + context wrap below end, and the loop never ended.
TEST(UnifiedDiffTest, ContextLongerThanTheTextsShowsThemWhole) {
  std::string a, b;
  for (int i = 1; i <= 20; ++i) {
    a += std::to_string(i) + "\n";
    b += (i == 2 || i == 18 ? "X" : std::to_string(i)) + "\n";
  }
  const std::string whole = UnifiedDiff(a, b, "o", "n", 20);
  EXPECT_EQ(whole.substr(0, whole.find('\n', 20) + 1), "--- o\n+++ n\n@@ -1,20 +1,20 @@\n");
  for (std::size_t context : {std::size_t{21}, std::numeric_limits<std::size_t>::max() / 2 + 1,
                              std::numeric_limits<std::size_t>::max()}) {
    EXPECT_EQ(UnifiedDiff(a, b, "o", "n", context), whole) << context;
  }
}

// Cross-checks against GNU diff and patch when they are installed: the output
// must apply cleanly with patch(1) and give the new text back.
TEST(UnifiedDiffTest, AppliesWithPatch) {
  if (std::system("command -v patch >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "no patch(1)";
  std::mt19937 rng(99);
  ScratchDir dir;
  ASSERT_TRUE(dir.made());
  for (int round = 0; round < 40; ++round) {
    std::string a, b;
    for (int i = 0; i < 60; ++i) {
      a += "line " + std::to_string(rng() % 30) + "\n";
      b += "line " + std::to_string(rng() % 30) + "\n";
    }
    if (round % 3 == 0) b.pop_back();
    const std::string diff = UnifiedDiff(a, b, "f", "f");
    const std::string f = dir.File("patch_target"), p = dir.File("patch.diff");
    WriteFile(f, a);
    WriteFile(p, diff);
    ASSERT_EQ(std::system(("patch -s " + f + " < " + p).c_str()), 0) << diff;
    const std::string got = ReadFile(f);
    ASSERT_EQ(got, b) << diff;
  }
}

// Issue: a one-line change in a file of millions of lines split and interned
// both whole texts (50 times their size in memory). Only what lies between
// the lines both begin and end with is diffed now; the hunks must not change.
TEST(UnifiedDiffTest, SmallEditsOfLongTextsApplyAndStayMinimal) {
  if (std::system("command -v patch >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "no patch(1)";
  std::mt19937 rng(2026);
  ScratchDir dir;
  ASSERT_TRUE(dir.made());
  for (int round = 0; round < 200; ++round) {
    std::vector<std::string> lines;
    const int n = 1 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) lines.push_back("l" + std::to_string(rng() % 6) + "\n");
    std::vector<std::string> edited = lines;
    for (int e = 1 + static_cast<int>(rng() % 3); e > 0; --e) {
      const std::size_t at = rng() % (edited.size() + 1);
      switch (rng() % 3) {
        case 0: edited.insert(edited.begin() + at, "new" + std::to_string(rng() % 3) + "\n"); break;
        case 1: if (at < edited.size()) edited.erase(edited.begin() + at); break;
        default: if (at < edited.size()) edited[at] = "l" + std::to_string(rng() % 6) + "\n";
      }
    }
    std::string a, b;
    for (const auto& l : lines) a += l;
    for (const auto& l : edited) b += l;
    if (round % 5 == 1 && !a.empty()) a.pop_back();
    if (round % 7 == 2 && !b.empty()) b.pop_back();
    const std::size_t context = rng() % 5;
    const std::string diff = UnifiedDiff(a, b, "f", "f", context);
    if (a == b) {
      EXPECT_EQ(diff, "");
      continue;
    }
    // As many lines changed as a script of the whole texts changes.
    std::size_t changed = 0;
    for (const DiffOp& op : DiffLines(SplitLines(a), SplitLines(b)))
      changed += op.kind != DiffOp::kEqual;
    std::size_t shown = 0;
    for (std::string_view line : SplitLines(diff)) {
      shown += (line.starts_with("+") && !line.starts_with("+++ ")) ||
               (line.starts_with("-") && !line.starts_with("--- "));
    }
    EXPECT_EQ(shown, changed) << diff;
    const std::string f = dir.File("patch_target"), p = dir.File("patch.diff");
    WriteFile(f, a);
    WriteFile(p, diff);
    // No fuzz, and every hunk where its header says (patch reports an offset).
    const std::string log = dir.File("patch.log");
    ASSERT_EQ(std::system(("patch -F0 " + f + " < " + p + " > " + log + " 2>&1").c_str()), 0)
        << a << "\n--\n" << diff;
    const std::string said = ReadFile(log);
    EXPECT_EQ(said.find("offset"), std::string::npos) << said << diff;
    const std::string got = ReadFile(f);
    ASSERT_EQ(got, b) << diff;
  }
}

TEST(DiffLinesTest, LargeInputsStayFast) {
  // 40k lines each from 3000 distinct ones (a very different, shuffled pair):
  // the cost cap must keep this to about a second and the script valid.
  std::mt19937 rng(7);
  std::vector<std::string> a_store, b_store;
#ifdef NDEBUG
  constexpr int kLines = 40000;
  constexpr int kBudgetMs = 5000;
#else
  constexpr int kLines = 8000;  // unoptimised (and sanitised) builds
  constexpr int kBudgetMs = 60000;
#endif
  for (int i = 0; i < kLines; ++i) {
    a_store.push_back("k" + std::to_string(rng() % 3000) + "\n");
    b_store.push_back("k" + std::to_string(rng() % 3000) + "\n");
  }
  std::vector<std::string_view> a(a_store.begin(), a_store.end()),
      b(b_store.begin(), b_store.end());
  const auto start = std::chrono::steady_clock::now();
  const auto ops = DiffLines(a, b);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  std::size_t na = 0, nb = 0;
  for (const auto& op : ops) {
    if (op.kind != DiffOp::kInsert) {
      EXPECT_EQ(op.a_index, na++);
    }
    if (op.kind != DiffOp::kDelete) {
      EXPECT_EQ(op.b_index, nb++);
    }
    if (op.kind == DiffOp::kEqual) {
      ASSERT_EQ(a[op.a_index], b[op.b_index]);
    }
  }
  EXPECT_EQ(na, a.size());
  EXPECT_EQ(nb, b.size());
  EXPECT_LT(
      std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count(),
      kBudgetMs);
}

}  // namespace
}  // namespace cli
