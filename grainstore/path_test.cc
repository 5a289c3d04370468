// Table-driven tests of the memory path rules (contract C4-C8) and name rules.
#include "grainstore/path.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace grainstore {
namespace {

struct ValidCase {
  std::string raw;
  std::string key;
  std::vector<std::string> segments;
};

TEST(ParseMemoryPathTest, ValidPathsNormalise) {
  const std::vector<ValidCase> cases = {
      {"/memories", "/memories", {}},
      {"/memories/", "/memories", {}},
      {"/memories//", "/memories", {}},
      {"/memories/.", "/memories", {}},
      {"/memories/./", "/memories", {}},
      {"/memories/a.txt", "/memories/a.txt", {"a.txt"}},
      {"/memories//a.txt", "/memories/a.txt", {"a.txt"}},
      {"/memories/a/", "/memories/a", {"a"}},
      {"/memories/a/./b", "/memories/a/b", {"a", "b"}},
      {"/memories/./a//b/.", "/memories/a/b", {"a", "b"}},
      {"/memories/...", "/memories/...", {"..."}},
      {"/memories/..a", "/memories/..a", {"..a"}},
      {"/memories/a..", "/memories/a..", {"a.."}},
      {"/memories/.hidden", "/memories/.hidden", {".hidden"}},
      {"/memories/%2", "/memories/%2", {"%2"}},
      {"/memories/%25", "/memories/%25", {"%25"}},
      {"/memories/%2g", "/memories/%2g", {"%2g"}},
      {"/memories/caf\xc3\xa9/\xf0\x9f\x98\x80.txt",
       "/memories/caf\xc3\xa9/\xf0\x9f\x98\x80.txt",
       {"caf\xc3\xa9", "\xf0\x9f\x98\x80.txt"}},
      {"/memories/a b/c\td", "/memories/a b/c\td", {"a b", "c\td"}},
  };
  for (const ValidCase& c : cases) {
    Result<MemoryPath> path = ParseMemoryPath(c.raw);
    ASSERT_TRUE(path.has_value()) << c.raw << ": " << path.error().message();
    EXPECT_EQ(path->key, c.key) << c.raw;
    EXPECT_EQ(path->segments, c.segments) << c.raw;
    EXPECT_EQ(path->is_root(), c.segments.empty()) << c.raw;
  }
}

struct InvalidCase {
  std::string raw;
  std::string message;
};

std::string Escape(const std::string& raw) {
  return "Path " + raw + " would escape /memories directory";
}
std::string Prefix(const std::string& raw) { return "Path must start with /memories, got: " + raw; }

TEST(ParseMemoryPathTest, InvalidPathsGiveContractMessages) {
  const std::string nul_path("/memories/a\0b", 13);
  const std::vector<InvalidCase> cases = {
      // C4
      {"", Prefix("")},
      {"memories/a", Prefix("memories/a")},
      {"/memorie", Prefix("/memorie")},
      {"/Memories/a", Prefix("/Memories/a")},
      {"/etc/passwd", Prefix("/etc/passwd")},
      {" /memories", Prefix(" /memories")},
      {"\\memories", Prefix("\\memories")},
      // C5
      {"/memoriesX", Escape("/memoriesX")},
      {"/memories_evil/x", Escape("/memories_evil/x")},
      {"/memories.", Escape("/memories.")},
      {"/memories\\..\\x", Escape("/memories\\..\\x")},
      // C6
      {"/memories/a\\b", Escape("/memories/a\\b")},
      {"/memories/\\", Escape("/memories/\\")},
      {nul_path, Escape(nul_path)},
      {"/memories/%2e%2e/x", Escape("/memories/%2e%2e/x")},
      {"/memories/%2E", Escape("/memories/%2E")},
      {"/memories/a%2fb", Escape("/memories/a%2fb")},
      {"/memories/a%2Fb", Escape("/memories/a%2Fb")},
      {"/memories/a%5cb", Escape("/memories/a%5cb")},
      {"/memories/a%5Cb", Escape("/memories/a%5Cb")},
      // C7
      {"/memories/..", Escape("/memories/..")},
      {"/memories/../x", Escape("/memories/../x")},
      {"/memories/a/../b.txt", Escape("/memories/a/../b.txt")},
      {"/memories/a/..", Escape("/memories/a/..")},
      {"/memories/./../a", Escape("/memories/./../a")},
      {"/memories/a/b/../../../../etc/passwd", Escape("/memories/a/b/../../../../etc/passwd")},
  };
  for (const InvalidCase& c : cases) {
    Result<MemoryPath> path = ParseMemoryPath(c.raw);
    ASSERT_FALSE(path.has_value()) << c.raw;
    EXPECT_EQ(path.error().code(), StatusCode::kInvalidArgument) << c.raw;
    EXPECT_EQ(path.error().message(), c.message) << c.raw;
  }
}

// TooLong::kMark returns an over-long path marked, built only up to the
// segment that passes a limit, and never as the root.
TEST(ParseMemoryPathTest, MarkedOverLongPaths) {
  const std::string long_name = "/memories/a/" + std::string(kMaxNameBytes + 1, 'n') + "/b";
  Result<MemoryPath> marked = ParseMemoryPath(long_name, TooLong::kMark);
  ASSERT_TRUE(marked.has_value());
  EXPECT_TRUE(marked->too_long);
  EXPECT_EQ(marked->key, "/memories/a");
  EXPECT_FALSE(marked->is_root());
  Result<MemoryPath> at_root =
      ParseMemoryPath("/memories/" + std::string(kMaxNameBytes + 1, 'n'), TooLong::kMark);
  ASSERT_TRUE(at_root.has_value());
  EXPECT_TRUE(at_root->too_long);
  EXPECT_EQ(at_root->key, "/memories");
  EXPECT_FALSE(at_root->is_root());

  std::string deep = "/memories";
  for (int i = 0; i < 5000; ++i) deep += "/d";
  Result<MemoryPath> too_deep = ParseMemoryPath(deep, TooLong::kMark);
  ASSERT_TRUE(too_deep.has_value());
  EXPECT_TRUE(too_deep->too_long);
  EXPECT_LE(too_deep->key.size(), kMaxKeyBytes);
  EXPECT_EQ(too_deep->segments.size(), (kMaxKeyBytes - kMemoriesRoot.size()) / 2);

  Result<MemoryPath> fits = ParseMemoryPath("/memories/a", TooLong::kMark);
  ASSERT_TRUE(fits.has_value());
  EXPECT_FALSE(fits->too_long);
  // ".." anywhere is still an escape.
  EXPECT_FALSE(ParseMemoryPath(deep + "/..", TooLong::kMark).has_value());
}

TEST(ParseMemoryPathTest, LengthLimits) {
  const std::string max_name(kMaxNameBytes, 'n');
  EXPECT_TRUE(ParseMemoryPath("/memories/" + max_name).has_value());
  const std::string long_name = "/memories/" + std::string(kMaxNameBytes + 1, 'n');
  Result<MemoryPath> too_long_name = ParseMemoryPath(long_name);
  ASSERT_FALSE(too_long_name.has_value());
  EXPECT_EQ(too_long_name.error().message(), "Path " + long_name + " is too long");

  // Key of exactly kMaxKeyBytes is fine; one more byte is not.
  std::string raw(kMemoriesRoot);
  while (raw.size() + 2 <= kMaxKeyBytes) raw += "/a";
  raw.resize(kMaxKeyBytes, 'a');
  ASSERT_EQ(raw.size(), kMaxKeyBytes);
  ASSERT_TRUE(ParseMemoryPath(raw).has_value());
  EXPECT_EQ(ParseMemoryPath(raw)->key.size(), kMaxKeyBytes);
  EXPECT_FALSE(ParseMemoryPath(raw + "a").has_value());

  // Redundant slashes do not count towards the key length.
  std::string slashes = "/memories" + std::string(10000, '/') + "a";
  ASSERT_TRUE(ParseMemoryPath(slashes).has_value());
  EXPECT_EQ(ParseMemoryPath(slashes)->key, "/memories/a");

  // A 5,000-deep path is rejected, not built.
  std::string deep = "/memories";
  for (int i = 0; i < 5000; ++i) deep += "/d";
  Result<MemoryPath> too_deep = ParseMemoryPath(deep);
  ASSERT_FALSE(too_deep.has_value());
  EXPECT_EQ(too_deep.error().message(), "Path " + deep + " is too long");

  // The limits are ours; the contract's ".." rule comes first wherever the
  // ".." stands.
  for (const std::string& escape : {long_name + "/../x", deep + "/..", deep + "/../" + long_name}) {
    Result<MemoryPath> r = ParseMemoryPath(escape);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().message(), "Path " + escape + " would escape /memories directory");
  }
}

