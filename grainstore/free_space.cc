#include "grainstore/free_space.h"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <system_error>

#include <fmt/format.h>

namespace grainstore {

namespace {

constexpr long kExt4Magic = 0xEF53;  // ext2, ext3 and ext4 alike

// The blocks of an ext4 filesystem that not even root may take, which it
// counts in f_bfree all the same: the kernel keeps 2% of them, or 4096,
// whichever is fewer, for metadata it must never fail to allocate, and says
// how many in /sys/fs/ext4/DEVICE/reserved_clusters. Where that cannot be
// read, 2% of the blocks statvfs counts (which leave out the filesystem's
// own overhead) and a little more.
std::uint64_t Ext4ReservedBlocks(const std::string& path, const struct statvfs& st) {
  struct statfs fs {};
  struct stat file {};
  if (::statfs(path.c_str(), &fs) != 0 || fs.f_type != kExt4Magic) return 0;
  if (::stat(path.c_str(), &file) == 0) {
    std::error_code ec;
    const auto device = std::filesystem::read_symlink(
        fmt::format("/sys/dev/block/{}:{}", major(file.st_dev), minor(file.st_dev)), ec);
    std::ifstream sysfs(
        fmt::format("/sys/fs/ext4/{}/reserved_clusters", device.filename().string()));
    std::uint64_t clusters = 0;
    if (!ec && sysfs >> clusters) return clusters;
  }
  return std::min<std::uint64_t>(st.f_blocks / 40, 4096);
}

}  // namespace

FreeSpace FreeSpaceAt(const std::string& path) {
  struct statvfs st {};
  if (::statvfs(path.c_str(), &st) != 0) return {};
  const bool root = ::geteuid() == 0;
  FreeSpace free;
  if (st.f_blocks != 0) {
    std::uint64_t blocks = root ? st.f_bfree : st.f_bavail;
    if (root) blocks -= std::min(blocks, Ext4ReservedBlocks(path, st));
    free.bytes = blocks * st.f_frsize;
  }
  if (st.f_files != 0) free.inodes = root ? st.f_ffree : st.f_favail;
  return free;
}

}  // namespace grainstore
