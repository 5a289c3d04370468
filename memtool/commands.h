// Private to memtool: the six command handlers, called by dispatch.cc once the
// JSON parameters are type-checked and the paths validated, plus the result
// constructors and the store-status mapping they share.
#ifndef MEMTOOL_COMMANDS_H_
#define MEMTOOL_COMMANDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "grainstore/path.h"
#include "grainstore/status.h"
#include "grainstore/store.h"
#include "memtool/memtool.h"

namespace memtool::internal {

// Where a command runs.
struct Target {
  grainstore::Store* store;
  grainstore::NsId ns;
};

// A validated path argument with the raw text every message echoes (C8).
struct PathArg {
  std::string_view raw;
  grainstore::MemoryPath path;
};

// A view_range that applies (exactly two integers), clamped to int64.
struct ViewRange {
  std::int64_t first = 0;
  std::int64_t last = 0;
};

// An insert_line value: `value` clamped to int64, `text` as given.
struct InsertLine {
  std::int64_t value = 0;
  std::string text;
};

// How many match lines str_replace's ambiguity message lists for an empty
// old_str (one per code point, a cap the contract allows); the rest are
// counted (", and N more").
inline constexpr std::size_t kMaxListedMatches = 100000;
// How many bytes of match lines it lists for any other old_str: every one,
// as the contract says, up to as much as a view of a 64 MiB file answers
// (over five million matches); past that the rest are counted the same way.
inline constexpr std::size_t kMaxListedBytes = std::size_t{64} << 20;

ToolResult Success(std::string content);
ToolResult Failure(std::string message);

// "Storage operation failed for {P} ({Code})": a store failure no command
// rule covers (Busy, IOError, Corruption, NoSpace, ...).
ToolResult StorageFailure(std::string_view raw, const grainstore::Status& status);
// The message for a body above grainstore::Limits::kMaxBodyBytes.
std::string TooLargeMessage(std::string_view raw);

ToolResult View(const Target& t, const PathArg& p, const std::optional<ViewRange>& range);
ToolResult Create(const Target& t, const PathArg& p, std::string_view file_text);
ToolResult StrReplace(const Target& t, const PathArg& p, std::string_view old_str,
                      std::string_view new_str);
ToolResult Insert(const Target& t, const PathArg& p, const InsertLine& line,
                  std::string_view insert_text);
ToolResult Delete(const Target& t, const PathArg& p);
ToolResult Rename(const Target& t, const PathArg& from, const PathArg& to);

}  // namespace memtool::internal

#endif  // MEMTOOL_COMMANDS_H_
