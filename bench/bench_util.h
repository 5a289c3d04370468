// Shared helpers for areev's benchmarks: a scratch directory, a per-call
// timer with percentile statistics, store opening and workload files. Used
// only by the bench/ executables; not part of any library.
#ifndef BENCH_BENCH_UTIL_H_
#define BENCH_BENCH_UTIL_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "grainstore/options.h"
#include "grainstore/store.h"

namespace bench {

// A fresh directory under `parent` (made with mkdtemp), removed with its
// contents when the object is destroyed. Not copyable.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& parent);
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Order statistics over a sample of durations in nanoseconds.
struct Stats {
  std::size_t n = 0;
  double median_ns = 0;
  double p90_ns = 0;
  double p99_ns = 0;
  double mean_ns = 0;
  double total_ns = 0;
};
// Sorts a copy of `samples_ns`; an empty sample gives all zeros.
Stats Summarize(std::vector<double> samples_ns);

// Prints "12.3 µs"-style text for a duration in ns.
std::string FormatNs(double ns);

// Opens (creating) a store at `path` with the given durability; aborts the
// process with a message on failure (benchmarks have no recovery path).
std::unique_ptr<grainstore::Store> OpenStoreOrDie(const std::string& path,
                                                  grainstore::Durability durability);
// Resolves namespace `name`, aborting on failure.
grainstore::NsId NamespaceOrDie(grainstore::Store* store, std::string_view name);

// Parses "normal" / "full"; aborts on anything else.
grainstore::Durability ParseDurability(std::string_view text);
std::string_view DurabilityName(grainstore::Durability durability);

// Non-empty lines of a text file; aborts if it cannot be read.
std::vector<std::string> ReadLinesOrDie(const std::string& path);

// Writes `data` to `path`; aborts on failure.
void WriteFileOrDie(const std::string& path, std::string_view data);

// Prints `message` to stderr and exits with status 2.
[[noreturn]] void Die(std::string_view message);

}  // namespace bench

#endif  // BENCH_BENCH_UTIL_H_
