#include "output.h"

#include <gtest/gtest.h>

namespace cli {
namespace {

TEST(OutputTest, ShortIdAndCellText) {
  EXPECT_EQ(ShortId(""), "-");
  EXPECT_EQ(ShortId("0123456789abcdef0123"), "0123456789ab");
  EXPECT_EQ(CellText("a\nb\tc\x01"), "a\\nb\\tc\\x01");
  EXPECT_EQ(CellText("abcdefghij", 8), "abcde...");
  // Never cuts inside a UTF-8 sequence.
  EXPECT_EQ(CellText("ab\xc3\xa9\xc3\xa9xyz", 6), "ab...");
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
