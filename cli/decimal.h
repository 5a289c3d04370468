// Strict reading of the integer options (--chain, --after, --limit, -U): plain
// decimal digits within a range, nothing else. CLI11 hands integers to
// strtoull with base 0, which reads "0x10" as hex, "010" as octal, " 1" and
// "+1" as 1 and clamps "99999999999999999999" to the largest value; the
// DecimalIn validator in commands.h refuses all of that first.
#ifndef CLI_DECIMAL_H_
#define CLI_DECIMAL_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace cli {

// The value of `text` when it is one or more ASCII digits (leading zeros
// allowed) whose value lies in [lo, hi]; std::nullopt for anything else: empty,
// a sign, blanks, a base prefix, other characters, or a value out of range
// (also past 2^64 - 1).
std::optional<std::uint64_t> ParseDecimal(std::string_view text, std::uint64_t lo,
                                          std::uint64_t hi);

}  // namespace cli

#endif  // CLI_DECIMAL_H_
