// Private to memtool: text formatting shared by the commands (contract
// sections 7 and 11.5): the listing size formatter and line numbering.
#ifndef MEMTOOL_FORMAT_H_
#define MEMTOOL_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace memtool::internal {

// Python's size formatter: "0B", "1023B", "1K", "1.2K", "1024.0K", "1M", "1024G".
std::string FormatSize(std::uint64_t bytes);
// Appends FormatSize(bytes) to `out`.
void AppendSize(std::string* out, std::uint64_t bytes);

// Appends printf("%6d\t%s", lineno, text).
void AppendNumberedLine(std::string* out, std::uint64_t lineno, std::string_view text);

// Appends lines [first, first + count) of `content` (0-based, split on '\n'),
// numbered from first + 1 and joined with '\n'. Stops early at the last line.
void AppendNumberedLines(std::string* out, std::string_view content, std::size_t first,
                         std::size_t count);

// Number of '\n'-split elements of `content` (an empty string has one).
std::size_t CountSplitLines(std::string_view content);

// Byte offset where 0-based line `index` of `content` starts; content.size()
// + 1 if there are not that many lines.
std::size_t LineStart(std::string_view content, std::size_t index);

}  // namespace memtool::internal

#endif  // MEMTOOL_FORMAT_H_
