#include "space_guard.h"

#include <utility>

#include "grainstore/free_space.h"

namespace fusefs {

SpaceGuard::FreeBytesFn SpaceGuard::FreeBytesOf(std::string path) {
  return [path = std::move(path)] { return grainstore::FreeSpaceAt(path).bytes; };
}

bool SpaceGuard::Refuses(std::uint64_t bytes, std::int64_t now_ns, bool* first_refusal) {
  *first_refusal = false;
  const std::uint64_t needed = kMarginBytes + 2 * bytes;
  std::lock_guard lock(mu_);
  const bool fresh = checked_ && now_ns - checked_ns_ < kRecheckNs;
  if (fresh && free_ >= kPlentyBytes + needed) return false;
  std::optional<std::uint64_t> free = free_bytes_();
  if (!free) return false;
  checked_ = true;
  checked_ns_ = now_ns;
  free_ = *free;
  const bool refuse = free_ < needed;
  *first_refusal = refuse && !refusing_;
  refusing_ = refuse;
  return refuse;
}

std::uint64_t SpaceGuard::last_free() const {
  std::lock_guard lock(mu_);
  return free_;
}

}  // namespace fusefs
