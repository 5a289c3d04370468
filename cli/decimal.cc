// Strict decimal integers for the command line's options (see decimal.h).
#include "decimal.h"

#include <limits>

namespace cli {

std::optional<std::uint64_t> ParseDecimal(std::string_view text, std::uint64_t lo,
                                          std::uint64_t hi) {
  if (text.empty()) return std::nullopt;
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (kMax - digit) / 10) return std::nullopt;  // past 2^64 - 1
    value = value * 10 + digit;
  }
  if (value < lo || value > hi) return std::nullopt;
  return value;
}

}  // namespace cli
