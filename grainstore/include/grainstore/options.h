// Options for opening a Store.
#ifndef GRAINSTORE_OPTIONS_H_
#define GRAINSTORE_OPTIONS_H_

#include <cstdint>

namespace grainstore {

enum class Durability : std::uint8_t {
  // WAL + synchronous=NORMAL: an acknowledged write survives a process crash;
  // the last commits may be lost on power failure.
  kNormal = 0,
  // WAL + synchronous=FULL: every acknowledged write is fsync'd.
  kFull = 1,
};

struct Limits {
  // Largest body a file version may have. Larger writes fail with TooLarge.
  static constexpr std::uint64_t kMaxBodyBytes = 128ull << 20;
};

struct Options {
  Durability durability = Durability::kNormal;
  // How long a writer waits for another process's write lock before Busy.
  int busy_timeout_ms = 30000;
  bool create_if_missing = true;
  // A versioned path vacated through the mount (unlink, rename to a temp
  // name) keeps its chain "revivable" this long: a create or rename into the
  // same path within the window continues the chain (editor save dances).
  std::int64_t revive_window_ns = 10'000'000'000;  // 10 s
};

}  // namespace grainstore

#endif  // GRAINSTORE_OPTIONS_H_
