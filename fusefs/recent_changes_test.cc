#include "recent_changes.h"

#include <gtest/gtest.h>

#include <string>

namespace fusefs {
namespace {

TEST(RecentChangesTest, APathIsRecentForTheWindowAfterItsLastChange) {
  RecentChanges recent(1000);
  EXPECT_FALSE(recent.Recent("/memories/a.md", 0));
  recent.Note("/memories/a.md", 100);
  EXPECT_TRUE(recent.Recent("/memories/a.md", 100));
  EXPECT_TRUE(recent.Recent("/memories/a.md", 1099));
  EXPECT_FALSE(recent.Recent("/memories/a.md", 1100));
  EXPECT_FALSE(recent.Recent("/memories/b.md", 500));  // another path
  recent.Note("/memories/a.md", 1500);                 // changed again
  EXPECT_TRUE(recent.Recent("/memories/a.md", 2000));
}

TEST(RecentChangesTest, ExpiredPathsAreSweptWhenTheMapGrows) {
  RecentChanges recent(1000);
  for (std::size_t i = 0; i + 1 < RecentChanges::kSweepAt; ++i) {
    recent.Note("/memories/old/" + std::to_string(i), 0);
  }
  EXPECT_EQ(recent.size(), RecentChanges::kSweepAt - 1);
  recent.Note("/memories/new.md", 5000);  // the others expired long ago
  EXPECT_EQ(recent.size(), 1u);
  EXPECT_TRUE(recent.Recent("/memories/new.md", 5000));
}

TEST(RecentChangesTest, PathsWithinTheWindowAreKeptWhateverTheirNumber) {
  RecentChanges recent(1'000'000);
  const std::size_t n = 3 * RecentChanges::kSweepAt;
  for (std::size_t i = 0; i < n; ++i) recent.Note("/memories/" + std::to_string(i), 10);
  EXPECT_EQ(recent.size(), n);
  EXPECT_TRUE(recent.Recent("/memories/0", 20));
  EXPECT_TRUE(recent.Recent("/memories/" + std::to_string(n - 1), 20));
}

}  // namespace
}  // namespace fusefs