struct NameCase {
  std::string name;
  StatusCode code;
};

TEST(ValidateNameTest, Table) {
  const std::vector<NameCase> cases = {
      {"a.txt", StatusCode::kOk},
      {".hidden", StatusCode::kOk},
      {"...", StatusCode::kOk},
      {"%25", StatusCode::kOk},
      {"caf\xc3\xa9", StatusCode::kOk},
      {std::string(kMaxNameBytes, 'x'), StatusCode::kOk},
      {"", StatusCode::kInvalidArgument},
      {".", StatusCode::kInvalidArgument},
      {"..", StatusCode::kInvalidArgument},
      {"a/b", StatusCode::kInvalidArgument},
      {"/", StatusCode::kInvalidArgument},
      {std::string("a\0b", 3), StatusCode::kInvalidArgument},
      {"a\\b", StatusCode::kInvalidArgument},
      {"%2e%2e", StatusCode::kInvalidArgument},
      {"x%2E", StatusCode::kInvalidArgument},
      {"x%2f", StatusCode::kInvalidArgument},
      {"x%2F", StatusCode::kInvalidArgument},
      {"x%5c", StatusCode::kInvalidArgument},
      {"x%5C", StatusCode::kInvalidArgument},
      {std::string(kMaxNameBytes + 1, 'x'), StatusCode::kNameTooLong},
      {"bad\xff", StatusCode::kInvalidArgument},          // not UTF-8
      {"caf\xc3", StatusCode::kInvalidArgument},          // truncated sequence
      {"\xc0\xaf", StatusCode::kInvalidArgument},         // overlong '/'
      {"\xed\xa0\x80", StatusCode::kInvalidArgument},     // a surrogate
      {"\xf4\x90\x80\x80", StatusCode::kInvalidArgument}, // past U+10FFFF
      {"\xf0\x9f\x98\x80", StatusCode::kOk},              // U+1F600
  };
  for (const NameCase& c : cases) {
    Status status = ValidateName(c.name);
    EXPECT_EQ(status.code(), c.code) << "name: " << c.name;
    if (!status.ok()) {
      EXPECT_FALSE(status.message().empty()) << c.name;
    }
  }
}

