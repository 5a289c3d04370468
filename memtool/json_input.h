// Private to memtool: decodes one command's JSON. An integer written wider
// than 64 bits (which nlohmann::json would keep as a double, no longer an
// integer to contract C21) stays an integer, clamped to the nearest 64-bit
// value, and for a top-level member its digits are kept as written: the
// insert_line range error echoes them (C16).
#ifndef MEMTOOL_JSON_INPUT_H_
#define MEMTOOL_JSON_INPUT_H_

#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace memtool::internal {

struct JsonInput {
  nlohmann::json doc;
  // Top-level member name -> the integer as written, for clamped integers.
  std::map<std::string, std::string, std::less<>> wide_integers;
};

// Whether `name` is a member some command reads (command, path, file_text,
// ...); ParseJsonInput drops the others as it decodes them.
bool IsCommandMember(std::string_view name);

// False if `text` is not one JSON value (trailing bytes, after a NUL too,
// included).
bool ParseJsonInput(std::string_view text, JsonInput* out);

}  // namespace memtool::internal

#endif  // MEMTOOL_JSON_INPUT_H_
