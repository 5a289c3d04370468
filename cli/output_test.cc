#include "output.h"

#include <locale.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "grainstore/display_text.h"

namespace cli {
namespace {

TEST(OutputTest, ShortIdAndCellText) {
  EXPECT_EQ(ShortId(""), "-");
  EXPECT_EQ(ShortId("0123456789abcdef0123"), "0123456789ab");
  EXPECT_EQ(CellText("a\nb\tc\x01"), "a\\nb\\tc\\x01");
  EXPECT_EQ(CellText("abcdefghij", 8), "abcde...");
  // Cuts by terminal columns, never inside a UTF-8 sequence or an escape.
  EXPECT_EQ(CellText("ab\xc3\xa9\xc3\xa9xyz", 6), "ab\xc3\xa9...");
  const std::string four = "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe6\x97\xa5";  // 12 bytes, 8 columns
  EXPECT_EQ(CellText(four, 8), four);
  EXPECT_EQ(CellText(four + "!", 8), "\xe6\x97\xa5\xe6\x9c\xac...");
  EXPECT_EQ(CellText(four, 6), "\xe6\x97\xa5...");
  // A combining mark stays with the letter it marks and takes no column.
  EXPECT_EQ(CellText("abcde\xcc\x81" "fgh", 8), "abcde\xcc\x81" "fgh");
  EXPECT_EQ(CellText("abcde\xcc\x81" "fghi", 8), "abcde\xcc\x81...");
  // Characters of no width cannot make a cell unbounded: at most twice the
  // columns in characters.
  std::string marks = "a";
  for (int i = 0; i < 100000; ++i) marks += "\xcc\x81";  // U+0301
  EXPECT_EQ(CellText(marks, 40), marks.substr(0, 1 + 76 * 2) + "...");
  std::string spaces;
  for (int i = 0; i < 100000; ++i) spaces += "\xe2\x80\x8b";  // U+200B
  EXPECT_EQ(CellText(spaces, 40), spaces.substr(0, 77 * 3) + "...");
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

TEST(OutputTest, DisplayWidthCountsTerminalColumns) {
  EXPECT_EQ(grainstore::DisplayWidth(""), 0u);
  EXPECT_EQ(grainstore::DisplayWidth("abc"), 3u);
  EXPECT_EQ(grainstore::DisplayWidth("caf\xc3\xa9"), 4u);                  // café
  EXPECT_EQ(grainstore::DisplayWidth("cafe\xcc\x81"), 4u);                 // e + combining acute
  EXPECT_EQ(grainstore::DisplayWidth("\xe6\x97\xa5\xe6\x9c\xac"), 4u);      // 日本
  EXPECT_EQ(grainstore::DisplayWidth("\xea\xb0\x80"), 2u);                // 가 (Hangul)
  EXPECT_EQ(grainstore::DisplayWidth("\xef\xbc\xa1"), 2u);                // Ａ (fullwidth)
  EXPECT_EQ(grainstore::DisplayWidth("\xf0\x9f\x98\x80"), 2u);            // 😀
  EXPECT_EQ(grainstore::DisplayWidth("a\xe2\x80\x8b" "b"), 2u);           // zero width space
  EXPECT_EQ(grainstore::DisplayWidth("\xef\xbf\xbd"), 1u);                // U+FFFD
  EXPECT_EQ(grainstore::DisplayWidth("a\xff" "b"), 3u);                    // a stray byte: one
  // The widths come from C.UTF-8 without switching this thread's locale.
  EXPECT_EQ(uselocale(locale_t{}), LC_GLOBAL_LOCALE);
}

TEST(OutputTest, TableAlignsWideCharactersByColumns) {
  Table t({"N", "SUBJECT", "OP"}, {true, false, false});
  t.AddRow({"1", "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", "add"});  // 日本語: 6 columns
  t.AddRow({"2", "ab", "edit"});
  EXPECT_EQ(t.Render(),
            "N  SUBJECT  OP\n"
            "1  \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e   add\n"
            "2  ab       edit\n");
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

TEST(OutputTest, ATableMeasuredThenPrintedRowByRowMatchesTheKeptTable) {
  const std::vector<std::vector<std::string>> rows = {
      {"1", "alpha", ""}, {"10", "b", "x"}, {"100", "\xe6\x97\xa5\xe6\x9c\xac", "note"}};
  Table kept({"N", "NAME", "NOTE"}, {true, false, false});
  Table streamed({"N", "NAME", "NOTE"}, {true, false, false});
  for (const auto& row : rows) {
    kept.AddRow(row);
    streamed.Measure(row);
  }
  std::string printed = streamed.RenderHeader();
  for (const auto& row : rows) printed += streamed.RenderRow(row);
  EXPECT_EQ(printed, kept.Render());
  // A row wider than the first pass saw (it changed in between) is printed
  // whole, never cut, and its neighbours keep their widths.
  EXPECT_EQ(streamed.RenderRow({"1000", "abcdefgh", "y"}), "1000  abcdefgh  y\n");
  EXPECT_EQ(streamed.RenderRow({"2", "ab", ""}), "  2  ab\n");
}

TEST(OutputTest, AJsonArrayPrintedItemByItemMatchesJsonText) {
  const std::vector<nlohmann::json> items = {
      nlohmann::json{{"a", 1}, {"b", nlohmann::json::array({1, 2})}, {"s", "x\ny"}},
      nlohmann::json{{"empty", nlohmann::json::object()}, {"n", nullptr}},
      nlohmann::json("bad \xff byte"), nlohmann::json::array(), nlohmann::json(3.5)};
  for (std::size_t n = 0; n <= items.size(); ++n) {
    nlohmann::json whole = nlohmann::json::array();
    JsonArrayText array;
    std::string printed;
    for (std::size_t i = 0; i < n; ++i) {
      whole.push_back(items[i]);
      printed += array.Item(items[i]);
    }
    printed += array.End();
    EXPECT_EQ(printed, JsonText(whole)) << n << " items";
  }
}

}  // namespace
}  // namespace cli
