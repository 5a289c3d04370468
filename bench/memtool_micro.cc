// Micro-benchmarks of memtool::MemoryTool::Execute on a real temp-file
// SQLite store, timed per call (steady_clock) and summarised by median.
//
//   memtool_micro [--dir SCRATCH_PARENT] [--quick]
//                 [--only versions|size|size-interleaved|every-file|edits-by-size|large-edits|
//                         writes|writes-normal|creates]
//
// Prints a markdown table: view of a file against its number of versions
// (1..10,000; one file per depth, viewed in interleaved rounds) and against the number of files in the store
// (100..100,000), views of directories, a view of /memories over 10,000
// files, str_replace throughput against the number of files in the store
// (1,000..100,000, the store cached whole by the process), and single-thread
// write throughput (create, str_replace, insert) with Durability::kNormal and
// kFull. --quick shrinks the sizes for a smoke
// run (its numbers are not the recorded ones).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/core.h>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>  // no-ops outside valgrind
#else
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#endif

#include "bench_util.h"
#include "grainstore/store.h"
#include "memtool/memtool.h"

namespace {

using grainstore::Durability;

struct Config {
  std::string dir = ".";
  bool quick = false;
  std::string only;  // empty: every section

  bool Wants(const char* section) const { return only.empty() || only == section; }
};

// A table row, printed as markdown.
void Row(const std::string& name, const bench::Stats& s, const std::string& goal,
         const std::string& verdict) {
  std::printf("| %s | %zu | %s | %s | %s | %s | %s |\n", name.c_str(), s.n,
              bench::FormatNs(s.median_ns).c_str(), bench::FormatNs(s.p90_ns).c_str(),
              bench::FormatNs(s.p99_ns).c_str(), goal.c_str(), verdict.c_str());
  std::fflush(stdout);
}

std::string Verdict(bool met) { return met ? "met" : "NOT met"; }

// The lowest and highest median over the levels of one benchmark.
struct Spread {
  double lo = 1e18;
  double hi = 0;
  void Add(double median_ns) {
    lo = std::min(lo, median_ns);
    hi = std::max(hi, median_ns);
  }
};

// The row for the flatness of views over `what` (max/min median; goal 1.5x).
void FlatnessRow(const std::string& what, const Spread& spread) {
  const double ratio = spread.hi / spread.lo;
  std::printf("| flatness over %s (max/min median) | | %.2fx | | | <= 1.5x | %s |\n", what.c_str(),
              ratio, Verdict(ratio <= 1.5).c_str());
  std::fflush(stdout);
}

// Times Execute over `cmds`, cycling until `iterations` calls; the first
// `warmup` calls are not recorded. Any error result aborts: a benchmark of
// failing calls would be meaningless. Returns one sample (ns) per call.
std::vector<double> TimeSamples(memtool::MemoryTool* tool, const std::vector<std::string>& cmds,
                                std::size_t iterations, std::size_t warmup) {
  std::vector<double> samples;
  samples.reserve(iterations);
  for (std::size_t i = 0; i < iterations + warmup; ++i) {
    const std::string& cmd = cmds[i % cmds.size()];
    std::int64_t t0 = bench::NowNs();
    memtool::ToolResult r = tool->Execute(cmd);
    std::int64_t t1 = bench::NowNs();
    if (r.is_error) bench::Die("command failed: " + cmd.substr(0, 200) + " -> " + r.content);
    if (i >= warmup) samples.push_back(static_cast<double>(t1 - t0));
  }
  return samples;
}

bench::Stats TimeExecute(memtool::MemoryTool* tool, const std::vector<std::string>& cmds,
                         std::size_t iterations, std::size_t warmup) {
  return bench::Summarize(TimeSamples(tool, cmds, iterations, warmup));
}

// A ~1 KiB markdown body of 20 lines whose line `j` carries token "<tag:j>".
std::string Body(const std::string& tag, int lines = 20) {
  std::string body;
  for (int j = 0; j < lines; ++j) {
    body += fmt::format("- <{}:{}> user prefers concise answers; review api design\n", tag, j);
  }
  return body;
}

std::string JsonText(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') out += "\\n";
    else if (c == '"' || c == '\\') out += std::string("\\") + c;
    else out += c;
  }
  return out;
}

