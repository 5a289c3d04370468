#include "decimal.h"

#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

namespace cli {
namespace {

constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();

TEST(DecimalTest, PlainDigitsWithinRange) {
  EXPECT_EQ(ParseDecimal("0", 0, kU64Max), 0u);
  EXPECT_EQ(ParseDecimal("42", 0, kU64Max), 42u);
  EXPECT_EQ(ParseDecimal("010", 0, kU64Max), 10u);  // decimal, not octal
  EXPECT_EQ(ParseDecimal("00", 0, kU64Max), 0u);
  EXPECT_EQ(ParseDecimal("18446744073709551615", 0, kU64Max), kU64Max);
  EXPECT_EQ(ParseDecimal("7", 7, 7), 7u);
}

TEST(DecimalTest, RefusesAnythingButDigits) {
  for (const char* text : {"", "-0", "-1", "+1", " 1", "1 ", "0x1", "0X10", "0b1", "0o7",
                           "1e3", "1.0", "١", "1_000", "\t3"}) {
    EXPECT_EQ(ParseDecimal(text, 0, kU64Max), std::nullopt) << text;
  }
}

TEST(DecimalTest, RefusesValuesOutOfRangeInsteadOfClamping) {
  EXPECT_EQ(ParseDecimal("18446744073709551616", 0, kU64Max), std::nullopt);
  EXPECT_EQ(ParseDecimal("99999999999999999999", 0, kU64Max), std::nullopt);
  EXPECT_EQ(ParseDecimal("184467440737095516150", 0, kU64Max), std::nullopt);
  EXPECT_EQ(ParseDecimal("0", 1, 10), std::nullopt);
  EXPECT_EQ(ParseDecimal("11", 1, 10), std::nullopt);
  EXPECT_EQ(ParseDecimal("9223372036854775808", 1, 9223372036854775807u), std::nullopt);
  EXPECT_EQ(ParseDecimal("9223372036854775807", 1, 9223372036854775807u),
            9223372036854775807u);
}

}  // namespace
}  // namespace cli
