// How much room the filesystem holding a path has left for this process:
// the one reading of statvfs that the store (a full disk opens a store as a
// snapshot) and the mount (a full disk refuses writes) share.
#ifndef GRAINSTORE_FREE_SPACE_H_
#define GRAINSTORE_FREE_SPACE_H_

#include <cstdint>
#include <optional>
#include <string>

namespace grainstore {

struct FreeSpace {
  // Bytes and inodes this process may still take: for root, what is free
  // (root may use the blocks reserved for it) less, on ext4, the blocks
  // the kernel keeps even from root; for others, what is available. nullopt when unknown: statvfs failed, or the filesystem
  // counts none (ramfs or a tmpfs of size=0 count no blocks, btrfs no
  // inodes).
  std::optional<std::uint64_t> bytes;
  std::optional<std::uint64_t> inodes;
};

// The free space of the filesystem holding `path`.
FreeSpace FreeSpaceAt(const std::string& path);

}  // namespace grainstore

#endif  // GRAINSTORE_FREE_SPACE_H_
