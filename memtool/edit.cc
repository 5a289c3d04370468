// `str_replace` (C13, C14) and `insert` (C15, C16): read-modify-write edits run
// inside one store write transaction through Store::EditFile.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commands.h"
#include "format.h"
#include "grainstore/options.h"

namespace memtool::internal {
namespace {

using grainstore::Status;
using grainstore::StatusCode;

// Carries the message of a rule violation found inside the edit callback; the
// callback returns a non-OK Status so the store aborts without writing.
struct EditOutcome {
  bool rejected = false;
  std::string message;
  std::string content;  // success text, built while the new body is at hand
};

Status Reject(EditOutcome* outcome, std::string message) {
  outcome->rejected = true;
  outcome->message = std::move(message);
  return Status::Conflict("memtool edit rejected");
}

// First byte offset >= from where `needle` (non-empty) occurs, or npos.
// glibc's memmem is linear-time (two-way), so hostile inputs cannot stall.
std::size_t Find(std::string_view hay, std::string_view needle, std::size_t from) {
  if (from > hay.size() || hay.size() - from < needle.size()) return std::string_view::npos;
  const void* hit = memmem(hay.data() + from, hay.size() - from, needle.data(), needle.size());
  return hit ? static_cast<std::size_t>(static_cast<const char*>(hit) - hay.data())
             : std::string_view::npos;
}

// Every offset where `needle` (non-empty) occurs in `hay`, the
// overlapping ones too, in ascending order, in time linear in both
// (Knuth-Morris-Pratt, skipping with memchr to the next candidate first
// byte while nothing is matched): a memmem from each match's next byte
// would prepare the needle again each time, so a needle that overlaps itself
// (a run of one line repeated) cost matches x its length, and under
// AddressSanitizer each memmem checks the whole rest of the text.
class OverlappingMatches {
 public:
  OverlappingMatches(std::string_view hay, std::string_view needle)
      : hay_(hay), needle_(needle), border_(needle.size(), 0) {
    // border_[i]: the longest proper prefix of needle[0..i] that is also its suffix.
    std::uint32_t k = 0;
    for (std::size_t i = 1; i < needle_.size(); ++i) {
      while (k > 0 && needle_[i] != needle_[k]) k = border_[k - 1];
      if (needle_[i] == needle_[k]) ++k;
      border_[i] = k;
    }
  }

  // The next match's offset, or npos after the last.
  std::size_t Next() {
    while (at_ < hay_.size()) {
      if (matched_ == 0) {
        const void* hit = std::memchr(hay_.data() + at_, needle_[0], hay_.size() - at_);
        if (hit == nullptr) break;
        at_ = static_cast<std::size_t>(static_cast<const char*>(hit) - hay_.data());
      }
      const char c = hay_[at_++];
      while (matched_ > 0 && c != needle_[matched_]) matched_ = border_[matched_ - 1];
      if (c == needle_[matched_]) ++matched_;
      if (matched_ == needle_.size()) {
        matched_ = border_[matched_ - 1];
        return at_ - needle_.size();
      }
    }
    at_ = hay_.size();
    return std::string_view::npos;
  }

