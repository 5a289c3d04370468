// Memory paths: the one place that decides which `/memories/...` strings are
// valid and how they normalise to store keys (contract section 11.3, C4-C8),
// and which single names may exist in the tree. Pure functions, no I/O; used by
// memtool, fusefs and the CLI alike.
#ifndef GRAINSTORE_PATH_H_
#define GRAINSTORE_PATH_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "grainstore/result.h"

namespace grainstore {

inline constexpr std::string_view kMemoriesRoot = "/memories";
// Reserved at the root of every namespace: the mount shows versions there.
inline constexpr std::string_view kHistoryDirName = ".history";
inline constexpr std::size_t kMaxNameBytes = 255;
inline constexpr std::size_t kMaxKeyBytes = 4096;

// A validated memory path.
struct MemoryPath {
  std::string key;                    // "/memories" or "/memories/a/b.txt"
  std::vector<std::string> segments;  // {"a", "b.txt"}; empty for the root
  // Set only by TooLong::kMark: the path passes kMaxKeyBytes or has a segment
  // over kMaxNameBytes. `key` and `segments` then stop before the segment
  // that passes the limit, so no such path can be stored or found.
  bool too_long = false;
  bool is_root() const { return segments.empty() && !too_long; }
};

// What ParseMemoryPath does with a path over the length limits, which the
// contract does not have: refuse it, or return it marked `too_long` (the
// memory tool's reads answer such a path as one that does not exist).
enum class TooLong { kRefuse, kMark };

// Parses a raw path exactly as contract C4-C8 say. On failure the Status is
// InvalidArgument and its message is the contract's message text, without the
// "Error: " prefix:
//   "Path must start with /memories, got: {raw}"
//   "Path {raw} would escape /memories directory"
// plus, beyond the contract, for over-long input (key > kMaxKeyBytes or a
// segment > kMaxNameBytes):
//   "Path {raw} is too long"
// unless `too_long` is TooLong::kMark.
Result<MemoryPath> ParseMemoryPath(std::string_view raw, TooLong too_long = TooLong::kRefuse);

// "Path {raw} is too long": the one text for a path over the length limits,
// used by ParseMemoryPath and by the memory tool's writes to a marked path.
std::string TooLongPathMessage(std::string_view raw);

// Strict UTF-8: no overlong forms, surrogates or code points past U+10FFFF.
bool IsValidUtf8(std::string_view s);

// Length in bytes of the strict UTF-8 sequence `s` starts with (1 to 4), or 0
// when it starts with none (or is empty).
std::size_t Utf8SequenceLength(std::string_view s);

// Appends the UTF-8 encoding of `code_point` (at most U+10FFFF). A surrogate
// gets the three bytes of its generalized (WTF-8) form, which are not UTF-8.
void AppendUtf8(std::string* out, std::uint32_t code_point);

// Checks one directory-entry name as created through any front end (the mount
// included): non-empty, valid UTF-8 (the memory tool's paths are JSON text, so
// another name could not be reached through it), not "." or "..", no '/', NUL
// or '\\', no %2e/%2f/%5c (any case), at most kMaxNameBytes. InvalidArgument
// (with a readable message) otherwise; a name that is too long yields
// NameTooLong.
Status ValidateName(std::string_view name);

// Joins a parent key and a child name: JoinKey("/memories", "a") == "/memories/a".
std::string JoinKey(std::string_view parent_key, std::string_view name);

// The parent key of a non-root key ("/memories/a/b" -> "/memories/a").
std::string ParentKey(std::string_view key);

// The last segment of a key ("/memories/a/b" -> "b"; "/memories" -> "").
std::string_view BaseName(std::string_view key);

// True when `key` lies strictly inside `ancestor` ("/memories/a/b" in "/memories/a").
bool IsStrictlyInside(std::string_view key, std::string_view ancestor);

}  // namespace grainstore

#endif  // GRAINSTORE_PATH_H_
