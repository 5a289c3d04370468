#include "space_guard.h"

#include <gtest/gtest.h>

namespace fusefs {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::int64_t kMs = 1'000'000;

class SpaceGuardTest : public ::testing::Test {
 protected:
  SpaceGuard guard_{[this]() -> std::optional<std::uint64_t> {
    ++probes_;
    return free_;
  }};
  std::optional<std::uint64_t> free_ = 1024 * kMiB;
  int probes_ = 0;
  bool first_ = false;
};

TEST_F(SpaceGuardTest, PlentyOfRoomIsAskedForAtMostEveryRecheck) {
  EXPECT_FALSE(guard_.Refuses(4096, 0, &first_));
  EXPECT_FALSE(guard_.Refuses(4096, 50 * kMs, &first_));
  EXPECT_EQ(probes_, 1);
  EXPECT_FALSE(guard_.Refuses(4096, 100 * kMs, &first_));
  EXPECT_EQ(probes_, 2);
  EXPECT_FALSE(first_);
}

TEST_F(SpaceGuardTest, AFullDiskRefusesEveryWriteAndSaysSoOnce) {
  EXPECT_FALSE(guard_.Refuses(4096, 0, &first_));
  free_ = 0;
  EXPECT_FALSE(guard_.Refuses(4096, 1 * kMs, &first_));  // not asked again yet
  EXPECT_TRUE(guard_.Refuses(4096, 200 * kMs, &first_));
  EXPECT_TRUE(first_);
  EXPECT_TRUE(guard_.Refuses(1, 201 * kMs, &first_));
  EXPECT_FALSE(first_);
  EXPECT_EQ(probes_, 3);  // low: asked at every write
  free_ = 100 * kMiB;  // freed
  EXPECT_FALSE(guard_.Refuses(4096, 202 * kMs, &first_));
  free_ = 0;
  EXPECT_TRUE(guard_.Refuses(4096, 203 * kMs, &first_));  // below plenty: asked again
  EXPECT_TRUE(first_);  // a new spell
  EXPECT_EQ(guard_.last_free(), 0u);
}

TEST_F(SpaceGuardTest, AWriteNeedsTwiceItsSizeAndTheMargin) {
  free_ = SpaceGuard::kMarginBytes + 2 * kMiB;
  EXPECT_FALSE(guard_.Refuses(kMiB, 0, &first_));
  EXPECT_TRUE(guard_.Refuses(kMiB + 1, 1, &first_));
  EXPECT_FALSE(guard_.Refuses(0, 2, &first_));
}

TEST_F(SpaceGuardTest, ASaveNeedsItsSizeAndTheMarginAndLogsNoRefusal) {
  free_ = SpaceGuard::kMarginBytes + 2 * kMiB;
  EXPECT_FALSE(guard_.Lacks(2 * kMiB, 0));
  EXPECT_TRUE(guard_.Lacks(2 * kMiB + 1, 1));
  // A save found lacking starts no spell of refused writes.
  EXPECT_FALSE(guard_.Refuses(kMiB, 2, &first_));
  EXPECT_FALSE(first_);
  free_ = 0;
  EXPECT_TRUE(guard_.Refuses(1, 3, &first_));
  EXPECT_TRUE(first_);
}

TEST_F(SpaceGuardTest, UnknownFreeSpaceLetsWritesThrough) {
  free_ = std::nullopt;
  EXPECT_FALSE(guard_.Refuses(4096, 0, &first_));
  EXPECT_FALSE(guard_.Refuses(4096, 1, &first_));
  EXPECT_FALSE(guard_.Lacks(4096, 2));
}

TEST(SpaceGuardFsTest, ReadsTheFilesystemOfAPath) {
  auto free = SpaceGuard::FreeBytesOf("/")();
  ASSERT_TRUE(free.has_value());
  EXPECT_GT(*free, 0u);
  EXPECT_FALSE(SpaceGuard::FreeBytesOf("/no/such/path/at/all")().has_value());
  // /proc counts no blocks (as ramfs, or a tmpfs of size=0): unknown, not full.
  EXPECT_FALSE(SpaceGuard::FreeBytesOf("/proc")().has_value());
}

}  // namespace
}  // namespace fusefs
