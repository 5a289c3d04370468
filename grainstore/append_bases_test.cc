#include "append_bases.h"

#include <string>

#include <gtest/gtest.h>

namespace grainstore {
namespace {

// An entry whose run holds one body of `size` bytes (cost: size + one version).
AppendBases::Entry EntryOf(std::int64_t body_id, std::size_t size) {
  AppendBases::Entry e;
  e.run.push_back({.body_id = body_id, .size = size, .hash = ""});
  e.content = std::string(size, 'x');
  return e;
}

TEST(AppendBasesTest, KeepsOneEntryPerFileTakesAndForgets) {
  AppendBases bases;
  bases.Keep(7, EntryOf(1, 100));
  bases.Keep(7, EntryOf(2, 300));
  ASSERT_NE(bases.Find(7), nullptr);
  EXPECT_EQ(bases.Find(7)->run.back().body_id, 2);
  EXPECT_EQ(bases.size(), 1u);
  EXPECT_EQ(bases.bytes(), 300u + AppendBases::kVersionCost);
  EXPECT_EQ(bases.Find(8), nullptr);
  auto taken = bases.Take(7);
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ(taken->content.size(), 300u);
  EXPECT_EQ(bases.Find(7), nullptr);
  EXPECT_EQ(bases.bytes(), 0u);
  EXPECT_FALSE(bases.Take(7).has_value());
  bases.Keep(7, std::move(*taken));
  bases.Forget(7);
  EXPECT_EQ(bases.Find(7), nullptr);
  EXPECT_EQ(bases.bytes(), 0u);
}

TEST(AppendBasesTest, DropsTheLeastRecentlyKeptPastItsLimits) {
  AppendBases bases;
  for (NodeId n = 1; n <= AppendBases::kMaxEntries + 5; ++n) bases.Keep(n, EntryOf(n, 10));
  EXPECT_EQ(bases.size(), AppendBases::kMaxEntries);
  EXPECT_EQ(bases.Find(5), nullptr);
  EXPECT_NE(bases.Find(6), nullptr);
  // Four entries of a quarter of the byte budget each, then one more.
  const std::size_t quarter = AppendBases::kMaxBytes / 4 - AppendBases::kVersionCost;
  for (NodeId n = 100; n < 105; ++n) bases.Keep(n, EntryOf(n, quarter));
  EXPECT_LE(bases.bytes(), AppendBases::kMaxBytes);
  EXPECT_EQ(bases.Find(100), nullptr);
  EXPECT_NE(bases.Find(104), nullptr);
  // An entry past the per-entry limit is not kept, and replaces the old one.
  bases.Keep(104, EntryOf(9, AppendBases::kMaxEntryBytes));
  EXPECT_EQ(bases.Find(104), nullptr);
}

}  // namespace
}  // namespace grainstore
