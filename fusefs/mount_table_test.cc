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
  EXPECT_EQ(MountIn(kTable, "/").type, "ext4");
  EXPECT_EQ(MountIn(kTable, "/tmp/mnt").type, "tmpfs");  // mounted over the areev mount
  EXPECT_EQ(MountIn(kTable, "/tmp/with space").type, "fuse.areev");
  EXPECT_EQ(MountIn(kTable, "/tmp/opt").type, "fuse.sshfs");  // optional fields skipped
}

TEST(MountTableTest, NothingMountedIsEmpty) {
  EXPECT_EQ(MountIn(kTable, "/tmp").type, "");
  EXPECT_EQ(MountIn(kTable, "/tmp/mnt/sub").type, "");
  EXPECT_EQ(MountIn(kTable, "/tmp/with\\040space").type, "");  // the escaped text is not a path
  EXPECT_EQ(MountIn("", "/").type, "");
  EXPECT_EQ(MountIn("garbage line\n", "/").type, "");
}

TEST(MountTableTest, AMountNamesItsDevice) {
  const MountEntry areev = MountIn(kTable, "/tmp/with space");
  EXPECT_EQ(areev.major, 0u);
  EXPECT_EQ(areev.minor, 37u);  // its connection: /sys/fs/fuse/connections/37
  const MountEntry root = MountIn(kTable, "/");
  EXPECT_EQ(root.major, 254u);
  EXPECT_EQ(root.minor, 1u);
  const MountEntry top = MountIn(kTable, "/tmp/mnt");  // the tmpfs over the areev mount
  EXPECT_EQ(top.minor, 36u);
  EXPECT_EQ(MountIn("60 22 0:x / /m rw - fuse.areev areev rw\n", "/m").minor, 0u);
  EXPECT_EQ(MountIn("60 22 7 / /m rw - fuse.areev areev rw\n", "/m").minor, 0u);
}

TEST(MountTableTest, AFuseMountNamesItsOwner) {
  constexpr char kOwners[] =
      "50 22 0:40 / /m/a rw - fuse.areev areev rw,user_id=1000,group_id=1000,default_permissions\n"
      "51 22 0:41 / /m/b rw - fuse.areev areev rw,group_id=0,user_id=0\n"
      "52 22 0:42 / /m/c rw - fuse.areev areev rw,user_id=12x\n"
      "53 22 0:43 / /m/d rw - fuse.areev areev\n"
      "54 22 0:44 / /m/e rw - fuse.areev areev rw,user_id=\n";
  EXPECT_EQ(MountIn(kOwners, "/m/a").owner, std::optional<uid_t>(1000));
  EXPECT_EQ(MountIn(kOwners, "/m/b").owner, std::optional<uid_t>(0));
  EXPECT_EQ(MountIn(kOwners, "/m/c").owner, std::nullopt);  // not a number
  EXPECT_EQ(MountIn(kOwners, "/m/d").owner, std::nullopt);  // no super options
  EXPECT_EQ(MountIn(kOwners, "/m/e").owner, std::nullopt);
  EXPECT_EQ(MountIn(kOwners, "/m/d").type, "fuse.areev");
  EXPECT_EQ(MountIn(kTable, "/tmp/mnt").owner, std::nullopt);  // the tmpfs on top has none
  EXPECT_EQ(MountIn(kTable, "/").owner, std::nullopt);
}

TEST(MountTableTest, ThisProcessSeesItsRoot) {
  EXPECT_NE(MountAt("/").type, "");
  EXPECT_EQ(MountAt("/proc/self").type, "");
  EXPECT_EQ(MountAt("/proc/").type, "proc");
}

}  // namespace
}  // namespace fusefs
