// Whether the store's filesystem has room for a write through the mount.
//
// A write() only fills the draft in memory; the disk is needed when the
// draft is sealed, at close() or fsync(). A program that ignores close()'s
// error would lose its write without a word: a shell's `echo x >> f`
// restores its output with dup2(), which closes the file and drops the
// error, and many programs exit without closing. A local filesystem fails
// the write() itself when the disk is full, so the mount does too: a write
// is refused with ENOSPC while the store's filesystem has less room than
// the write may need to be stored (twice its size, for the WAL and the
// checkpoint, plus kMarginBytes for the seal's pages).
//
// The free space is asked for (statvfs) at most every kRecheckNs while it
// is plentiful, and at every write once it is low.
#ifndef FUSEFS_SPACE_GUARD_H_
#define FUSEFS_SPACE_GUARD_H_

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

namespace fusefs {

class SpaceGuard {
 public:
  // Bytes this process may still write on the filesystem; nullopt when
  // unknown (the write is then let through).
  using FreeBytesFn = std::function<std::optional<std::uint64_t>()>;

  static constexpr std::uint64_t kMarginBytes = std::uint64_t{1} << 20;
  static constexpr std::uint64_t kPlentyBytes = std::uint64_t{256} << 20;
  static constexpr std::int64_t kRecheckNs = 100'000'000;  // 100 ms

  explicit SpaceGuard(FreeBytesFn free_bytes) : free_bytes_(std::move(free_bytes)) {}

  // The free bytes of the filesystem holding `path` (grainstore::FreeSpaceAt).
  static FreeBytesFn FreeBytesOf(std::string path);

  // Whether a write of `bytes` is refused, at monotonic time `now_ns`.
  // `first_refusal` is set when this refusal follows a write let through
  // (for one log line per spell of a full disk).
  bool Refuses(std::uint64_t bytes, std::int64_t now_ns, bool* first_refusal);
  // Whether a save of about `bytes` new bytes does not fit (a margin of
  // kMarginBytes kept), at monotonic time `now_ns`. Logs nothing.
  bool Lacks(std::uint64_t bytes, std::int64_t now_ns);
  // The free bytes last seen.
  std::uint64_t last_free() const;

 private:
  // Whether fewer than `needed` bytes are free, asked again unless a
  // recent answer had plenty to spare (mu_ held).
  bool BelowLocked(std::uint64_t needed, std::int64_t now_ns);

  FreeBytesFn free_bytes_;
  mutable std::mutex mu_;
  bool checked_ = false;
  std::int64_t checked_ns_ = 0;
  std::uint64_t free_ = 0;
  bool refusing_ = false;
};

}  // namespace fusefs

#endif  // FUSEFS_SPACE_GUARD_H_
