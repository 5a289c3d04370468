#include "space_guard.h"

#include <utility>

#include "grainstore/free_space.h"

namespace fusefs {

SpaceGuard::FreeBytesFn SpaceGuard::FreeBytesOf(std::string path) {
  return [path = std::move(path)] { return grainstore::FreeSpaceAt(path).bytes; };
}

bool SpaceGuard::BelowLocked(std::uint64_t needed, std::int64_t now_ns) {
  const bool fresh = checked_ && now_ns - checked_ns_ < kRecheckNs;
  if (fresh && free_ >= kPlentyBytes + needed) return false;
  std::optional<std::uint64_t> free = free_bytes_();
  if (!free) return false;
  checked_ = true;
  checked_ns_ = now_ns;
  free_ = *free;
  return free_ < needed;
}

bool SpaceGuard::Refuses(std::uint64_t bytes, std::int64_t now_ns, bool* first_refusal) {
  *first_refusal = false;
  std::lock_guard lock(mu_);
  const bool refuse = BelowLocked(kMarginBytes + 2 * bytes, now_ns);
  *first_refusal = refuse && !refusing_;
  refusing_ = refuse;
  return refuse;
}

bool SpaceGuard::Lacks(std::uint64_t bytes, std::int64_t now_ns) {
  std::lock_guard lock(mu_);
  return BelowLocked(kMarginBytes + bytes, now_ns);
}

std::uint64_t SpaceGuard::last_free() const {
  std::lock_guard lock(mu_);
  return free_;
}

}  // namespace fusefs