std::string ViewCmd(const std::string& path) {
  return fmt::format(R"({{"command":"view","path":"{}"}})", path);
}

void PutOrDie(grainstore::Store* store, grainstore::NsId ns, const std::string& key,
              const std::string& body) {
  auto r = store->PutFile(ns, key, body);
  if (!r.has_value()) bench::Die("PutFile " + key + ": " + r.error().ToString());
}

std::string FileKey(int i) { return fmt::format("/memories/d{}/f{}.md", i / 100, i); }

// Writes files FileKey(from) .. FileKey(to - 1) with Body("f<i>").
void FillFiles(grainstore::Store* store, grainstore::NsId ns, int from, int to) {
  for (int i = from; i < to; ++i) PutOrDie(store, ns, FileKey(i), Body(fmt::format("f{}", i)));
}

// A fill leaves a long WAL behind; copy it into the database now, so the
// background checkpoint does not share the cores with the timed calls.
void SyncOrDie(grainstore::Store* store) {
  if (grainstore::Status synced = store->Sync(); !synced.ok()) {
    bench::Die("sync after fill: " + synced.ToString());
  }
}

// A small linear congruential generator: the same picks on every run.
class Lcg {
 public:
  explicit Lcg(std::uint64_t seed) : seed_(seed) {}
  int Next(int bound) {
    seed_ = seed_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((seed_ >> 33) % static_cast<std::uint64_t>(bound));
  }

 private:
  std::uint64_t seed_;
};

// Views of min(files, count) distinct files of a store of `files` files, in
// random order (a partial Fisher-Yates shuffle; whole when count >= files).
std::vector<std::string> DistinctViews(int files, Lcg* rng, int count = 1000) {
  std::vector<int> order(static_cast<std::size_t>(files));
  std::iota(order.begin(), order.end(), 0);
  std::vector<std::string> views;
  for (int i = 0; i < std::min(files, count); ++i) {
    auto& a = order[static_cast<std::size_t>(i)];
    std::swap(a, order[static_cast<std::size_t>(i + rng->Next(files - i))]);
    views.push_back(ViewCmd(FileKey(a)));
  }
  return views;
}

// Views of 1,000 files picked at random (with repeats) from a store of `files`.
std::vector<std::string> RandomViews(int files, Lcg* rng) {
  std::vector<std::string> views;
  for (int k = 0; k < 1000; ++k) views.push_back(ViewCmd(FileKey(rng->Next(files))));
  return views;
}

// One file per depth (1..10,000 versions), viewed in interleaved rounds so
// that the host's speed drifting during the run falls on every depth alike.
void BenchVersions(const Config& cfg) {
  bench::ScratchDir scratch(cfg.dir);
  auto store = bench::OpenStoreOrDie(scratch.path() + "/agent.db", Durability::kNormal);
  grainstore::NsId ns = bench::NamespaceOrDie(store.get(), "bench");
  memtool::MemoryTool tool(store.get(), ns);
  std::vector<int> levels = cfg.quick ? std::vector<int>{1, 10, 100}
                                      : std::vector<int>{1, 10, 100, 1000, 10000};
  std::vector<std::string> cmds;
  for (int level : levels) {
    const std::string key = fmt::format("/memories/notes/versioned-{}.md", level);
    for (int v = 0; v < level; ++v) PutOrDie(store.get(), ns, key, Body(fmt::format("v{}", v)));
    cmds.push_back(ViewCmd(key));
  }
  const int rounds = 5;
  const std::size_t per_round = cfg.quick ? 100 : 1000;
  std::vector<std::vector<double>> samples(levels.size());
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t i = 0; i < levels.size(); ++i) {
      std::vector<double> round = TimeSamples(&tool, {cmds[i]}, per_round, r == 0 ? 200 : 20);
      samples[i].insert(samples[i].end(), round.begin(), round.end());
    }
  }
  Spread spread;
  for (std::size_t i = 0; i < levels.size(); ++i) {
    bench::Stats s = bench::Summarize(std::move(samples[i]));
    spread.Add(s.median_ns);
    Row(fmt::format("view file, {} version(s)", levels[i]), s, "< 10 us", Verdict(s.median_ns < 10e3));
  }
  FlatnessRow("versions", spread);
}

