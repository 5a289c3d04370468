#include "grainstore/free_space.h"

#include <sys/statvfs.h>
#include <unistd.h>

namespace grainstore {

FreeSpace FreeSpaceAt(const std::string& path) {
  struct statvfs st {};
  if (::statvfs(path.c_str(), &st) != 0) return {};
  const bool root = ::geteuid() == 0;
  FreeSpace free;
  if (st.f_blocks != 0) {
    free.bytes = std::uint64_t{root ? st.f_bfree : st.f_bavail} * st.f_frsize;
  }
  if (st.f_files != 0) free.inodes = root ? st.f_ffree : st.f_favail;
  return free;
}

}  // namespace grainstore
