#include "memory_populator.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <system_error>
#include <thread>

namespace grainstore {

void MemoryPopulator::Request(char* to) {
  char* old = target_.load();
  while (old < to && !target_.compare_exchange_weak(old, to)) {
  }
  if (old >= to) return;  // already asked for
  const int me = static_cast<int>(getpid());
  int runner = runner_pid_.load();
  if (runner == me) return;  // this process's thread will see the new target
  // None runs here: 0, or the pid of the parent this process was forked from.
  if (!runner_pid_.compare_exchange_strong(runner, me)) return;
  try {
    std::thread([this] { Run(); }).detach();
  } catch (const std::system_error&) {
    runner_pid_.store(0);  // no thread: the pages fault when touched
  }
}

void MemoryPopulator::Run() {
  const int me = static_cast<int>(getpid());
  for (;;) {
    char* from = done_.load();
    char* to = target_.load();
    if (from < to) {
      (void)madvise(from, static_cast<std::size_t>(to - from), MADV_POPULATE_WRITE);
      done_.store(to);
      continue;
    }
    runner_pid_.store(0);
    // A Request that raised the target after the load above saw this thread
    // still running and left the work to it; take it back, unless that
    // Request's own check already started another thread.
    if (target_.load() <= done_.load()) return;
    int none = 0;
    if (!runner_pid_.compare_exchange_strong(none, me)) return;
  }
}

}  // namespace grainstore