void BenchStoreSize(const Config& cfg) {
  bench::ScratchDir scratch(cfg.dir);
  auto store = bench::OpenStoreOrDie(scratch.path() + "/agent.db", Durability::kNormal);
  grainstore::NsId ns = bench::NamespaceOrDie(store.get(), "bench");
  memtool::MemoryTool tool(store.get(), ns);
  for (int j = 0; j < 10; ++j) PutOrDie(store.get(), ns, fmt::format("/memories/small/f{}.md", j), Body("s"));
  std::vector<int> levels = cfg.quick ? std::vector<int>{100, 1000}
                                      : std::vector<int>{100, 1000, 10000, 100000};
  int written = 0;
  Spread firsts_spread, repeats_spread;
  Lcg rng(12345);
  for (int level : levels) {
    std::int64_t t0 = bench::NowNs();
    FillFiles(store.get(), ns, written, level);
    written = level;
    double fill_s = static_cast<double>(bench::NowNs() - t0) / 1e9;
    SyncOrDie(store.get());
    // First views: distinct files, each viewed once since the fill's last
    // write, so none is in the Store's read cache.
    std::vector<std::string> firsts = DistinctViews(level, &rng);
    bench::Stats f = TimeExecute(&tool, firsts, firsts.size(), 0);
    firsts_spread.Add(f.median_ns);
    Row(fmt::format("view file, first view, store of {} files (fill {:.1f} s)", level, fill_s), f,
        "< 10 us", Verdict(f.median_ns < 10e3));
    // Repeated views: 1,000 random picks, cycled.
    bench::Stats s = TimeExecute(&tool, RandomViews(level, &rng), cfg.quick ? 500 : 5000, 200);
    repeats_spread.Add(s.median_ns);
    Row(fmt::format("view file, repeated views, store of {} files", level), s, "< 10 us",
        Verdict(s.median_ns < 10e3));
    bench::Stats small = TimeExecute(&tool, {ViewCmd("/memories/small")}, cfg.quick ? 200 : 2000, 50);
    Row(fmt::format("view dir of 10 files, store of {} files", level), small, "< 50 us",
        Verdict(small.median_ns < 50e3));
    bench::Stats dir100 = TimeExecute(&tool, {ViewCmd("/memories/d0")}, cfg.quick ? 100 : 1000, 20);
    Row(fmt::format("view dir of 100 files, store of {} files", level), dir100, "(< 50 us)",
        Verdict(dir100.median_ns < 50e3));
    if (level == 10000 || (cfg.quick && level == 1000)) {
      bench::Stats root = TimeExecute(&tool, {ViewCmd("/memories")}, 30, 3);
      Row(fmt::format("view /memories, {} files listed at depth 2", level), root, "< 20 ms",
          Verdict(root.median_ns < 20e6));
    }
  }
  FlatnessRow("store size, first views", firsts_spread);
  FlatnessRow("store size, repeated views", repeats_spread);
}