 private:
  std::string_view hay_;
  std::string_view needle_;
  // A needle that matches twice is no longer than a body.
  static_assert(grainstore::Limits::kMaxBodyBytes <= std::numeric_limits<std::uint32_t>::max());
  std::vector<std::uint32_t> border_;
  std::size_t at_ = 0;
  std::uint32_t matched_ = 0;
};

// Appends the 1-based line of every position in `starts` order; `next` yields
// ascending byte offsets and npos at the end. Past `max_listed` lines, or
// kMaxListedBytes of them, the rest are counted, not listed (", and N
// more"): a file of 100 MiB of newlines searched for "" or "\n" would
// otherwise answer with a gigabyte of line numbers.
template <typename NextFn>
void AppendMatchLines(std::string* out, std::string_view hay, std::size_t first,
                      std::size_t max_listed, NextFn next) {
  const std::size_t list_start = out->size();
  std::size_t line = 1;
  std::size_t counted_to = 0;
  std::size_t listed = 0;
  std::size_t unlisted = 0;
  for (std::size_t pos = first; pos != std::string_view::npos; pos = next(pos)) {
    if (listed == max_listed || out->size() - list_start >= kMaxListedBytes) {
      ++unlisted;
      continue;
    }
    for (const char* p = hay.data() + counted_to;;) {
      const void* hit = std::memchr(p, '\n', hay.data() + pos - p);
      if (!hit) break;
      ++line;
      p = static_cast<const char*>(hit) + 1;
    }
    counted_to = pos;
    if (listed != 0) out->append(", ");
    out->append(std::to_string(line));
    ++listed;
  }
  if (unlisted != 0) out->append(", and " + std::to_string(unlisted) + " more");
}

// Builds the ambiguity message for `old_str` occurring more than once.
std::string AmbiguousMessage(std::string_view current, std::string_view old_str) {
  std::string msg = "No replacement was performed. Multiple occurrences of old_str `";
  msg.append(old_str);
  msg.append("` in lines: ");
  if (old_str.empty()) {
    // Every code point boundary, and the end, is a match (Python's str.find).
    auto next = [current](std::size_t pos) -> std::size_t {
      if (pos >= current.size()) return std::string_view::npos;
      ++pos;
      while (pos < current.size() && (static_cast<unsigned char>(current[pos]) & 0xC0) == 0x80)
        ++pos;
      return pos;
    };
    AppendMatchLines(&msg, current, 0, kMaxListedMatches, next);
  } else {
    OverlappingMatches matches(current, old_str);
    auto next = [&matches](std::size_t) { return matches.Next(); };
    AppendMatchLines(&msg, current, matches.Next(), std::numeric_limits<std::size_t>::max(),
                     next);
  }
  msg.append(". Please ensure it is unique");
  return msg;
}

Status ReplaceOnce(const PathArg& p, std::string_view old_str, std::string_view new_str,
                   std::string_view current, std::string* next, EditOutcome* outcome) {
  const std::size_t at =
      old_str.empty() ? (current.empty() ? 0 : std::string_view::npos) : Find(current, old_str, 0);
  const bool unique =
      old_str.empty() ? current.empty()
                      : at != std::string_view::npos &&
                            Find(current, old_str, at + old_str.size()) == std::string_view::npos;
  if (at == std::string_view::npos && !old_str.empty()) {
    std::string msg = "No replacement was performed, old_str `";
    msg.append(old_str);
    msg.append("` did not appear verbatim in ");
    msg.append(p.raw);
    msg.append(".");
    return Reject(outcome, std::move(msg));
  }
  if (!unique) return Reject(outcome, AmbiguousMessage(current, old_str));
  if (current.size() - old_str.size() + new_str.size() > grainstore::Limits::kMaxBodyBytes) {
    return Reject(outcome, TooLargeMessage(p.raw));
  }
  next->clear();
  next->reserve(current.size() - old_str.size() + new_str.size());
  next->append(current.substr(0, at));
  next->append(new_str);
  next->append(current.substr(at + old_str.size()));

  // Snippet: two lines either side of the line where the match started.
  const auto k = static_cast<std::size_t>(std::count(current.begin(), current.begin() + at, '\n'));
  const std::size_t first = k >= 2 ? k - 2 : 0;
  outcome->content.assign(
      "The memory file has been edited. Here is the snippet showing the change (with line "
      "numbers):\n");
  AppendNumberedLines(&outcome->content, *next, first, k + 3 - first);
  return Status::Ok();
}

// Runs `edit` through Store::EditFile and maps the outcome; `not_exist` is the
// command's missing-file message.
template <typename EditBody>
ToolResult RunEdit(const Target& t, const PathArg& p, const std::string& not_exist, EditBody edit) {
  if (p.path.is_root() || p.path.too_long) return Failure(not_exist);
  EditOutcome outcome;
  grainstore::Result<grainstore::WriteResult> written =
      t.store->EditFile(t.ns, p.path.key, [&](std::string_view current, std::string* next) {
        outcome = EditOutcome();
        return edit(current, next, &outcome);
      });
  if (written.has_value()) return Success(std::move(outcome.content));
  if (outcome.rejected) return Failure(std::move(outcome.message));
  switch (written.error().code()) {
    case StatusCode::kNotFound:
    case StatusCode::kIsADirectory:
    case StatusCode::kNotADirectory:
      return Failure(not_exist);
    case StatusCode::kTooLarge:
      return Failure(TooLargeMessage(p.raw));
    default:
      return StorageFailure(p.raw, written.error());
  }
}

Status InsertAt(const PathArg& p, const InsertLine& line, std::string_view insert_text,
                std::string_view current, std::string* next, EditOutcome* outcome) {
  const bool terminated = !current.empty() && current.back() == '\n';
  const auto n_lines = static_cast<std::int64_t>(
      current.empty() ? 0
                      : std::count(current.begin(), current.end(), '\n') + (terminated ? 0 : 1));
  if (line.value < 0 || line.value > n_lines) {
    std::string msg = "Invalid `insert_line` parameter: ";
    msg.append(line.text);
    msg.append(". It should be within the range of lines of the file: [0, ");
    msg.append(std::to_string(n_lines));
    msg.append("]");
    return Reject(outcome, std::move(msg));
  }
  std::string_view text = insert_text;
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  const std::string_view lines = terminated ? current.substr(0, current.size() - 1) : current;
  if (lines.size() + text.size() > grainstore::Limits::kMaxBodyBytes) {
    return Reject(outcome, TooLargeMessage(p.raw));  // certain; skip building it
  }
  next->clear();
  next->reserve(lines.size() + text.size() + 2);
  const auto index = static_cast<std::size_t>(line.value);
  if (index == 0) {
    next->append(text);
    if (n_lines > 0) next->append("\n").append(lines);
  } else if (line.value == n_lines) {
    next->append(lines).append("\n").append(text);
  } else {
    const std::size_t split = LineStart(lines, index);
    next->append(lines.substr(0, split)).append(text).append("\n").append(lines.substr(split));
  }
  if (next->empty() || next->back() != '\n') next->push_back('\n');
  if (next->size() > grainstore::Limits::kMaxBodyBytes) {
    return Reject(outcome, TooLargeMessage(p.raw));
  }
  outcome->content = "The file ";
  outcome->content.append(p.raw);
  outcome->content.append(" has been edited.");
  return Status::Ok();
}

}  // namespace

ToolResult StrReplace(const Target& t, const PathArg& p, std::string_view old_str,
                      std::string_view new_str) {
  std::string not_exist = "The path ";
  not_exist.append(p.raw);
  not_exist.append(" does not exist. Please provide a valid path.");
  return RunEdit(t, p, not_exist,
                 [&](std::string_view current, std::string* next, EditOutcome* outcome) {
                   return ReplaceOnce(p, old_str, new_str, current, next, outcome);
                 });
}

ToolResult Insert(const Target& t, const PathArg& p, const InsertLine& line,
                  std::string_view insert_text) {
  std::string not_exist = "The path ";
  not_exist.append(p.raw);
  not_exist.append(" does not exist");
  return RunEdit(t, p, not_exist,
                 [&](std::string_view current, std::string* next, EditOutcome* outcome) {
                   return InsertAt(p, line, insert_text, current, next, outcome);
                 });
}

}  // namespace memtool::internal
