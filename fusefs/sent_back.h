// Which threads an open of a file another process deleted or moved has sent
// back (ESTALE) to look its path up again, so that their retry is let in.
//
// The kernel retries an open that got ESTALE once, looking every name of the
// path up afresh. The daemon cannot tell which name an open came by: the old
// one, which no longer leads to the file (the retry then finds the name gone
// or another file there), or one that still does (its new name, or a path
// with no name at all, such as /proc/self/fd/N). Each thread is therefore
// sent back once per file, and its next open of that file within the window
// is let in: that open comes from the retry, or from a fresh walk of a path
// that still leads to the file.
#ifndef FUSEFS_SENT_BACK_H_
#define FUSEFS_SENT_BACK_H_

#include <cstdint>
#include <mutex>
#include <vector>

#include "grainstore/types.h"

namespace fusefs {

class SentBack {
 public:
  // `window_ns`: how long a thread's retry is let in after it was sent back.
  explicit SentBack(std::int64_t window_ns) : window_ns_(window_ns) {}

  // Whether thread `tid`'s open of `node` at `now_ns` is let in (it was sent
  // back from `node` within the window: the record is used up). Otherwise
  // records it as sent back and returns false. Thread-safe.
  bool Admit(std::int64_t tid, grainstore::NodeId node, std::int64_t now_ns);

  static constexpr std::size_t kMaxRecords = 256;

 private:
  struct Record {
    std::int64_t tid;
    grainstore::NodeId node;
    std::int64_t at_ns;
  };
  const std::int64_t window_ns_;
  std::mutex mu_;
  std::vector<Record> records_;  // oldest first
};

}  // namespace fusefs

#endif  // FUSEFS_SENT_BACK_H_
