// Faults anonymous memory in ahead of its use, on a thread of its own, so
// that the thread which later touches the memory does not wait for the
// fault. A huge-page fault zeroes 2 MiB at once; on a virtual machine whose
// host has taken back the guest's free memory (free page reporting hands it
// back in 2 MiB blocks, the size a huge page needs) the host must fault each
// block in again first, and one such fault took 16-60 ms where a 4 KiB fault
// takes a few microseconds (docs/performance.md, "Huge-page faults off the
// writer's path").
#ifndef GRAINSTORE_MEMORY_POPULATOR_H_
#define GRAINSTORE_MEMORY_POPULATOR_H_

#include <atomic>

namespace grainstore {

// Populates [start, target) with MADV_POPULATE_WRITE, which faults pages in
// writable without changing what they hold, so memory already in use is
// safe to populate. A hint only: a kernel without it, or a failure, leaves
// the pages to fault when touched, as without this.
//
// The thread is started by a Request that raises the target while none runs
// in this process, and ends once it has caught up. A child of fork() does not
// inherit it; its next raising Request starts one there. Thread-safe; never
// destroyed while a thread may run (the owner is leaked, as the arena is).
class MemoryPopulator {
 public:
  explicit MemoryPopulator(char* start) : done_(start), target_(start) {}
  MemoryPopulator(const MemoryPopulator&) = delete;
  MemoryPopulator& operator=(const MemoryPopulator&) = delete;

  // Asks for everything below `to` to be populated. Returns at once.
  void Request(char* to);

  // The end of what has been populated so far. For tests.
  char* done() const { return done_.load(); }

 private:
  void Run();

  std::atomic<char*> done_;
  std::atomic<char*> target_;
  std::atomic<int> runner_pid_{0};  // the process whose thread runs; 0: none
};

}  // namespace grainstore

#endif  // GRAINSTORE_MEMORY_POPULATOR_H_
