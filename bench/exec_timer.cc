// Times memtool::MemoryTool::Execute of one command on an existing store, so
// a binding benchmark can compare its per-call time with the same C++ call on
// the same store file.
//
//   exec_timer --db FILE --ns NAME --cmd JSON [--iterations N] [--warmup N]
//              [--expect-error 1]
//
// Prints one JSON line: {"median_ns":...,"p90_ns":...,"p99_ns":...,"n":...}.
// Exits with status 1 if the outcome differs from the expected one (success,
// or an error result with --expect-error 1).
#include <cstdio>
#include <string>
#include <vector>

#include "bench_util.h"
#include "memtool/memtool.h"

int main(int argc, char** argv) {
  std::string db, ns_name = "bench", cmd;
  std::size_t iterations = 20000, warmup = 1000;
  bool expect_error = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string key = argv[i];
    std::string value = argv[i + 1];
    if (key == "--db") db = value;
    else if (key == "--ns") ns_name = value;
    else if (key == "--cmd") cmd = value;
    else if (key == "--iterations") iterations = std::stoul(value);
    else if (key == "--warmup") warmup = std::stoul(value);
    else if (key == "--expect-error") expect_error = value == "1";
    else bench::Die("unknown option " + key);
  }
  if (db.empty() || cmd.empty()) bench::Die("usage: exec_timer --db FILE --ns NAME --cmd JSON");
  auto store = bench::OpenStoreOrDie(db, grainstore::Durability::kNormal);
  memtool::MemoryTool tool(store.get(), bench::NamespaceOrDie(store.get(), ns_name));
  std::vector<double> samples;
  samples.reserve(iterations);
  for (std::size_t i = 0; i < iterations + warmup; ++i) {
    std::int64_t t0 = bench::NowNs();
    memtool::ToolResult r = tool.Execute(cmd);
    std::int64_t t1 = bench::NowNs();
    if (r.is_error != expect_error) {
      std::fprintf(stderr, "exec_timer: unexpected outcome: %s\n", r.content.c_str());
      return 1;
    }
    if (i >= warmup) samples.push_back(static_cast<double>(t1 - t0));
  }
  bench::Stats s = bench::Summarize(std::move(samples));
  std::printf("{\"median_ns\":%.0f,\"p90_ns\":%.0f,\"p99_ns\":%.0f,\"n\":%zu}\n", s.median_ns,
              s.p90_ns, s.p99_ns, s.n);
  return 0;
}
