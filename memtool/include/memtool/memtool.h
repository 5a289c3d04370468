// memtool: answers Anthropic's memory_20250818 tool commands (view, create,
// str_replace, insert, delete, rename) byte-exactly on top of a grainstore
// namespace, following ../shared/spec/memory-tool-contract.md section 11 and
// its project decisions. See docs/memtool.md.
#ifndef MEMTOOL_MEMTOOL_H_
#define MEMTOOL_MEMTOOL_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "grainstore/store.h"

namespace memtool {

// Largest JSON command accepted (bytes). Larger input is rejected with
// "Input is too large (limit 268435456 bytes)" style error, nothing written.
inline constexpr std::size_t kMaxInputBytes = 256u << 20;

// The tool_result of one command. On error `content` is "Error: " + message
// and `is_error` is true; `message` then holds the bare message (what language
// bindings raise).
struct ToolResult {
  std::string content;
  bool is_error = false;
  std::string message;  // bare error message; empty on success
  // For a store failure that no contract rule covers (`Storage operation
  // failed for ...`): the store's own message, for the operator's log. Never
  // part of `content`, which the model sees.
  std::string detail;
};

// Handles memory-tool commands for one namespace of a store.
// Thread safety: as safe as the Store it wraps (fully thread-safe).
class MemoryTool {
 public:
  // `store` must outlive the MemoryTool.
  MemoryTool(grainstore::Store* store, grainstore::NsId ns);

  // Runs one command given as a JSON object text. Never throws; every failure
  // (malformed JSON, wrong types, invalid UTF-8, hostile paths, store errors)
  // becomes an error ToolResult and leaves the store unchanged.
  ToolResult Execute(std::string_view json_command);

 private:
  grainstore::Store* store_;
  grainstore::NsId ns_;
};

// The error result MemoryTool::Execute would give `json_command` before it
// looks at any store (malformed JSON, a missing or mistyped parameter, an
// invalid path), or nullopt when the command gets that far. Lets a caller
// answer bad input without opening, or creating, a store.
std::optional<ToolResult> RejectedWithoutStore(std::string_view json_command);

// Serialises a result as one JSON line: {"content": "...", "is_error": false}.
std::string ToJsonLine(const ToolResult& result);

}  // namespace memtool

#endif  // MEMTOOL_MEMTOOL_H_