// The same first and repeated views as BenchStoreSize, over four stores of
// 100 to 100,000 files that are all open at once, viewed in interleaved
// rounds: the host's speed drifting during the run then falls on every size
// alike (BenchStoreSize measures each size in its own few milliseconds), and
// no store is viewed right after the fill that wrote it.
void BenchStoreSizeInterleaved(const Config& cfg) {
  bench::ScratchDir scratch(cfg.dir);
  const std::vector<int> levels = cfg.quick ? std::vector<int>{100, 1000}
                                            : std::vector<int>{100, 1000, 10000, 100000};
  struct Level {
    std::unique_ptr<grainstore::Store> store;
    std::unique_ptr<memtool::MemoryTool> tool;
    std::vector<std::string> firsts;   // distinct files, each viewed once
    std::vector<std::string> repeats;  // random picks, cycled
    std::vector<double> first_ns, repeat_ns;
  };
  std::vector<Level> stores(levels.size());
  Lcg rng(12345);
  for (std::size_t i = 0; i < levels.size(); ++i) {
    const int level = levels[i];
    Level& l = stores[i];
    l.store = bench::OpenStoreOrDie(fmt::format("{}/agent-{}.db", scratch.path(), level), Durability::kNormal);
    grainstore::NsId ns = bench::NamespaceOrDie(l.store.get(), "bench");
    l.tool = std::make_unique<memtool::MemoryTool>(l.store.get(), ns);
    FillFiles(l.store.get(), ns, 0, level);
    SyncOrDie(l.store.get());
    l.firsts = DistinctViews(level, &rng);
    l.repeats = RandomViews(level, &rng);
  }
  // Every first view comes before the repeated views, which would otherwise
  // put files of the small stores in their read caches.
  const std::size_t rounds = 5;
  for (std::size_t r = 0; r < rounds; ++r) {
    for (Level& l : stores) {
      const std::size_t per = l.firsts.size() / rounds;
      std::vector<std::string> slice(l.firsts.begin() + static_cast<long>(r * per),
                                     l.firsts.begin() + static_cast<long>((r + 1) * per));
      std::vector<double> got = TimeSamples(l.tool.get(), slice, slice.size(), 0);
      l.first_ns.insert(l.first_ns.end(), got.begin(), got.end());
    }
  }
  for (std::size_t r = 0; r < rounds; ++r) {
    for (Level& l : stores) {
      std::vector<double> got = TimeSamples(l.tool.get(), l.repeats, cfg.quick ? 100 : 1000, 20);
      l.repeat_ns.insert(l.repeat_ns.end(), got.begin(), got.end());
    }
  }
  Spread firsts_spread, repeats_spread;
  for (std::size_t i = 0; i < levels.size(); ++i) {
    bench::Stats f = bench::Summarize(std::move(stores[i].first_ns));
    bench::Stats s = bench::Summarize(std::move(stores[i].repeat_ns));
    firsts_spread.Add(f.median_ns);
    repeats_spread.Add(s.median_ns);
    Row(fmt::format("view file, first view, store of {} files, four stores interleaved", levels[i]), f,
        "< 10 us", Verdict(f.median_ns < 10e3));
    Row(fmt::format("view file, repeated views, store of {} files, four stores interleaved", levels[i]), s,
        "< 10 us", Verdict(s.median_ns < 10e3));
  }
  FlatnessRow("store size, first views, interleaved", firsts_spread);
  FlatnessRow("store size, repeated views, interleaved", repeats_spread);
}

// A view of every file of one store once, in random order, at 1,000 and at
// 100,000 files: first views only (the read cache never holds a file twice
// viewed here), many more of them than BenchStoreSizeInterleaved takes. Run
// under callgrind, only the views are instrumented:
//   valgrind --tool=callgrind --cache-sim=yes --instr-atstart=no ...
// counts their instructions and simulated cache misses (the fills run
// uninstrumented), as docs/performance.md records.
void BenchEveryFileOnce(const Config& cfg) {
  for (int files : cfg.quick ? std::vector<int>{1000, 10000} : std::vector<int>{1000, 100000}) {
    bench::ScratchDir scratch(cfg.dir);
    auto store = bench::OpenStoreOrDie(fmt::format("{}/every-{}.db", scratch.path(), files),
                                       Durability::kNormal);
    grainstore::NsId ns = bench::NamespaceOrDie(store.get(), "bench");
    memtool::MemoryTool tool(store.get(), ns);
    FillFiles(store.get(), ns, 0, files);
    SyncOrDie(store.get());
    Lcg rng(7);
    const std::vector<std::string> views = DistinctViews(files, &rng, files);
    CALLGRIND_START_INSTRUMENTATION;
    std::vector<double> samples = TimeSamples(&tool, views, views.size(), 0);
    CALLGRIND_STOP_INSTRUMENTATION;
    Row(fmt::format("view file, first view of every file once, store of {} files", files),
        bench::Summarize(std::move(samples)), "< 10 us", "");
  }
}

