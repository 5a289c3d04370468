#include "grainstore/display_text.h"

#include <algorithm>

#include "grainstore/path.h"

namespace grainstore {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD
constexpr char kHex[] = "0123456789abcdef";

// Appends `prefix` and the two hex digits of `c`; returns the characters added.
std::size_t AppendEscape(std::string* out, const char* prefix, unsigned char c) {
  const std::size_t before = out->size();
  out->append(prefix);
  out->push_back(kHex[c >> 4]);
  out->push_back(kHex[c & 0xF]);
  return out->size() - before;
}

}  // namespace

std::string DisplayText(std::string_view value, std::size_t max_chars, Malformed malformed) {
  std::string out;
  out.reserve(max_chars > 3 ? std::min(value.size(), max_chars * 4) : value.size());
  const bool cut = max_chars > 3;
  std::size_t chars = 0;      // characters (code points) in `out`
  std::size_t kept_size = 0;  // bytes of `out` within max_chars - 3 characters
  for (std::size_t i = 0; i < value.size();) {
    const unsigned char c = static_cast<unsigned char>(value[i]);
    const std::size_t n = Utf8SequenceLength(value.substr(i));
    if (n == 0) {
      if (malformed == Malformed::kEscape) {
        chars += AppendEscape(&out, "\\x", c);
      } else {
        out.append(kReplacement);
        chars += 1;
      }
      i += 1;
    } else {
      if (c == '\n') {
        out.append("\\n");
        chars += 2;
      } else if (c == '\t') {
        out.append("\\t");
        chars += 2;
      } else if (c < 0x20 || c == 0x7F) {
        chars += AppendEscape(&out, "\\x", c);
      } else if (c == 0xC2 && static_cast<unsigned char>(value[i + 1]) < 0xA0) {
        chars += AppendEscape(&out, "\\u00", static_cast<unsigned char>(value[i + 1]));
      } else {
        out.append(value.substr(i, n));
        chars += 1;
      }
      i += n;
    }
    if (!cut) continue;
    if (chars <= max_chars - 3) kept_size = out.size();
    if (chars > max_chars) {  // it will be cut: the rest cannot show
      out.resize(kept_size);
      out.append("...");
      return out;
    }
  }
  return out;
}

}  // namespace grainstore
