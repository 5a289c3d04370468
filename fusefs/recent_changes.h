// Which paths another process changed lately. Opens of such a file bypass
// the kernel's page cache (direct I/O), because another process changes a
// file in place (the memory tool's edits keep the node, and so the inode):
// a cached read fills its pages from a FUSE READ but cuts them to the size
// the kernel last took from an attribute reply, and the kernel drops that
// reply, keeping the old size, when an invalidation for the file landed
// while it was on its way. With edits coming faster than the reads, a read
// of a shorter version then comes back padded with NUL bytes, a longer one
// cut. A direct read returns what the daemon sent, one whole version.
#ifndef FUSEFS_RECENT_CHANGES_H_
#define FUSEFS_RECENT_CHANGES_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace fusefs {

// Thread-safe; its mutex is a leaf (taken with an inode's held, never
// holding another).
class RecentChanges {
 public:
  // `window_ns`: how long after its last change a path counts as recent.
  explicit RecentChanges(std::int64_t window_ns) : window_ns_(window_ns) {}

  // Another process changed `key` at `now_ns`.
  void Note(std::string_view key, std::int64_t now_ns);
  // Whether `key` changed within the window before `now_ns`.
  bool Recent(std::string_view key, std::int64_t now_ns) const;
  // Paths remembered (expired ones go when the map grows).
  std::size_t size() const;

  // The map is swept of expired paths when it holds this many.
  static constexpr std::size_t kSweepAt = 1024;

 private:
  // Looks keys up by string_view: an open asks for every file it opens, and
  // a lookup must not copy the path.
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view key) const noexcept {
      return std::hash<std::string_view>{}(key);
    }
  };

  const std::int64_t window_ns_;
  mutable std::mutex mu_;  // guards the two below
  // key -> last change
  std::unordered_map<std::string, std::int64_t, KeyHash, std::equal_to<>> changed_;
  std::size_t sweep_at_ = kSweepAt;
};

}  // namespace fusefs

#endif  // FUSEFS_RECENT_CHANGES_H_
