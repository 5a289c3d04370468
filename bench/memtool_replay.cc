// Replays a generated agent-session workload (bench/agent_mix/gen_workload.js)
// through memtool::MemoryTool::Execute in this process, one command at a
// time, on a fresh temp-file store.
//
//   memtool_replay --workload DIR --dir SCRATCH_PARENT --durability normal|full
//                  [--dump FILE]
//   memtool_replay --dump-db DB --dump FILE      (dump an existing store only)
//
// setup.jsonl is replayed untimed, then ops.jsonl is timed. Each command is
// handed to Execute as its JSON text (the JSON parse is part of the timed
// work). Prints one JSON line with throughput and the error count; --dump
// writes the final tree in the generator's canonical dump format so the run
// script can check that every backend ends in the same state.
#include <algorithm>
#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "bench_util.h"
#include "grainstore/store.h"
#include "memtool/memtool.h"

namespace {

struct Args {
  std::string workload;
  std::string dir = ".";
  std::string durability = "normal";
  std::string dump;
  std::string dump_db;  // dump this existing store (namespace "bench") and exit
};

Args ParseArgs(int argc, char** argv) {
  Args args;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string key = argv[i];
    std::string value = argv[i + 1];
    if (key == "--workload") args.workload = value;
    else if (key == "--dir") args.dir = value;
    else if (key == "--durability") args.durability = value;
    else if (key == "--dump") args.dump = value;
    else if (key == "--dump-db") args.dump_db = value;
    else bench::Die("unknown option " + key);
  }
  if (args.workload.empty() && args.dump_db.empty()) bench::Die("--workload is required");
  if (!args.dump_db.empty() && args.dump.empty()) bench::Die("--dump-db needs --dump");
  return args;
}

struct ReplayResult {
  std::size_t errors = 0;
  std::vector<std::string> samples;
  double seconds = 0;
  double cpu_seconds = 0;  // user + system time of the process during the replay
  std::map<std::string, std::pair<std::size_t, std::int64_t>> by_label;  // count, ns
};

// Runs `cmds` in order; `labels` (same length, or empty) names each command
// for the per-command breakdown.
double CpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto secs = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6; };
  return secs(ru.ru_utime) + secs(ru.ru_stime);
}

ReplayResult Replay(memtool::MemoryTool* tool, const std::vector<std::string>& cmds,
                    const std::vector<std::string>& labels) {
  ReplayResult result;
  double cpu0 = CpuSeconds();
  std::int64_t t0 = bench::NowNs();
  for (std::size_t i = 0; i < cmds.size(); ++i) {
    std::int64_t c0 = bench::NowNs();
    memtool::ToolResult r = tool->Execute(cmds[i]);
    if (!labels.empty()) {
      auto& slot = result.by_label[labels[i]];
      ++slot.first;
      slot.second += bench::NowNs() - c0;
    }
    if (r.is_error) {
      ++result.errors;
      if (result.samples.size() < 5) result.samples.push_back(r.content);
    }
  }
  result.seconds = static_cast<double>(bench::NowNs() - t0) / 1e9;
  result.cpu_seconds = CpuSeconds() - cpu0;
  return result;
}

std::string ByLabelJson(const ReplayResult& r) {
  std::string out;
  for (const auto& [label, slot] : r.by_label) {
    out += fmt::format("{}\"{}\":{{\"n\":{},\"seconds\":{:.6f}}}", out.empty() ? "" : ",", label,
                       slot.first, static_cast<double>(slot.second) / 1e9);
  }
  return "{" + out + "}";
}

// Appends the canonical dump entries of `dir` and everything below it.
void CollectTree(grainstore::Store* store, grainstore::NsId ns, const grainstore::NodeInfo& dir,
                 std::vector<std::pair<std::string, std::string>>* entries) {
  entries->emplace_back(dir.key, "D " + dir.key + "\n");
  auto children = store->ListChildren(dir.id);
  if (!children.has_value()) bench::Die("ListChildren: " + children.error().ToString());
  for (const grainstore::NodeInfo& child : *children) {
    if (!child.name.empty() && child.name[0] == '.') continue;
    if (child.kind == grainstore::NodeKind::kDirectory) {
      CollectTree(store, ns, child, entries);
    } else if (child.kind == grainstore::NodeKind::kFile) {
      auto body = store->ReadFile(ns, child.key);
      if (!body.has_value()) bench::Die("ReadFile: " + body.error().ToString());
      entries->emplace_back(child.key,
                            fmt::format("F {} {}\n", child.key, body->size()) + *body + "\n");
    }
  }
}

std::string DumpTree(grainstore::Store* store, grainstore::NsId ns) {
  auto root_id = store->RootId(ns);
  if (!root_id.has_value()) bench::Die("RootId: " + root_id.error().ToString());
  auto root = store->GetNode(*root_id);
  if (!root.has_value()) bench::Die("GetNode: " + root.error().ToString());
  std::vector<std::pair<std::string, std::string>> entries;
  CollectTree(store, ns, *root, &entries);
  std::sort(entries.begin(), entries.end());
  std::string out;
  for (const auto& e : entries) out += e.second;
  return out;
}

std::string JsonEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Args args = ParseArgs(argc, argv);
  grainstore::Durability durability = bench::ParseDurability(args.durability);
  if (!args.dump_db.empty()) {
    auto store = bench::OpenStoreOrDie(args.dump_db, durability);
    auto ns = store->FindNamespace("bench");
    if (!ns.has_value()) bench::Die("no namespace bench in " + args.dump_db);
    bench::WriteFileOrDie(args.dump, DumpTree(store.get(), *ns));
    return 0;
  }
  std::vector<std::string> setup = bench::ReadLinesOrDie(args.workload + "/setup.jsonl");
  std::vector<std::string> ops = bench::ReadLinesOrDie(args.workload + "/ops.jsonl");
  std::vector<std::string> labels;
  if (std::filesystem::exists(args.workload + "/ops.labels")) {
    labels = bench::ReadLinesOrDie(args.workload + "/ops.labels");
    if (labels.size() != ops.size()) bench::Die("ops.labels does not match ops.jsonl");
  }

  bench::ScratchDir scratch(args.dir);
  auto store = bench::OpenStoreOrDie(scratch.path() + "/agent.db", durability);
  grainstore::NsId ns = bench::NamespaceOrDie(store.get(), "bench");
  memtool::MemoryTool tool(store.get(), ns);

  ReplayResult setup_result = Replay(&tool, setup, {});
  ReplayResult result = Replay(&tool, ops, labels);
  if (!args.dump.empty()) bench::WriteFileOrDie(args.dump, DumpTree(store.get(), ns));

  std::string samples;
  for (const std::string& s : result.samples) {
    samples += (samples.empty() ? "\"" : ",\"") + JsonEscape(s) + "\"";
  }
  std::printf(
      "{\"backend\":\"areev-cpp\",\"durability\":\"%s\",\"ops\":%zu,\"seconds\":%.6f,"
      "\"cpu_seconds\":%.3f,"
      "\"ops_per_sec\":%.1f,\"errors\":%zu,\"setup_errors\":%zu,\"setup_seconds\":%.3f,"
      "\"error_samples\":[%s],\"by_command\":%s}\n",
      std::string(bench::DurabilityName(durability)).c_str(), ops.size(), result.seconds,
      result.cpu_seconds,
      static_cast<double>(ops.size()) / result.seconds, result.errors, setup_result.errors,
      setup_result.seconds, samples.c_str(), ByLabelJson(result).c_str());
  return 0;
}
