// Which threads an open of a file another process deleted or moved has sent
// back (ESTALE) to look its path up again, so that their retry is let in.
//
// The kernel retries an open that got ESTALE once, looking every name of the
// path up afresh. The daemon cannot tell which name an open came by: the old
// one, which no longer leads to the file, or one that still does (a new
// name, or a path with no name at all, such as /proc/self/fd/N). A thread
// sent back holds a pass that its retry uses: the retry's open is let in
// whichever file it reaches (the file the path leads to now, which may
// itself have been moved or deleted a moment ago: the kernel would not retry
// a second time). A lookup by the thread that finds nothing sets the pass
// aside (the retry ends in ENOENT), unless the kernel, having dropped the
// name, looks the same name up again and finds a file, or the request that
// follows makes that very name (a create, mkdir or rename onto a new name
// looks it up first); an open of a file nobody changed, or a create
// elsewhere, uses the pass up. So no later open by some other stale name
// gets in with it.
//
// Requests that make or remove a name in a directory another process just
// moved or deleted (Filesystem::SendsBackName), and truncates by path
// (Filesystem::SendsBackNode), are sent back the same way: the kernel
// retries those system calls on ESTALE too.
#ifndef FUSEFS_SENT_BACK_H_
#define FUSEFS_SENT_BACK_H_

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace fusefs {

class SentBack {
 public:
  // `window_ns`: how long a pass lasts; the kernel retries at once.
  explicit SentBack(std::int64_t window_ns) : window_ns_(window_ns) {}

  // For an open by thread `tid` at `now_ns` of a file another process has
  // just deleted or moved: true (the pass is used up) when the thread holds
  // a pass in force; otherwise gives it a new one and returns false (send
  // it back). For a request that makes name `name` in directory `parent`,
  // a pass set aside by a lookup of that very name counts as in force.
  bool Admit(std::int64_t tid, std::int64_t now_ns, std::uint64_t parent = 0,
             std::string_view name = {});
  // A lookup by `tid` of `name` in directory `parent` found nothing (true)
  // or a file (false).
  void Looked(std::int64_t tid, std::uint64_t parent, std::string_view name, bool found);
  // Uses up `tid`'s pass, if any. Cheap when no pass is held.
  void UseUp(std::int64_t tid);
  // Whether `tid` holds a pass at `now_ns` (in force, or set aside by a
  // lookup of `name` in `parent`): its request is then the kernel's one
  // retry, and sending it back again would fail the system call with ESTALE.
  bool Holds(std::int64_t tid, std::int64_t now_ns, std::uint64_t parent,
             std::string_view name);

  static constexpr std::size_t kMaxPasses = 256;

 private:
  struct Pass {
    std::int64_t tid;
    std::int64_t at_ns;
    bool in_force = true;
    std::uint64_t missed_parent = 0;  // set aside by a lookup of this name
    std::string missed_name;
  };
  const std::int64_t window_ns_;
  std::mutex mu_;
  std::vector<Pass> passes_;  // oldest first
};

}  // namespace fusefs

#endif  // FUSEFS_SENT_BACK_H_
