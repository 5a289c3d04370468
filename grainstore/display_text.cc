#include "grainstore/display_text.h"

#include <fmt/format.h>

namespace grainstore {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

// Length of the well-formed UTF-8 sequence at the start of `s` (RFC 3629: no
// overlong forms, no surrogates, nothing past U+10FFFF), or 0.
std::size_t SequenceLength(std::string_view s) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = byte(0);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // bounds of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (s.size() < n || byte(1) < lo || byte(1) > hi) return 0;
  for (std::size_t i = 2; i < n; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
  }
  return n;
}

std::size_t CodePoints(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

}  // namespace

std::string DisplayText(std::string_view value, std::size_t max_chars) {
  std::string out;
  out.reserve(value.size());
  const std::size_t keep = max_chars > 3 ? max_chars - 3 : 0;
  std::size_t chars = 0;      // code points in `out`
  std::size_t kept_size = 0;  // bytes of `out` that fit in `keep` characters
  for (std::size_t i = 0; i < value.size();) {
    std::string unit;
    const std::size_t n = SequenceLength(value.substr(i));
    const unsigned char c = static_cast<unsigned char>(value[i]);
    if (n == 0) {
      unit = kReplacement;
      i += 1;
    } else if (c == '\n') {
      unit = "\\n";
    } else if (c == '\t') {
      unit = "\\t";
    } else if (c < 0x20 || c == 0x7F) {
      unit = fmt::format("\\x{:02x}", c);
    } else if (c == 0xC2 && static_cast<unsigned char>(value[i + 1]) < 0xA0) {
      unit = fmt::format("\\u{:04x}", static_cast<unsigned char>(value[i + 1]));
    } else {
      unit = value.substr(i, n);
    }
    if (n != 0) i += n;
    chars += CodePoints(unit);
    out += unit;
    if (chars <= keep) kept_size = out.size();
  }
  if (max_chars > 3 && chars > max_chars) {
    out.resize(kept_size);
    out += "...";
  }
  return out;
}

}  // namespace grainstore
