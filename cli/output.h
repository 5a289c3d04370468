// Rendering helpers for `areev`: short grain ids, aligned text tables and JSON
// documents (timestamps come from grainstore/time_format.h). Pure formatting,
// no store access.
#ifndef CLI_OUTPUT_H_
#define CLI_OUTPUT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "grainstore/types.h"

namespace cli {

// Length of a grain id as shown in tables (a prefix `cat --version` accepts).
inline constexpr std::size_t kShortIdChars = 12;

// The first kShortIdChars characters of a grain id ("-" when empty).
std::string ShortId(std::string_view grain_id);

// Makes a value printable in one table cell or header line
// (grainstore::DisplayText): control characters become escapes (\n, \t,
// \xHH, \u00HH for C1), bytes that are not UTF-8 become U+FFFD, and cells
// longer than `max_chars` characters are cut with "...".
std::string CellText(std::string_view value, std::size_t max_chars = 0);

// A text table: a header row and data rows, columns separated by two spaces,
// numeric columns right-aligned, no trailing blanks. Rows are either kept
// (AddRow, then Render) or, for output too long to keep, measured in a first
// pass (Measure) and printed in a second (RenderHeader, RenderRow).
class Table {
 public:
  // `right_aligned` marks columns to right-align (by index).
  Table(std::vector<std::string> headers, std::vector<bool> right_aligned);
  void AddRow(std::vector<std::string> cells);
  bool empty() const { return rows_.empty(); }
  std::string Render() const;

  // Widens the columns to fit `cells`, without keeping them.
  void Measure(const std::vector<std::string>& cells);
  std::string RenderHeader() const { return RenderRow(headers_); }
  // One line; a cell wider than measured is printed whole, unpadded.
  std::string RenderRow(const std::vector<std::string>& cells) const;

 private:
  std::vector<std::string> headers_;
  std::vector<bool> right_;
  std::vector<std::size_t> widths_;
  std::vector<std::vector<std::string>> rows_;
};

// A JSON array printed item by item, byte for byte as JsonText prints the
// whole array, so a long listing is never held as one document.
class JsonArrayText {
 public:
  // The text from the end of the previous item through `item`.
  std::string Item(const nlohmann::json& item);
  // The closing text ("[]\n" when there was no item).
  std::string End() const;

 private:
  bool any_ = false;
};

// Pretty JSON text of `doc` plus a newline; invalid UTF-8 is replaced.
std::string JsonText(const nlohmann::json& doc);

// The JSON object of one version (history --json).
nlohmann::json VersionJson(const grainstore::VersionInfo& v);
// The JSON object of one chain (history --chains --json).
nlohmann::json ChainJson(const grainstore::ChainInfo& c);
// The JSON object of one op-log entry (log --json).
nlohmann::json OpJson(const grainstore::OpRecord& op);
// The JSON object of one fact or event (add/recall --json).
nlohmann::json FactJson(const grainstore::Fact& fact);

}  // namespace cli

#endif  // CLI_OUTPUT_H_
