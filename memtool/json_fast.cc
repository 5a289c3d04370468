#include "json_fast.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "grainstore/path.h"

namespace memtool::internal {
namespace {

using nlohmann::json;

// Integers of up to 18 digits fit both int64 and uint64, as nlohmann::json
// stores them; longer ones are left to it.
constexpr std::size_t kMaxDigits = 18;

// Bytes a string copies as they are: printable ASCII other than '"' and '\\'.
// Control characters end the fast path (JSON forbids them raw); bytes from
// 0x80 are checked as UTF-8 sequences.
constexpr std::array<bool, 256> PlainBytes() {
  std::array<bool, 256> plain{};
  for (int c = 0x20; c < 0x80; ++c) plain[c] = c != '"' && c != '\\';
  return plain;
}
constexpr std::array<bool, 256> kPlain = PlainBytes();

// Whether none of the 8 bytes of `w` needs a look: each is printable ASCII
// other than '"' and '\\' (exact tests for "any byte is", from the classic
// has-zero-byte bit trick).
bool AllPlain(std::uint64_t w) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
  const auto has_zero = [](std::uint64_t v) { return (v - kOnes) & ~v & kHighs; };
  const std::uint64_t below_space = (w - kOnes * 0x20) & ~w & kHighs;
  const std::uint64_t quote = has_zero(w ^ (kOnes * '"'));
  const std::uint64_t backslash = has_zero(w ^ (kOnes * '\\'));
  return ((w & kHighs) | below_space | quote | backslash) == 0;
}

// The first byte from `p` on that is not printable ASCII other than '"' and
// '\\' (or `end`): eight bytes at a time, then one.
const char* SkipPlain(const char* p, const char* end) {
  while (end - p >= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, sizeof word);
    if (!AllPlain(word)) break;
    p += 8;
  }
  while (p < end && kPlain[static_cast<unsigned char>(*p)]) ++p;
  return p;
}

// A cursor over the text. Every method returns false as soon as the text
// leaves the handled shape; the caller then gives up on the whole text.
class Reader {
 public:
  Reader(std::string_view text, KeepMember keep)
      : p_(text.data()), end_(text.data() + text.size()), keep_(keep) {}

  bool Document(json* doc) {
    SkipSpace();
    if (!Consume('{')) return false;
    *doc = json::object();
    json::object_t& members = *doc->get_ptr<json::object_t*>();
    SkipSpace();
    if (Consume('}')) return AtEndAfterSpace();
    std::string key;
    while (true) {
      if (!String(&key)) return false;
      SkipSpace();
      if (!Consume(':')) return false;
      SkipSpace();
      json value;
      if (!Value(&value)) return false;
      // A repeated member replaces the earlier one, as in nlohmann::json.
      if (keep_ == nullptr || keep_(key)) members[key] = std::move(value);
      SkipSpace();
      if (Consume('}')) return AtEndAfterSpace();
      if (!Consume(',')) return false;
      SkipSpace();
    }
  }

 private:
  bool AtEnd() const { return p_ == end_; }
  bool AtEndAfterSpace() {
    SkipSpace();
    return AtEnd();
  }

  void SkipSpace() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  bool Consume(char c) {
    if (p_ == end_ || *p_ != c) return false;
    ++p_;
    return true;
  }

  // A scalar, or an array of scalars.
  bool Value(json* out) {
    if (!Consume('[')) return Scalar(out);
    *out = json::array();
    SkipSpace();
    if (Consume(']')) return true;
    while (true) {
      json item;
      if (!Scalar(&item)) return false;
      out->push_back(std::move(item));
      SkipSpace();
      if (Consume(']')) return true;
      if (!Consume(',')) return false;
      SkipSpace();
    }
  }

  bool Scalar(json* out) {
    if (AtEnd()) return false;
    switch (*p_) {
      case '"': {
        std::string s;
        if (!String(&s)) return false;
        *out = json(std::move(s));
        return true;
      }
      case 't':
        *out = true;
        return Word("true");
      case 'f':
        *out = false;
        return Word("false");
      case 'n':
        *out = nullptr;
        return Word("null");
      default:
        return Integer(out);
    }
  }

  bool Word(std::string_view word) {
    if (static_cast<std::size_t>(end_ - p_) < word.size()) return false;
    if (std::string_view(p_, word.size()) != word) return false;
    p_ += word.size();
    return true;
  }

  // An integer without fraction or exponent: unsigned as written without a
  // minus, signed with one, as nlohmann::json types them.
  bool Integer(json* out) {
    const bool negative = Consume('-');
    const char* digits = p_;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    const std::size_t n = static_cast<std::size_t>(p_ - digits);
    if (n == 0 || n > kMaxDigits || (n > 1 && digits[0] == '0')) return false;
    if (p_ < end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) return false;
    std::uint64_t value = 0;
    for (const char* d = digits; d < p_; ++d) value = value * 10 + static_cast<unsigned>(*d - '0');
    if (negative) {
      *out = static_cast<json::number_integer_t>(-static_cast<std::int64_t>(value));
    } else {
      *out = static_cast<json::number_unsigned_t>(value);
    }
    return true;
  }

