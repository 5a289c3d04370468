#include "json_input.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <system_error>
#include <vector>

#include "json_fast.h"

namespace memtool::internal {
namespace {

using nlohmann::json;

// True for JSON's integer syntax: an optional minus, then digits only.
bool IsIntegerLiteral(std::string_view s) {
  if (!s.empty() && s.front() == '-') s.remove_prefix(1);
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Builds what Dispatch reads of a command, and no more: the top-level
// members it knows (IsCommandMember), each array or object among them kept
// as an empty one of its kind, except `view_range`, whose first three items
// are kept (Dispatch asks whether it holds exactly two integers), an array
// or object among them as an empty one again. Whatever lies deeper is read
// and dropped, so a command's memory stays a small multiple of its text
// however it nests (a whole document of nested arrays took 75 times its
// size). Integer literals too wide for 64 bits stay integers, clamped (see
// json_input.h).
class Builder {
 public:
  // `written`: the integer literals too wide for 64 bits, in the order they
  // come, as the text had them before RewriteHugeNumbers (nullptr: the text
  // parsed is the text given).
  explicit Builder(JsonInput* out, const std::vector<std::string>* written = nullptr)
      : out_(out), written_(written) {}

  bool null() { return Put(json(nullptr)); }
  bool boolean(bool v) { return Put(json(v)); }
  bool number_integer(json::number_integer_t v) { return Put(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return Put(json(v)); }
  bool number_float(json::number_float_t v, const json::string_t& s) {
    if (!IsIntegerLiteral(s)) return Put(json(v));
    const std::string& digits =
        written_ != nullptr && next_written_ < written_->size() ? (*written_)[next_written_++] : s;
    if (InTopObject()) out_->wide_integers[key_] = digits;
    if (s.front() == '-') return Put(json(std::numeric_limits<std::int64_t>::min()));
    return Put(json(std::numeric_limits<std::uint64_t>::max()));
  }
  bool string(json::string_t& v) { return Put(json(std::move(v))); }
  bool binary(json::binary_t& v) { return Put(json::binary(std::move(v))); }
  bool start_object(std::size_t) { return Open(json::object()); }
  bool key(json::string_t& k) {
    if (depth_ == 1) {
      kept_ = IsCommandMember(k);
      key_ = std::move(k);
      out_->wide_integers.erase(key_);  // a repeated member: the last one counts
    }
    return true;
  }
  bool end_object() { return Close(); }
  bool start_array(std::size_t) { return Open(json::array()); }
  bool end_array() { return Close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    return false;
  }

 private:
  static constexpr std::size_t kRangeItemsKept = 3;

  // Inside the top-level object, outside any member's value, at a member
  // Dispatch reads.
  bool InTopObject() const { return depth_ == 1 && kept_ && out_->doc.is_object(); }

  bool Put(json value) {
    if (depth_ == 0) {
      out_->doc = std::move(value);
    } else if (InTopObject()) {
      out_->doc[key_] = std::move(value);
    } else if (depth_ == 2 && range_ != nullptr && range_->size() < kRangeItemsKept) {
      range_->push_back(std::move(value));
    }
    return true;
  }

  bool Open(json empty) {
    const bool range = InTopObject() && empty.is_array() && key_ == "view_range";
    Put(std::move(empty));
    if (range) range_ = &out_->doc[key_];
    ++depth_;
    return true;
  }

  bool Close() {
    if (--depth_ < 2) range_ = nullptr;
    return true;
  }

  JsonInput* out_;
  const std::vector<std::string>* written_;
  std::size_t next_written_ = 0;
  std::size_t depth_ = 0;  // arrays and objects open; 1 inside the top-level one
  std::string key_;        // the top-level member being read
  bool kept_ = false;      // whether Dispatch reads that member
  json* range_ = nullptr;  // view_range's array while its items are read
};

// True for an integer literal nlohmann::json reads as a double: above
// UINT64_MAX, or below INT64_MIN (JSON has no leading zeros).
bool IsWiderThan64Bits(std::string_view literal) {
  const bool negative = literal.front() == '-';
  const std::string_view digits = negative ? literal.substr(1) : literal;
  const std::string_view limit = negative ? "9223372036854775808" : "18446744073709551615";
  return digits.size() > limit.size() || (digits.size() == limit.size() && digits > limit);
}

// The power of ten of a JSON number's leading digit ("123.4e5": 7), a rough
// one far out (exponents are cut at a million).
long DecimalExponent(std::string_view number) {
  if (number.front() == '-') number.remove_prefix(1);
  const std::size_t e = number.find_first_of("eE");
  long exponent = 0;
  if (e != std::string_view::npos) {
    std::string_view digits = number.substr(e + 1);
    const bool negative = !digits.empty() && digits.front() == '-';
    if (!digits.empty() && (digits.front() == '-' || digits.front() == '+')) {
      digits.remove_prefix(1);
    }
    for (char d : digits) exponent = std::min(exponent * 10 + (d - '0'), 1000000L);
    if (negative) exponent = -exponent;
    number = number.substr(0, e);
  }
  const std::size_t dot = number.find('.');
  const std::string_view whole = number.substr(0, dot);
  if (whole != "0") return exponent + static_cast<long>(whole.size()) - 1;
  const std::string_view fraction =
      dot == std::string_view::npos ? std::string_view() : number.substr(dot + 1);
  const std::size_t first = fraction.find_first_not_of('0');
  if (first == std::string_view::npos) return 0;  // zero
  return exponent - static_cast<long>(first) - 1;
}

// True for JSON's number syntax: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
bool IsJsonNumber(std::string_view s) {
  std::size_t i = 0;
  const auto digits = [&]() {
    const std::size_t from = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - from;
  };
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && s[i] == '0') {
    ++i;
  } else if (digits() == 0) {
    return false;
  }
  if (i < s.size() && s[i] == '.' && (++i, digits() == 0)) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

// True for a number larger in magnitude than any double; one too small for
// a double reads as zero, as nlohmann::json takes it.
bool BeyondDoubleRange(std::string_view number) {
  double value = 0;
  const auto result = std::from_chars(number.data(), number.data() + number.size(), value);
  return result.ec == std::errc::result_out_of_range && DecimalExponent(number) > 0;
}

// `text` with each number beyond a double's range (about 1.8e308), which
// nlohmann::json refuses as a "number overflow" though JSON sets no limit,
// written as one within it of the same kind: an integer as one still wider
// than 64 bits (clamped as any such, its digits in `written`), any other
// number as 1e308 (a number that is no integer, as it was). `written` gets
// every integer literal wider than 64 bits, in order, as the text had it.
// False when no number needed rewriting.
bool RewriteHugeNumbers(std::string_view text, std::string* rewritten,
                        std::vector<std::string>* written) {
  bool changed = false;
  rewritten->reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '"') {  // a string, escapes and all
      std::size_t end = i + 1;
      while (end < text.size() && text[end] != '"') end += text[end] == '\\' ? 2 : 1;
      end = std::min(end + 1, text.size());
      rewritten->append(text.substr(i, end - i));
      i = end;
      continue;
    }
    if (c != '-' && (c < '0' || c > '9')) {
      rewritten->push_back(c);
      ++i;
      continue;
    }
    std::size_t end = i + 1;
    while (end < text.size() && std::string_view("0123456789+-.eE").find(text[end]) !=
                                    std::string_view::npos) {
      ++end;
    }
    const std::string_view number = text.substr(i, end - i);
    i = end;
    const bool integer = IsIntegerLiteral(number);
    if (integer && IsWiderThan64Bits(number)) written->emplace_back(number);
    if (!IsJsonNumber(number) || !BeyondDoubleRange(number)) {  // not JSON: left to fail
      rewritten->append(number);
      continue;
    }
    changed = true;
    if (number.front() == '-') rewritten->push_back('-');
    rewritten->append(integer ? "18446744073709551616" : "1e308");
  }
  return changed;
}

}  // namespace

bool IsCommandMember(std::string_view name) {
  static constexpr std::string_view kMembers[] = {
      "command",     "path",     "file_text", "old_str",  "new_str",
      "insert_line", "insert_text", "view_range", "old_path", "new_path"};
  for (std::string_view member : kMembers) {
    if (name == member) return true;
  }
  return false;
}

bool ParseJsonInput(std::string_view text, JsonInput* out) {
  // JSON text never holds a raw NUL (strings escape it, whitespace excludes
  // it), but nlohmann::json's lexer takes one for the end of the input and
  // would ignore whatever follows.
  if (text.find('\0') != std::string_view::npos) {
    out->doc = json(json::value_t::discarded);
    return false;
  }
  // Most commands are flat objects of strings and small integers.
  if (TryParseFlatObject(text, &out->doc, &IsCommandMember)) return true;
  Builder builder(out);
  bool ok = json::sax_parse(text.begin(), text.end(), &builder);
  if (std::string rewritten; !ok) {
    std::vector<std::string> written;
    if (RewriteHugeNumbers(text, &rewritten, &written)) {
      *out = JsonInput{};
      Builder again(out, &written);
      ok = json::sax_parse(rewritten.begin(), rewritten.end(), &again);
    }
  }
  if (!ok) out->doc = json(json::value_t::discarded);
  return ok;
}

}  // namespace memtool::internal
