// Text from the store (names, fact values, messages that quote them) made
// safe to show on a terminal or in a log line: one line, no control
// characters a terminal would act on, valid UTF-8. Used by the CLI's tables
// and headers and by the mount's log.
#ifndef GRAINSTORE_DISPLAY_TEXT_H_
#define GRAINSTORE_DISPLAY_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace grainstore {

// What a byte that belongs to no well-formed UTF-8 sequence becomes: U+FFFD
// (table cells: text) or "\xHH" (messages and log lines that quote a host
// path, whose bytes the user may need).
enum class Malformed { kReplace, kEscape };

// `value` with "\n" and "\t" for newline and tab, "\xHH" for the other C0
// controls and DEL, "\u00HH" for the C1 controls (U+0080-U+009F, which some
// terminals obey as ESC sequences), and each byte that does not belong to a
// well-formed UTF-8 sequence as `malformed` says. With `max_columns` > 3, a
// result wider than that many terminal columns (DisplayWidth), or longer
// than twice that many characters (so that characters of no width cannot
// make it unbounded), is cut to within `max_columns` - 3 of them (and twice
// that less 3 characters), never inside an escape or a character, followed
// by "...".
std::string DisplayText(std::string_view value, std::size_t max_columns = 0,
                        Malformed malformed = Malformed::kReplace);

// The columns a terminal gives `text`, UTF-8 as DisplayText returns it: two
// for East Asian wide and fullwidth characters (CJK, most emoji), none for
// combining marks and zero-width characters, one for the rest (the widths of
// the C.UTF-8 locale's wcwidth, taken without changing the process's locale;
// one per character where that locale is missing). A byte that is not UTF-8
// counts one.
std::size_t DisplayWidth(std::string_view text);

// True when `text` is empty or shows nothing: only whitespace (ASCII and
// Unicode's White_Space: no-break, em and ideographic spaces...) and
// characters that draw nothing (zero-width space and joiners, word joiner,
// direction marks and controls, the byte-order mark, soft hyphen, variation
// selectors, tag characters, Hangul and Khmer fillers, the blank braille
// pattern). A name made of those cannot be told apart from an empty one, or
// from another, in a table. Bytes that are not UTF-8 are not blank.
bool IsBlankText(std::string_view text);

}  // namespace grainstore

#endif  // GRAINSTORE_DISPLAY_TEXT_H_