TEST(KeyHelpersTest, JoinParentBase) {
  EXPECT_EQ(JoinKey("/memories", "a"), "/memories/a");
  EXPECT_EQ(JoinKey("/memories/a", "b.txt"), "/memories/a/b.txt");
  EXPECT_EQ(ParentKey("/memories/a"), "/memories");
  EXPECT_EQ(ParentKey("/memories/a/b.txt"), "/memories/a");
  EXPECT_EQ(ParentKey("/memories"), "/memories");  // the root is its own parent
  EXPECT_EQ(BaseName("/memories/a/b.txt"), "b.txt");
  EXPECT_EQ(BaseName("/memories/a"), "a");
  EXPECT_EQ(BaseName("/memories"), "");
}

TEST(KeyHelpersTest, IsStrictlyInside) {
  struct Case {
    std::string key, ancestor;
    bool inside;
  };
  const std::vector<Case> cases = {
      {"/memories/a/b", "/memories/a", true}, {"/memories/a/b/c", "/memories/a", true},
      {"/memories/a", "/memories", true},     {"/memories/a", "/memories/a", false},
      {"/memories/ab", "/memories/a", false}, {"/memories/a", "/memories/a/b", false},
      {"/memories", "/memories", false},      {"/memories_x", "/memories", false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(IsStrictlyInside(c.key, c.ancestor), c.inside) << c.key << " in " << c.ancestor;
  }
}

TEST(Utf8Test, AppendUtf8EncodesEachLengthAndSequenceLengthReadsItBack) {
  const struct {
    std::uint32_t code_point;
    std::string bytes;
  } cases[] = {
      {0x00, std::string(1, '\0')}, {0x41, "A"},          {0x7F, "\x7F"},
      {0x80, "\xC2\x80"},           {0x7FF, "\xDF\xBF"},  {0x800, "\xE0\xA0\x80"},
      {0xE9, "\xC3\xA9"},           {0xFFFF, "\xEF\xBF\xBF"}, {0x10000, "\xF0\x90\x80\x80"},
      {0x1F600, "\xF0\x9F\x98\x80"}, {0x10FFFF, "\xF4\x8F\xBF\xBF"},
  };
  for (const auto& c : cases) {
    std::string out = "x";
    AppendUtf8(&out, c.code_point);
    EXPECT_EQ(out, "x" + c.bytes) << c.code_point;
    EXPECT_EQ(Utf8SequenceLength(c.bytes), c.bytes.size()) << c.code_point;
    EXPECT_TRUE(IsValidUtf8(c.bytes)) << c.code_point;
  }
}

TEST(Utf8Test, ASurrogateIsEncodedButIsNotUtf8) {
  std::string out;
  AppendUtf8(&out, 0xD800);
  EXPECT_EQ(out, "\xED\xA0\x80");
  EXPECT_EQ(Utf8SequenceLength(out), 0u);
  EXPECT_FALSE(IsValidUtf8(out));
}

TEST(Utf8Test, SequenceLengthRefusesTruncatedAndOverlongForms) {
  EXPECT_EQ(Utf8SequenceLength(""), 0u);
  EXPECT_EQ(Utf8SequenceLength("\xC3"), 0u);
  EXPECT_EQ(Utf8SequenceLength("\xC0\xAF"), 0u);
  EXPECT_EQ(Utf8SequenceLength("\xE0\x80\x80"), 0u);
  EXPECT_EQ(Utf8SequenceLength("\xF4\x90\x80\x80"), 0u);
  EXPECT_EQ(Utf8SequenceLength("\xC3\xA9rest"), 2u);
}

}  // namespace
}  // namespace grainstore
