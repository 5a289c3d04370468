// UTC ISO-8601 timestamp formatting.
#include "grainstore/time_format.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string>

namespace grainstore {

std::string FormatIsoUtc(std::int64_t ns_since_epoch, int fraction_digits) {
  constexpr std::int64_t kNsPerSec = 1'000'000'000;
  std::int64_t secs = ns_since_epoch / kNsPerSec;
  std::int64_t frac = ns_since_epoch % kNsPerSec;
  if (frac < 0) {  // C++ division truncates toward zero; floor instead.
    frac += kNsPerSec;
    --secs;
  }
  const int digits = std::clamp(fraction_digits, 0, 9);
  for (int i = digits; i < 9; ++i) frac /= 10;

  const std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  // The int64 nanosecond range spans years 1677-2262: always four digits.
  char buf[48];
  int n = std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900,
                        tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  if (digits > 0) {
    n += std::snprintf(buf + n, sizeof(buf) - n, ".%0*d", digits, static_cast<int>(frac));
  }
  std::string out(buf, static_cast<std::size_t>(n));
  out.push_back('Z');
  return out;
}

}  // namespace grainstore
