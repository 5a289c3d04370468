#include "connection_abort.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace fusefs {
namespace {

constexpr char kConnections[] = "/sys/fs/fuse/connections";

}  // namespace

std::string ConnectionName(const MountEntry& mount) {
  return fmt::format("{}", (mount.major << 20) | mount.minor);
}

bool AbortConnection(const MountEntry& mount, std::string* error) {
  const std::string dir = fmt::format("{}/{}", kConnections, ConnectionName(mount));
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 && MountAt(kConnections).type != "fusectl" &&
      ::mount("fusectl", kConnections, "fusectl", 0, nullptr) != 0 && errno != EBUSY) {
    *error = fmt::format("cannot mount the fusectl filesystem on {}: {}", kConnections,
                         std::strerror(errno));
    return false;
  }
  const std::string abort = dir + "/abort";
  const int fd = ::open(abort.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = errno == ENOENT
                 ? fmt::format("its connection is not in {} (the daemon is gone)", kConnections)
                 : fmt::format("cannot open {}: {}", abort, std::strerror(errno));
    return false;
  }
  const bool written = ::write(fd, "1", 1) == 1;
  const int write_errno = errno;
  ::close(fd);
  if (!written) {
    *error = fmt::format("cannot write {}: {}", abort, std::strerror(write_errno));
    return false;
  }
  return true;
}

}  // namespace fusefs
