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
  explicit Builder(JsonInput* out) : out_(out) {}

  bool null() { return Put(json(nullptr)); }
  bool boolean(bool v) { return Put(json(v)); }
  bool number_integer(json::number_integer_t v) { return Put(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return Put(json(v)); }
  bool number_float(json::number_float_t v, const json::string_t& s) {
    if (!IsIntegerLiteral(s)) return Put(json(v));
    if (InTopObject()) out_->wide_integers[key_] = s;
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
  std::size_t depth_ = 0;  // arrays and objects open; 1 inside the top-level one
  std::string key_;        // the top-level member being read
  bool kept_ = false;      // whether Dispatch reads that member
  json* range_ = nullptr;  // view_range's array while its items are read
};

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
  const bool ok = json::sax_parse(text.begin(), text.end(), &builder);
  if (!ok) out->doc = json(json::value_t::discarded);
  return ok;
}

}  // namespace memtool::internal