// str_replace on random files of a store that grows from 1,000 to 100,000
// files: a long-lived process (the mount, a binding's host) holds the whole
// store in its page cache, and an edit should not slow down with it.
void BenchEditsBySize(const Config& cfg) {
  bench::ScratchDir scratch(cfg.dir);
  auto store = bench::OpenStoreOrDie(scratch.path() + "/agent.db", Durability::kNormal);
  grainstore::NsId ns = bench::NamespaceOrDie(store.get(), "bench");
  memtool::MemoryTool tool(store.get(), ns);
  std::vector<int> levels = cfg.quick ? std::vector<int>{1000} : std::vector<int>{1000, 10000, 100000};
  const int edits = cfg.quick ? 1000 : 10000;
  constexpr int kLines = 20;  // Body()'s lines, each replaced at most once
  std::vector<int> replaced;  // per file: lines replaced so far
  Lcg rng(777);
  int written = 0;
  for (int level : levels) {
    FillFiles(store.get(), ns, written, level);
    written = level;
    replaced.resize(static_cast<std::size_t>(level), 0);
    SyncOrDie(store.get());
    std::vector<std::string> cmds;
    while (static_cast<int>(cmds.size()) < edits) {
      const int f = rng.Next(level);
      int& line = replaced[static_cast<std::size_t>(f)];
      if (line == kLines) continue;
      cmds.push_back(fmt::format(R"({{"command":"str_replace","path":"{}","old_str":"<f{}:{}>","new_str":"[f{}:{}]"}})",
                                 FileKey(f), f, line, f, line));
      ++line;
    }
    std::int64_t t0 = bench::NowNs();
    bench::Stats s = TimeExecute(&tool, cmds, cmds.size(), 0);
    const double rate = static_cast<double>(cmds.size()) / (static_cast<double>(bench::NowNs() - t0) / 1e9);
    std::printf("| str_replace on random files, store of %d files (normal) | %zu | %s | %s | %s | >= 10,000/s | %.0f/s %s |\n",
                level, s.n, bench::FormatNs(s.median_ns).c_str(), bench::FormatNs(s.p90_ns).c_str(),
                bench::FormatNs(s.p99_ns).c_str(), rate, Verdict(rate >= 10000).c_str());
    std::fflush(stdout);
  }
}

// str_replace of one line in the middle of a large file, again and again
// (an agent revising a long note): time per edit, and the store's growth per
// version once checkpointed (the database file's size; versions stored whole
// grow it by the file's size each, splices by the changed bytes).
void BenchLargeFileEdits(const Config& cfg) {
  const int edits = cfg.quick ? 100 : 500;
  for (int kib : {4, 64, 1024}) {
    bench::ScratchDir scratch(cfg.dir);
    const std::string db = scratch.path() + "/agent.db";
    auto store = bench::OpenStoreOrDie(db, Durability::kNormal);
    grainstore::NsId ns = bench::NamespaceOrDie(store.get(), "bench");
    memtool::MemoryTool tool(store.get(), ns);
    std::string body;
    for (int line = 0; static_cast<int>(body.size()) < kib * 1024; ++line) {
      body += fmt::format("<l{}> a line of the agent's long note, kept for later\n", line);
    }
    PutOrDie(store.get(), ns, "/memories/long.md", body);
    SyncOrDie(store.get());
    const auto db_size = [&]() {
      std::error_code ec;
      return static_cast<double>(std::filesystem::file_size(db, ec));
    };
    const double before = db_size();
    const int lines = static_cast<int>(std::count(body.begin(), body.end(), '\n'));
    std::vector<std::string> cmds;
    for (int i = 0; i < edits; ++i) {
      // A line of the middle half; its tag stays, so it may be edited again.
      const int line = lines / 4 + (i * 7) % (lines / 2);
      cmds.push_back(fmt::format(
          R"({{"command":"str_replace","path":"/memories/long.md","old_str":"<l{}>","new_str":"<l{}>{},"}})",
          line, line, i));
    }
    std::int64_t t0 = bench::NowNs();
    bench::Stats s = TimeExecute(&tool, cmds, cmds.size(), 0);
    const double rate =
        static_cast<double>(cmds.size()) / (static_cast<double>(bench::NowNs() - t0) / 1e9);
    SyncOrDie(store.get());
    const double grown = (db_size() - before) / edits / 1024.0;
    std::printf("| str_replace in a %d KiB file (normal) | %zu | %s | %s | %s | - | %.0f/s, "
                "%.1f KiB stored per version |\n",
                kib, s.n, bench::FormatNs(s.median_ns).c_str(), bench::FormatNs(s.p90_ns).c_str(),
                bench::FormatNs(s.p99_ns).c_str(), rate, grown);
    std::fflush(stdout);
  }
}

