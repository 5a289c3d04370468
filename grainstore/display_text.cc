#include "grainstore/display_text.h"

#include <locale.h>
#include <wchar.h>

#include <algorithm>
#include <optional>

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

// The code point of the well-formed UTF-8 sequence of `n` bytes at the start
// of `s`.
char32_t DecodeSequence(std::string_view s, std::size_t n) {
  const auto b = [&](std::size_t i) { return static_cast<char32_t>(static_cast<unsigned char>(s[i])); };
  switch (n) {
    case 1: return b(0);
    case 2: return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
    case 3: return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    default:
      return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
  }
}

// wcwidth in the C.UTF-8 locale while it lives. uselocale switches only the
// calling thread, so the process's locale (a host's, in the bindings) is
// never touched.
class ColumnWidths {
 public:
  ColumnWidths() : utf8_(Utf8Locale()), previous_(utf8_ != locale_t{} ? uselocale(utf8_) : locale_t{}) {}
  ColumnWidths(const ColumnWidths&) = delete;
  ColumnWidths& operator=(const ColumnWidths&) = delete;
  ~ColumnWidths() {
    if (utf8_ != locale_t{}) uselocale(previous_);
  }

  // Columns of the printable code point `cp`; one for those wcwidth does not
  // know (a terminal shows them as one replacement glyph).
  std::size_t Of(char32_t cp) const {
    if (cp < 0x80 || utf8_ == locale_t{}) return 1;
    const int width = wcwidth(static_cast<wchar_t>(cp));
    return width < 0 ? 1 : static_cast<std::size_t>(width);
  }

 private:
  static locale_t Utf8Locale() {
    static const locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", locale_t{});
    return utf8;
  }

  const locale_t utf8_;
  const locale_t previous_;
};

// Whitespace and characters that draw nothing (IsBlankText).
bool ShowsNothing(char32_t cp) {
  switch (cp) {
    case U' ': case U'\t': case U'\n': case U'\v': case U'\f': case U'\r':
    case 0x85: case 0xA0: case 0xAD: case 0x34F: case 0x61C: case 0x115F: case 0x1160:
    case 0x1680: case 0x17B4: case 0x17B5: case 0x2800: case 0x3000: case 0x3164:
    case 0xFEFF: case 0xFFA0:
      return true;
    default:
      return (cp >= 0x180B && cp <= 0x180F) || (cp >= 0x2000 && cp <= 0x200F) ||
             (cp >= 0x2028 && cp <= 0x202F) || (cp >= 0x205F && cp <= 0x206F) ||
             (cp >= 0xFE00 && cp <= 0xFE0F) || (cp >= 0xE0000 && cp <= 0xE007F) ||
             (cp >= 0xE0100 && cp <= 0xE01EF);
  }
}

}  // namespace

bool IsBlankText(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = Utf8SequenceLength(text.substr(i));
    if (n == 0 || !ShowsNothing(DecodeSequence(text.substr(i), n))) return false;
    i += n;
  }
  return true;
}

std::size_t DisplayWidth(std::string_view text) {
  const ColumnWidths widths;
  std::size_t columns = 0;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = Utf8SequenceLength(text.substr(i));
    if (n == 0) {
      columns += 1;
      i += 1;
      continue;
    }
    columns += widths.Of(DecodeSequence(text.substr(i), n));
    i += n;
  }
  return columns;
}

std::string DisplayText(std::string_view value, std::size_t max_columns, Malformed malformed) {
  std::string out;
  out.reserve(max_columns > 3 ? std::min(value.size(), max_columns * 4) : value.size());
  const bool cut = max_columns > 3;
  std::optional<ColumnWidths> widths;  // only a cut needs them
  if (cut) widths.emplace();
  // Characters of no width (combining marks, U+200B) add no columns, so the
  // characters are bounded too, at twice the columns: a cell stays small.
  const std::size_t max_chars = 2 * max_columns;
  std::size_t columns = 0;    // terminal columns of `out`
  std::size_t chars = 0;      // characters of `out`, escapes counted by their length
  std::size_t kept_size = 0;  // bytes of `out` within max_columns - 3 columns (and the bound)
  for (std::size_t i = 0; i < value.size();) {
    const unsigned char c = static_cast<unsigned char>(value[i]);
    const std::size_t n = Utf8SequenceLength(value.substr(i));
    if (n == 0) {
      if (malformed == Malformed::kEscape) {
        const std::size_t n_escape = AppendEscape(&out, "\\x", c);
        columns += n_escape;
        chars += n_escape;
      } else {
        out.append(kReplacement);
        columns += 1;
        chars += 1;
      }
      i += 1;
    } else {
      const std::size_t before = out.size();
      if (c == '\n') {
        out.append("\\n");
      } else if (c == '\t') {
        out.append("\\t");
      } else if (c < 0x20 || c == 0x7F) {
        AppendEscape(&out, "\\x", c);
      } else if (c == 0xC2 && static_cast<unsigned char>(value[i + 1]) < 0xA0) {
        AppendEscape(&out, "\\u00", static_cast<unsigned char>(value[i + 1]));
      }
      if (out.size() != before) {  // an escape: ASCII, a column per byte
        columns += out.size() - before;
        chars += out.size() - before;
      } else {
        out.append(value.substr(i, n));
        chars += 1;
        if (cut) columns += widths->Of(DecodeSequence(value.substr(i), n));
      }
      i += n;
    }
    if (!cut) continue;
    if (columns <= max_columns - 3 && chars <= max_chars - 3) kept_size = out.size();
    if (columns > max_columns || chars > max_chars) {  // it will be cut: the rest cannot show
      out.resize(kept_size);
      out.append("...");
      return out;
    }
  }
  return out;
}

}  // namespace grainstore
