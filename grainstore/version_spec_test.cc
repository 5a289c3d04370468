// Tests of version names: numbers, grain-id prefixes, and the strings that are
// both (grain ids are hex, so a prefix can be all digits).
#include "grainstore/version_spec.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace grainstore {
namespace {

VersionInfo Version(std::uint32_t seq, std::string id) {
  VersionInfo v;
  v.seq = seq;
  v.grain_id = std::move(id) + std::string(64 - id.size(), '0');
  return v;
}

std::vector<VersionInfo> Chain() {
  return {Version(1, "58526585aa"), Version(2, "abcdef01"), Version(3, "abcdef02"),
          Version(4, "123456ff")};
}

Result<std::size_t> Match(std::string_view spec) {
  auto parsed = ParseVersionSpec(spec);
  if (!parsed) return parsed.error();
  return MatchVersion(Chain(), *parsed, spec, "/memories/p.md");
}

// Parses `spec`, expecting it to name version `number` (0: none) and grain-id
// prefix `prefix` ("": none).
void ExpectParsed(std::string_view spec, std::uint32_t number, std::string_view prefix) {
  SCOPED_TRACE(spec);
  auto parsed = ParseVersionSpec(spec);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->number, number);
  EXPECT_EQ(parsed->id_prefix, prefix);
}

TEST(VersionSpecTest, ParsesNumbersAndPrefixes) {
  ExpectParsed("42", 42, "");
  ExpectParsed("ABCdef12", 0, "abcdef12");
  ExpectParsed("58526585", 58526585, "58526585");
  // Every version number a chain can have (.history names them so).
  ExpectParsed("1000000000", 1000000000, "1000000000");
  ExpectParsed("4294967295", 4294967295u, "4294967295");
  // Too large to be a number, still a prefix; never an overflow.
  ExpectParsed("4294967296", 0, "4294967296");
  ExpectParsed("99999999999999999999", 0, "99999999999999999999");
}

// Leading zeros are decimal at any width, as they are up to ten digits: a
// number padded past ten characters is still that number (and a prefix too).
TEST(VersionSpecTest, ZeroPaddedNumbersOfAnyLengthAreNumbers) {
  ExpectParsed("01", 1, "");
  ExpectParsed("0000000001", 1, "0000000001");
  ExpectParsed("00000000001", 1, "00000000001");
  ExpectParsed("000000000004294967295", 4294967295u, "000000000004294967295");
  ExpectParsed("000000000004294967296", 0, "000000000004294967296");
  ExpectParsed(std::string(63, '0') + "2", 2, std::string(63, '0') + "2");
  // Past 64 characters no prefix is left, but the number still is.
  ExpectParsed(std::string(70, '0') + "3", 3, "");
  EXPECT_EQ(*Match("00000000002"), 1u);
  EXPECT_EQ(*Match(std::string(70, '0') + "4"), 3u);
  EXPECT_EQ(ParseVersionSpec(std::string(70, '0')).error().message(),
            "versions are numbered from 1, got " + std::string(70, '0'));
}

TEST(VersionSpecTest, RejectsMalformedNames) {
  for (std::string_view bad : {"", "abc", "abcde", "v1", "-1", "1.5", "12345g", " 1",
                               "abcdefg"}) {
    EXPECT_EQ(ParseVersionSpec(bad).error().code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(ParseVersionSpec(std::string(65, 'a')).error().code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(ParseVersionSpec(std::string(64, 'a')).has_value());
}

// Issue: 65 digits or more past the largest version were a malformed name
// (a usage error) though digits of any length are a number, and 11 to 64 of
// them past the range were a version that does not exist.
TEST(VersionSpecTest, DigitsPastTheRangeOfAnyLengthNameNoVersion) {
  for (std::size_t length : {11u, 64u, 65u, 200u}) {
    const std::string nines(length, '9');
    SCOPED_TRACE(length);
    auto parsed = ParseVersionSpec(nines);
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(parsed->number, 0u);
    EXPECT_EQ(parsed->NamesNone(), length > 64);
    auto matched = Match(nines);
    ASSERT_FALSE(matched.has_value());
    EXPECT_EQ(matched.error().code(), StatusCode::kNotFound);
    EXPECT_EQ(matched.error().message(), "/memories/p.md has no version " + nines);
  }
}

// Versions are numbered from 1: a short zero is no version at all, a usage
// error like any other malformed name, while six zeros may still begin an id.
TEST(VersionSpecTest, ZeroIsNotAVersionNumber) {
  for (std::string_view zero : {"0", "00", "00000"}) {
    auto parsed = ParseVersionSpec(zero);
    ASSERT_FALSE(parsed.has_value()) << zero;
    EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument) << zero;
    EXPECT_EQ(parsed.error().message(), fmt::format("versions are numbered from 1, got {}", zero));
  }
  ExpectParsed("000000", 0, "000000");
  EXPECT_EQ(Match("000000").error().code(), StatusCode::kNotFound);
}

TEST(VersionSpecTest, AllDigitPrefixNamesItsVersionWhenNoNumberMatches) {
  auto by_prefix = Match("58526585");
  ASSERT_TRUE(by_prefix.has_value()) << by_prefix.error().ToString();
  EXPECT_EQ(*by_prefix, 0u);
  auto six = Match("123456");
  ASSERT_TRUE(six.has_value());
  EXPECT_EQ(*six, 3u);
}

TEST(VersionSpecTest, NumberWinsOverPrefix) {
  std::vector<VersionInfo> chain = Chain();
  chain.push_back(Version(123456, "ffffffff"));
  auto parsed = ParseVersionSpec("123456");
  ASSERT_TRUE(parsed.has_value());
  auto index = MatchVersion(chain, *parsed, "123456", "/memories/p.md");
  ASSERT_TRUE(index.has_value());
  EXPECT_EQ(*index, 4u);
}

TEST(VersionSpecTest, NumbersPrefixesMissesAndAmbiguity) {
  EXPECT_EQ(*Match("2"), 1u);
  EXPECT_EQ(*Match("abcdef01"), 1u);
  EXPECT_EQ(*Match("ABCDEF02"), 2u);
  auto missing = Match("7");
  EXPECT_EQ(missing.error().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.error().message(), "/memories/p.md has no version 7");
  EXPECT_EQ(Match("999999").error().code(), StatusCode::kNotFound);
  auto ambiguous = Match("abcdef");
  EXPECT_EQ(ambiguous.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ambiguous.error().message(), "grain id prefix abcdef is ambiguous");
}

}  // namespace
}  // namespace grainstore
