// Replays a generated agent-session workload (bench/agent_mix/gen_workload.js)
// through memtool::MemoryTool::Execute in this process, one command at a
// time, on a fresh temp-file store.
//
//   memtool_replay --workload DIR --dir SCRATCH_PARENT --durability normal|full
//                  [--dump FILE]
//
// setup.jsonl is replayed untimed, then ops.jsonl is timed. Each command is
// handed to Execute as its JSON text (the JSON parse is part of the timed
// work). Prints one JSON line with throughput and the error count; --dump
// writes the final tree in the generator's canonical dump format so the run
// script can check that every backend ends in the same state.
#include <algorithm>
#include <cstdio>
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
    else bench::Die("unknown option " + key);
  }
  if (args.workload.empty()) bench::Die("--workload is required");
  return args;
}

struct ReplayResult {
  std::size_t errors = 0;
  std::vector<std::string> samples;
  double seconds = 0;
};

ReplayResult Replay(memtool::MemoryTool* tool, const std::vector<std::string>& cmds) {
  ReplayResult result;
  std::int64_t t0 = bench::NowNs();
  for (const std::string& cmd : cmds) {
    memtool::ToolResult r = tool->Execute(cmd);
    if (r.is_error) {
      ++result.errors;
      if (result.samples.size() < 5) result.samples.push_back(r.content);
    }
  }
  result.seconds = static_cast<double>(bench::NowNs() - t0) / 1e9;
  return result;
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
  std::vector<std::string> setup = bench::ReadLinesOrDie(args.workload + "/setup.jsonl");
  std::vector<std::string> ops = bench::ReadLinesOrDie(args.workload + "/ops.jsonl");

  bench::ScratchDir scratch(args.dir);
  auto store = bench::OpenStoreOrDie(scratch.path() + "/agent.db", durability);
  grainstore::NsId ns = bench::NamespaceOrDie(store.get(), "bench");
  memtool::MemoryTool tool(store.get(), ns);

  ReplayResult setup_result = Replay(&tool, setup);
  ReplayResult result = Replay(&tool, ops);
  if (!args.dump.empty()) bench::WriteFileOrDie(args.dump, DumpTree(store.get(), ns));

  std::string samples;
  for (const std::string& s : result.samples) {
    samples += (samples.empty() ? "\"" : ",\"") + JsonEscape(s) + "\"";
  }
  std::printf(
      "{\"backend\":\"areev-cpp\",\"durability\":\"%s\",\"ops\":%zu,\"seconds\":%.6f,"
      "\"ops_per_sec\":%.1f,\"errors\":%zu,\"setup_errors\":%zu,\"setup_seconds\":%.3f,"
      "\"error_samples\":[%s]}\n",
      std::string(bench::DurabilityName(durability)).c_str(), ops.size(), result.seconds,
      static_cast<double>(ops.size()) / result.seconds, result.errors, setup_result.errors,
      setup_result.seconds, samples.c_str());
  return 0;
}
