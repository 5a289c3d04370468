// What is mounted where: the kernel's mount table (/proc/self/mountinfo), for
// `areev mount` (never stack a second daemon on one mountpoint) and
// `areev umount` (say "not mounted" at once instead of retrying).
#ifndef FUSEFS_MOUNT_TABLE_H_
#define FUSEFS_MOUNT_TABLE_H_

#include <string>
#include <string_view>

namespace fusefs {

// The filesystem type ("fuse.areev", "ext4", ...) of the topmost mount on
// `mountpoint` (an absolute, normalised path) in `mountinfo`'s text, or ""
// when nothing is mounted there.
std::string MountTypeIn(std::string_view mountinfo, std::string_view mountpoint);

// `path` as the mount table names a mount on it: absolute, normalised, with
// symlinks resolved (a dead FUSE mount, which cannot be stat'ed, keeps the
// name it is reached by).
std::string ResolveMountPath(const std::string& path);

// MountTypeIn for this process's mount table and ResolveMountPath(path).
std::string MountTypeAt(const std::string& path);

}  // namespace fusefs

#endif  // FUSEFS_MOUNT_TABLE_H_
