#include "json_input.h"

#include <cstdint>
#include <limits>

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

// nlohmann::json's own DOM builder (detail::json_sax_dom_parser, as in
// nlohmann-json 3.11), except for integer literals it could only store as
// doubles.
class Builder {
 public:
  explicit Builder(JsonInput* out) : out_(out), dom_(out->doc, /*allow_exceptions=*/false) {}

  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t& s) {
    if (!IsIntegerLiteral(s)) return dom_.number_float(v, s);
    if (depth_ == 1) out_->wide_integers[key_] = s;
    if (s.front() == '-') return dom_.number_integer(std::numeric_limits<std::int64_t>::min());
    return dom_.number_unsigned(std::numeric_limits<std::uint64_t>::max());
  }
  bool string(json::string_t& v) { return dom_.string(v); }
  bool binary(json::binary_t& v) { return dom_.binary(v); }
  bool start_object(std::size_t n) {
    ++depth_;
    return dom_.start_object(n);
  }
  bool key(json::string_t& k) {
    if (depth_ == 1) {
      key_ = k;
      out_->wide_integers.erase(k);  // a repeated member: the last one counts
    }
    return dom_.key(k);
  }
  bool end_object() {
    --depth_;
    return dom_.end_object();
  }
  bool start_array(std::size_t n) {
    ++depth_;
    return dom_.start_array(n);
  }
  bool end_array() {
    --depth_;
    return dom_.end_array();
  }
  bool parse_error(std::size_t pos, const std::string& token,
                   const nlohmann::detail::exception& e) {
    return dom_.parse_error(pos, token, e);
  }

 private:
  JsonInput* out_;
  nlohmann::detail::json_sax_dom_parser<json> dom_;
  int depth_ = 0;     // 1 inside the top-level object
  std::string key_;  // the top-level member being read
};

}  // namespace

bool ParseJsonInput(std::string_view text, JsonInput* out) {
  // JSON text never holds a raw NUL (strings escape it, whitespace excludes
  // it), but nlohmann::json's lexer takes one for the end of the input and
  // would ignore whatever follows.
  if (text.find('\0') != std::string_view::npos) {
    out->doc = json(json::value_t::discarded);
    return false;
  }
  // Most commands are flat objects of strings and small integers.
  if (TryParseFlatObject(text, &out->doc)) return true;
  Builder builder(out);
  const bool ok = json::sax_parse(text.begin(), text.end(), &builder);
  if (!ok) out->doc = json(json::value_t::discarded);
  return ok;
}

}  // namespace memtool::internal
