// What is mounted where: the kernel's mount table (/proc/self/mountinfo), for
// `areev mount` (never stack a second daemon on one mountpoint) and
// `areev umount` (say "not mounted" at once instead of retrying).
#ifndef FUSEFS_MOUNT_TABLE_H_
#define FUSEFS_MOUNT_TABLE_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

namespace fusefs {

// The topmost mount on a path.
struct MountEntry {
  std::string type;  // "fuse.areev", "ext4", ...; "" when nothing is mounted there
  // A FUSE mount's owner (its user_id= option): fusermount3 lets only that
  // user, or root, unmount it.
  std::optional<uid_t> owner;
  // The mount's device ("major:minor" in mountinfo). A FUSE mount's minor
  // number names its connection in /sys/fs/fuse/connections.
  unsigned major = 0;
  unsigned minor = 0;
};

// The topmost mount on `mountpoint` (an absolute, normalised path) in
// `mountinfo`'s text.
MountEntry MountIn(std::string_view mountinfo, std::string_view mountpoint);

// `path` as the mount table names a mount on it: absolute, normalised, with
// symlinks resolved. A last name the mount table lists is never stat'ed (a
// dead FUSE mount cannot be; a stopped daemon's would wait), and keeps the
// name it is reached by.
std::string ResolveMountPath(const std::string& path);

// MountIn for this process's mount table and ResolveMountPath(path).
MountEntry MountAt(const std::string& path);

}  // namespace fusefs

#endif  // FUSEFS_MOUNT_TABLE_H_
