#include "mount_table.h"

#include <gtest/gtest.h>

namespace fusefs {
namespace {

constexpr char kTable[] =
    "22 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
    "40 22 0:35 / /tmp/mnt rw,nosuid,nodev,relatime shared:20 - fuse.areev areev rw,user_id=0\n"
    "41 40 0:36 / /tmp/mnt rw,nosuid,nodev,relatime shared:21 - tmpfs tmpfs rw\n"
    "42 22 0:37 / /tmp/with\\040space rw,relatime - fuse.areev areev rw\n"
    "43 22 0:38 / /tmp/opt rw,relatime master:3 propagate_from:2 - fuse.sshfs host: rw\n";

TEST(MountTableTest, FindsTheTopmostMountOnAPath) {
  EXPECT_EQ(MountTypeIn(kTable, "/"), "ext4");
  EXPECT_EQ(MountTypeIn(kTable, "/tmp/mnt"), "tmpfs");  // mounted over the areev mount
  EXPECT_EQ(MountTypeIn(kTable, "/tmp/with space"), "fuse.areev");
  EXPECT_EQ(MountTypeIn(kTable, "/tmp/opt"), "fuse.sshfs");  // optional fields skipped
}

TEST(MountTableTest, NothingMountedIsEmpty) {
  EXPECT_EQ(MountTypeIn(kTable, "/tmp"), "");
  EXPECT_EQ(MountTypeIn(kTable, "/tmp/mnt/sub"), "");
  EXPECT_EQ(MountTypeIn(kTable, "/tmp/with\\040space"), "");  // the escaped text is not a path
  EXPECT_EQ(MountTypeIn("", "/"), "");
  EXPECT_EQ(MountTypeIn("garbage line\n", "/"), "");
}

TEST(MountTableTest, ThisProcessSeesItsRoot) {
  EXPECT_NE(MountTypeAt("/"), "");
  EXPECT_EQ(MountTypeAt("/proc/self"), "");
  EXPECT_EQ(MountTypeAt("/proc/"), "proc");
}

}  // namespace
}  // namespace fusefs
