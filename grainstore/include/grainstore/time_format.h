// UTC ISO-8601 timestamps for nanosecond times since the Unix epoch: the one
// formatter the CLI and the language bindings share. Pure function, no I/O.
#ifndef GRAINSTORE_TIME_FORMAT_H_
#define GRAINSTORE_TIME_FORMAT_H_

#include <cstdint>
#include <string>

namespace grainstore {

// "2026-11-30T08:45:43.123Z" for `fraction_digits` 3 (milliseconds), ".123456Z"
// for 6 (microseconds), ".123456789Z" for 9 (nanoseconds); 0 gives no fraction
// ("2026-11-30T08:45:43Z"). `fraction_digits` is clamped to [0, 9]. Digits
// beyond the precision are dropped, never rounded, and times before the epoch
// floor toward the past (-1 ns is "1969-12-31T23:59:59.999Z"), so a timestamp
// never reads later than the instant it stands for.
std::string FormatIsoUtc(std::int64_t ns_since_epoch, int fraction_digits = 3);

}  // namespace grainstore

#endif  // GRAINSTORE_TIME_FORMAT_H_
