#include "grainstore/free_space.h"

#include <gtest/gtest.h>

namespace grainstore {
namespace {

TEST(FreeSpaceTest, ReadsTheFilesystemOfAPath) {
  const FreeSpace root = FreeSpaceAt("/");
  ASSERT_TRUE(root.bytes.has_value());
  EXPECT_GT(*root.bytes, 0u);
}

TEST(FreeSpaceTest, UnknownWhereNothingIsCounted) {
  // /proc counts neither blocks nor inodes (as ramfs counts no blocks).
  const FreeSpace proc = FreeSpaceAt("/proc");
  EXPECT_FALSE(proc.bytes.has_value());
  EXPECT_FALSE(proc.inodes.has_value());
  const FreeSpace missing = FreeSpaceAt("/no/such/path/at/all");
  EXPECT_FALSE(missing.bytes.has_value());
  EXPECT_FALSE(missing.inodes.has_value());
}

}  // namespace
}  // namespace grainstore
