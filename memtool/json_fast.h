// Private to memtool: fast paths for the JSON memtool reads and writes. A
// decoder for the shape almost every memory-tool
// command has, a flat JSON object whose members are strings, small integers,
// true, false, null, or arrays of those. nlohmann::json's lexer reads a byte
// at a time (about 12 ns per byte, 15 µs for a 1.2 KB create); this one
// copies runs of plain bytes at once.
//
// It only ever answers "here is the document" or "not mine": anything it does
// not handle (a nested object, a fraction or exponent, an integer of more
// than 18 digits, a byte-order mark) and anything that is not valid JSON is
// left to nlohmann::json, so errors and rarer forms keep one decoder. Where
// it answers, the document is the one nlohmann::json builds for the same
// text, value types included (json_fast_test.cc checks this against
// nlohmann::json over mutated inputs).
#ifndef MEMTOOL_JSON_FAST_H_
#define MEMTOOL_JSON_FAST_H_

#include <string_view>

#include <nlohmann/json.hpp>

namespace memtool::internal {

// Fills `doc` and returns true if `text` is a flat object this decoder
// handles; returns false and leaves `doc` as it was otherwise. With `keep`,
// only the members whose names it accepts are kept.
using KeepMember = bool (*)(std::string_view name);
bool TryParseFlatObject(std::string_view text, nlohmann::json* doc, KeepMember keep = nullptr);

// Appends `value` as a JSON string (quotes included) exactly as
// nlohmann::json's dump() writes it (no ASCII escaping: "\b \f \n \r \t",
// "\u00xx" for the other controls, '"' and '\\' escaped, the rest as it is),
// copying runs of plain bytes at once; returns true. Returns false, appending
// nothing, when `value` is not valid UTF-8, which nlohmann::json's replacing
// mode then handles.
bool TryAppendJsonString(std::string_view value, std::string* out);

}  // namespace memtool::internal

#endif  // MEMTOOL_JSON_FAST_H_