// Times `cmds` once each; reports ops/s over the whole run.
void WriteRow(const std::string& name, memtool::MemoryTool* tool,
              const std::vector<std::string>& cmds, Durability durability) {
  std::int64_t t0 = bench::NowNs();
  bench::Stats s = TimeExecute(tool, cmds, cmds.size(), 0);
  double secs = static_cast<double>(bench::NowNs() - t0) / 1e9;
  double rate = static_cast<double>(cmds.size()) / secs;
  bool normal = durability == Durability::kNormal;
  std::printf("| %s (%s) | %zu | %s | %s | %s | %s | %.0f/s %s |\n", name.c_str(),
              std::string(bench::DurabilityName(durability)).c_str(), s.n,
              bench::FormatNs(s.median_ns).c_str(), bench::FormatNs(s.p90_ns).c_str(),
              bench::FormatNs(s.p99_ns).c_str(), normal ? ">= 10,000/s" : "(none)", rate,
              normal ? Verdict(rate >= 10000).c_str() : "");
  std::fflush(stdout);
}

void BenchWrites(const Config& cfg, Durability durability, bool creates_only) {
  bench::ScratchDir scratch(cfg.dir);
  auto store = bench::OpenStoreOrDie(scratch.path() + "/agent.db", durability);
  grainstore::NsId ns = bench::NamespaceOrDie(store.get(), "bench");
  memtool::MemoryTool tool(store.get(), ns);
  const int files = 1000;
  int n = durability == Durability::kNormal ? 10000 : 1000;
  if (cfg.quick) n /= 10;
  FillFiles(store.get(), ns, 0, files);
  std::vector<std::string> creates, replaces, inserts;
  for (int k = 0; k < n; ++k) {
    creates.push_back(fmt::format(R"({{"command":"create","path":"/memories/new/n{}/c{}.md","file_text":"{}"}})",
                                  k / 100, k, JsonText(Body(fmt::format("c{}", k)))));
    int f = k % files, line = k / files;
    replaces.push_back(fmt::format(R"({{"command":"str_replace","path":"{}","old_str":"<f{}:{}>","new_str":"[f{}:{}]"}})",
                                   FileKey(f), f, line, f, line));
    inserts.push_back(fmt::format(R"({{"command":"insert","path":"{}","insert_line":1,"insert_text":"- inserted {}\n"}})",
                                  FileKey(f), k));
  }
  WriteRow("create", &tool, creates, durability);
  if (creates_only) return;
  WriteRow("str_replace", &tool, replaces, durability);
  WriteRow("insert", &tool, inserts, durability);
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--quick") cfg.quick = true;
    else if (arg == "--dir" && i + 1 < argc) cfg.dir = argv[++i];
    else if (arg == "--only" && i + 1 < argc) cfg.only = argv[++i];
    else bench::Die("usage: memtool_micro [--dir DIR] [--quick] [--only versions|size|size-interleaved|every-file|edits-by-size|large-edits|writes|writes-normal|creates]");
  }
  std::printf("| benchmark | n | median | p90 | p99 | goal | result |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  if (cfg.Wants("versions")) BenchVersions(cfg);
  if (cfg.Wants("size")) BenchStoreSize(cfg);
  if (cfg.Wants("size-interleaved")) BenchStoreSizeInterleaved(cfg);
  if (cfg.only == "every-file") BenchEveryFileOnce(cfg);  // asked for by name only
  if (cfg.Wants("edits-by-size")) BenchEditsBySize(cfg);
  if (cfg.Wants("large-edits")) BenchLargeFileEdits(cfg);
  if (cfg.only == "creates") BenchWrites(cfg, Durability::kNormal, true);
  if (cfg.Wants("writes") || cfg.only == "writes-normal") BenchWrites(cfg, Durability::kNormal, false);
  if (cfg.Wants("writes")) BenchWrites(cfg, Durability::kFull, false);
  return 0;
}
