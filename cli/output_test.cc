#include "output.h"

#include <string>

#include <gtest/gtest.h>

#include "grainstore/display_text.h"

namespace cli {
namespace {

TEST(OutputTest, ShortIdAndCellText) {
  EXPECT_EQ(ShortId(""), "-");
  EXPECT_EQ(ShortId("0123456789abcdef0123"), "0123456789ab");
  EXPECT_EQ(CellText("a\nb\tc\x01"), "a\\nb\\tc\\x01");
  EXPECT_EQ(CellText("abcdefghij", 8), "abcde...");
  // Cuts by characters, never inside a UTF-8 sequence or an escape.
  EXPECT_EQ(CellText("ab\xc3\xa9\xc3\xa9xyz", 6), "ab\xc3\xa9...");
  const std::string four = "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe6\x97\xa5";  // 12 bytes
  EXPECT_EQ(CellText(four, 4), four);
  EXPECT_EQ(CellText(four + "!", 4), "\xe6\x97\xa5...");
  EXPECT_EQ(CellText("ab\x01" "cdef", 6), "ab...");
  EXPECT_EQ(CellText("abcdef", 6), "abcdef");
  // C1 controls (U+009B is a terminal's CSI) are escaped; bytes that are not
  // UTF-8 (a stray continuation, 0xFF, an overlong '/', a surrogate) become
  // U+FFFD each.
  EXPECT_EQ(CellText("a\xc2\x9b" "1m\xc2\xa0"), "a\\u009b1m\xc2\xa0");
  EXPECT_EQ(CellText("x\x80y\xffz"), "x\xef\xbf\xbdy\xef\xbf\xbdz");
  EXPECT_EQ(CellText("\xc0\xaf"), "\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(CellText("\xed\xa0\x80!"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd!");
  EXPECT_EQ(CellText("\xf0\x9f\x98\x80\xe2\x80"), "\xf0\x9f\x98\x80\xef\xbf\xbd\xef\xbf\xbd");
  // Messages that quote a host path keep its bytes readable as escapes.
  EXPECT_EQ(grainstore::DisplayText("/tmp/caf\xe9/x.db\n", 0, grainstore::Malformed::kEscape),
            "/tmp/caf\\xe9/x.db\\n");
  // A value far past the limit is cut without reading all of it into the cell.
  EXPECT_EQ(CellText(std::string(1 << 20, '\x01'), 10), "\\x01...");
}

TEST(OutputTest, TableAlignsColumnsWithoutTrailingBlanks) {
  Table t({"N", "NAME", "NOTE"}, {true, false, false});
  t.AddRow({"1", "alpha", ""});
  t.AddRow({"10", "b", "x"});
  EXPECT_EQ(t.Render(),
            " N  NAME   NOTE\n"
            " 1  alpha\n"
            "10  b      x\n");
}

}  // namespace
}  // namespace cli
