// Text formatting shared by the memtool commands.
#include "format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

namespace memtool::internal {

namespace {

void AppendDecimal(std::string* out, std::uint64_t value) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  while (n > 0) out->push_back(digits[--n]);
}

}  // namespace

void AppendSize(std::string* out, std::uint64_t bytes) {
  if (bytes < 1024) {  // the common case in listings: no floating point
    AppendDecimal(out, bytes);
    out->push_back('B');
    return;
  }
  out->append(FormatSize(bytes));
}

std::string FormatSize(std::uint64_t bytes) {
  if (bytes < 1024) {
    std::string out;
    AppendDecimal(&out, bytes);
    out.push_back('B');
    return out;
  }
  static constexpr char kUnits[] = {'B', 'K', 'M', 'G'};
  int bit_length = 0;
  for (std::uint64_t v = bytes; v != 0; v >>= 1) ++bit_length;
  int unit = (bit_length - 1) / 10;
  if (unit > 3) unit = 3;
  // Dividing by a power of two is exact, so this equals Python's n / 1024**i.
  const double value = static_cast<double>(bytes) / std::ldexp(1.0, 10 * unit);
  char buf[64];
  if (value == std::floor(value)) {
    std::snprintf(buf, sizeof(buf), "%.0f%c", value, kUnits[unit]);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f%c", value, kUnits[unit]);
  }
  return buf;
}

void AppendNumberedLine(std::string* out, std::uint64_t lineno, std::string_view text) {
  for (std::uint64_t limit = 100000; limit > 0 && lineno < limit; limit /= 10) out->push_back(' ');
  AppendDecimal(out, lineno);
  out->push_back('\t');
  out->append(text);
}

void AppendNumberedLines(std::string* out, std::string_view content, std::size_t first,
                         std::size_t count) {
  std::size_t pos = LineStart(content, first);
  if (pos > content.size()) return;
  // One allocation: the text from `pos` on, plus a 6-digit number, a tab and a
  // newline per line, bounds the output.
  const std::size_t lines = std::min(count, CountSplitLines(content.substr(pos)));
  out->reserve(out->size() + (content.size() - pos) + lines * 8);
  for (std::size_t i = 0; i < count; ++i) {
    const void* hit = std::memchr(content.data() + pos, '\n', content.size() - pos);
    const std::size_t end =
        hit ? static_cast<std::size_t>(static_cast<const char*>(hit) - content.data())
            : content.size();
    if (i != 0) out->push_back('\n');
    AppendNumberedLine(out, first + i + 1, content.substr(pos, end - pos));
    if (!hit) return;
    pos = end + 1;
  }
}

std::size_t CountSplitLines(std::string_view content) {
  std::size_t lines = 1;
  const char* p = content.data();
  const char* end = p + content.size();
  while (p < end) {
    const void* hit = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
    if (!hit) break;
    ++lines;
    p = static_cast<const char*>(hit) + 1;
  }
  return lines;
}

std::size_t LineStart(std::string_view content, std::size_t index) {
  std::size_t pos = 0;
  for (std::size_t i = 0; i < index; ++i) {
    const void* hit = std::memchr(content.data() + pos, '\n', content.size() - pos);
    if (!hit) return content.size() + 1;
    pos = static_cast<std::size_t>(static_cast<const char*>(hit) - content.data()) + 1;
  }
  return pos;
}

}  // namespace memtool::internal
