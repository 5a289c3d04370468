// Table tests of the size formatter (contract section 7) and line numbering.
#include "format.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace memtool::internal {
namespace {

TEST(FormatSizeTest, PythonTable) {
  struct Case {
    std::uint64_t bytes;
    const char* text;
  };
  const std::vector<Case> cases = {
      {0, "0B"},
      {1, "1B"},
      {1023, "1023B"},
      {1024, "1K"},
      {1025, "1.0K"},
      {1126, "1.1K"},
      {1280, "1.2K"},
      {1536, "1.5K"},
      {1792, "1.8K"},
      {2304, "2.2K"},
      {2560, "2.5K"},
      {4096, "4K"},
      {20000, "19.5K"},
      {1048575, "1024.0K"},
      {1048576, "1M"},
      {1310720, "1.2M"},
      {1572864, "1.5M"},
      {1u << 30, "1G"},
      {1ull << 40, "1024G"},
      {(1ull << 40) + (1ull << 29), "1024.5G"},
      {~0ull, "17179869184G"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(FormatSize(c.bytes), c.text) << c.bytes;
    std::string appended = "x";
    AppendSize(&appended, c.bytes);
    EXPECT_EQ(appended, std::string("x") + c.text) << c.bytes;
  }
}

TEST(LineFormatTest, NumberedLines) {
  std::string out;
  AppendNumberedLine(&out, 7, "x");
  EXPECT_EQ(out, "     7\tx");
  out.clear();
  AppendNumberedLine(&out, 999999, "");
  EXPECT_EQ(out, "999999\t");
  out.clear();
  AppendNumberedLine(&out, 10, "z");
  EXPECT_EQ(out, "    10\tz");
  out.clear();
  AppendNumberedLine(&out, 100000, "");
  EXPECT_EQ(out, "100000\t");
  out.clear();
  AppendNumberedLine(&out, 1234567, "y");
  EXPECT_EQ(out, "1234567\ty");

  out.clear();
  AppendNumberedLines(&out, "a\nb\nc\n", 1, 10);
  EXPECT_EQ(out, "     2\tb\n     3\tc\n     4\t");
  out.clear();
  AppendNumberedLines(&out, "a\nb", 5, 2);
  EXPECT_EQ(out, "");

  EXPECT_EQ(CountSplitLines(""), 1u);
  EXPECT_EQ(CountSplitLines("a\n"), 2u);
  EXPECT_EQ(CountSplitLines("\n\n"), 3u);
  EXPECT_EQ(LineStart("a\nbc\nd", 2), 5u);
  EXPECT_EQ(LineStart("a\nbc\nd", 3), 7u);
}

}  // namespace
}  // namespace memtool::internal