  bool String(std::string* out) {
    if (!Consume('"')) return false;
    out->clear();
    // Decoded, a string is never longer than as written: sized once, a large
    // body is not copied again at each doubling of its buffer.
    if (const char* close = ClosingQuote(); close != nullptr) {
      out->reserve(static_cast<std::size_t>(close - p_));
    }
    const char* run = p_;  // start of the bytes not yet copied
    while ((p_ = SkipPlain(p_, end_)) < end_) {
      const unsigned char c = static_cast<unsigned char>(*p_);
      if (c >= 0x80) {
        const std::size_t n =
            grainstore::Utf8SequenceLength(std::string_view(p_, static_cast<std::size_t>(end_ - p_)));
        if (n == 0) return false;
        p_ += n;
        continue;
      }
      out->append(run, static_cast<std::size_t>(p_ - run));
      ++p_;
      if (c == '"') return true;
      if (c != '\\' || !Escape(out)) return false;
      run = p_;
    }
    return false;
  }

  // The first '"' from p_ on that no backslash escapes, or null.
  const char* ClosingQuote() const {
    for (const char* q = p_; q < end_; ++q) {
      q = static_cast<const char*>(std::memchr(q, '"', static_cast<std::size_t>(end_ - q)));
      if (q == nullptr) return nullptr;
      std::size_t backslashes = 0;
      for (const char* b = q; b > p_ && b[-1] == '\\'; --b) ++backslashes;
      if (backslashes % 2 == 0) return q;
    }
    return nullptr;
  }

  // The escape after a backslash.
  bool Escape(std::string* out) {
    if (AtEnd()) return false;
    const char e = *p_++;
    switch (e) {
      case '"': out->push_back('"'); return true;
      case '\\': out->push_back('\\'); return true;
      case '/': out->push_back('/'); return true;
      case 'b': out->push_back('\b'); return true;
      case 'f': out->push_back('\f'); return true;
      case 'n': out->push_back('\n'); return true;
      case 'r': out->push_back('\r'); return true;
      case 't': out->push_back('\t'); return true;
      case 'u': return UnicodeEscape(out);
      default: return false;
    }
  }

  // \uXXXX, a surrogate pair written as two of them.
  bool UnicodeEscape(std::string* out) {
    std::uint32_t cp = 0;
    if (!Hex4(&cp)) return false;
    if (cp >= 0xDC00 && cp <= 0xDFFF) return false;  // a low surrogate first
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return false;
      p_ += 2;
      std::uint32_t low = 0;
      if (!Hex4(&low) || low < 0xDC00 || low > 0xDFFF) return false;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    grainstore::AppendUtf8(out, cp);
    return true;
  }

  bool Hex4(std::uint32_t* cp) {
    if (end_ - p_ < 4) return false;
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = *p_++;
      std::uint32_t d;
      if (h >= '0' && h <= '9') d = static_cast<std::uint32_t>(h - '0');
      else if (h >= 'a' && h <= 'f') d = static_cast<std::uint32_t>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') d = static_cast<std::uint32_t>(h - 'A' + 10);
      else return false;
      v = v * 16 + d;
    }
    *cp = v;
    return true;
  }

  const char* p_;
  const char* end_;
  KeepMember keep_;
};

}  // namespace

bool TryAppendJsonString(std::string_view value, std::string* out) {
  if (!grainstore::IsValidUtf8(value)) return false;
  out->reserve(out->size() + value.size() + 2);
  out->push_back('"');
  const char* p = value.data();
  const char* const end = p + value.size();
  const char* run = p;  // start of the bytes not yet copied
  while ((p = SkipPlain(p, end)) < end) {
    const unsigned char c = static_cast<unsigned char>(*p);
    if (c >= 0x80) {  // valid UTF-8, checked above
      ++p;
      continue;
    }
    out->append(run, static_cast<std::size_t>(p - run));
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\b': out->append("\\b"); break;
      case '\f': out->append("\\f"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      default: {
        constexpr char kHex[] = "0123456789abcdef";
        out->append("\\u00");
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 0xF]);
      }
    }
    run = ++p;
  }
  out->append(run, static_cast<std::size_t>(p - run));
  out->push_back('"');
  return true;
}

bool TryParseFlatObject(std::string_view text, json* doc, KeepMember keep) {
  json parsed;
  Reader reader(text, keep);
  if (!reader.Document(&parsed)) return false;
  *doc = std::move(parsed);
  return true;
}

}  // namespace memtool::internal
