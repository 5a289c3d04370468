// Tests of the shared UTC ISO-8601 formatter at every precision its callers use:
// 3 digits (CLI tables, the default), 6 (bindings' `created`), 9 (CLI --json).
#include "grainstore/time_format.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace grainstore {
namespace {

constexpr std::int64_t kWithNs = 1'700'000'000'123'456'789LL;

TEST(FormatIsoUtcTest, Epoch) {
  EXPECT_EQ(FormatIsoUtc(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatIsoUtc(0, 3), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatIsoUtc(0, 6), "1970-01-01T00:00:00.000000Z");
  EXPECT_EQ(FormatIsoUtc(0, 9), "1970-01-01T00:00:00.000000000Z");
  EXPECT_EQ(FormatIsoUtc(0, 0), "1970-01-01T00:00:00Z");
}

TEST(FormatIsoUtcTest, NanosecondValueAtEachPrecision) {
  EXPECT_EQ(FormatIsoUtc(kWithNs), "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(FormatIsoUtc(kWithNs, 3), "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(FormatIsoUtc(kWithNs, 6), "2023-11-14T22:13:20.123456Z");
  EXPECT_EQ(FormatIsoUtc(kWithNs, 9), "2023-11-14T22:13:20.123456789Z");
  EXPECT_EQ(FormatIsoUtc(kWithNs, 1), "2023-11-14T22:13:20.1Z");
  EXPECT_EQ(FormatIsoUtc(kWithNs, 0), "2023-11-14T22:13:20Z");
}

TEST(FormatIsoUtcTest, DropsDigitsInsteadOfRounding) {
  // A rounding formatter would carry into the next second.
  const std::int64_t almost = 1'700'000'000'999'999'999LL;
  EXPECT_EQ(FormatIsoUtc(almost, 3), "2023-11-14T22:13:20.999Z");
  EXPECT_EQ(FormatIsoUtc(almost, 6), "2023-11-14T22:13:20.999999Z");
  EXPECT_EQ(FormatIsoUtc(almost, 9), "2023-11-14T22:13:20.999999999Z");
  EXPECT_EQ(FormatIsoUtc(1'700'000'000'000'999'999LL, 3), "2023-11-14T22:13:20.000Z");
  EXPECT_EQ(FormatIsoUtc(1'700'000'000'000'000'999LL, 6), "2023-11-14T22:13:20.000000Z");
}

TEST(FormatIsoUtcTest, BeforeTheEpochFloors) {
  EXPECT_EQ(FormatIsoUtc(-1), "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(FormatIsoUtc(-1, 6), "1969-12-31T23:59:59.999999Z");
  EXPECT_EQ(FormatIsoUtc(-1, 9), "1969-12-31T23:59:59.999999999Z");
  EXPECT_EQ(FormatIsoUtc(-1'500'000'000LL, 3), "1969-12-31T23:59:58.500Z");
  EXPECT_EQ(FormatIsoUtc(-1'000'000'000LL, 9), "1969-12-31T23:59:59.000000000Z");
}

TEST(FormatIsoUtcTest, WholeInt64Range) {
  EXPECT_EQ(FormatIsoUtc(std::numeric_limits<std::int64_t>::max(), 9),
            "2262-04-11T23:47:16.854775807Z");
  EXPECT_EQ(FormatIsoUtc(std::numeric_limits<std::int64_t>::min(), 9),
            "1677-09-21T00:12:43.145224192Z");
}

TEST(FormatIsoUtcTest, ClampsFractionDigits) {
  EXPECT_EQ(FormatIsoUtc(kWithNs, 12), "2023-11-14T22:13:20.123456789Z");
  EXPECT_EQ(FormatIsoUtc(kWithNs, -1), "2023-11-14T22:13:20Z");
}

}  // namespace
}  // namespace grainstore
