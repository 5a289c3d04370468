// `areev log`, `areev restore` and `areev purge`: the op-log and what happens
// to a file after `delete`.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "commands.h"
#include "grainstore/time_format.h"
#include "listing.h"
#include "output.h"

namespace cli {
namespace {

struct LogArgs {
  std::uint64_t after = 0;
  std::size_t limit = 0;  // 0: no limit
  bool json = false;
};

// Rows are fetched in pages, and printed as they come, so neither the store
// nor the output ever holds a huge log at once.
constexpr std::size_t kLogPage = 1000;

// Calls `visit` for each entry `args` selects, oldest first, and for none
// past `last_seq` (0: no bound). Stops early when `visit` returns false.
template <typename Visit>
grainstore::Status ForEachOp(grainstore::Store& store, grainstore::NsId ns, const LogArgs& args,
                             std::uint64_t last_seq, Visit visit) {
  // Sequence numbers are SQLite integers: none is past INT64_MAX.
  if (args.after > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return grainstore::Status::Ok();
  }
  std::uint64_t cursor = args.after;
  std::size_t seen = 0;
  while (args.limit == 0 || seen < args.limit) {
    std::size_t want = kLogPage;
    if (args.limit != 0) want = std::min(want, args.limit - seen);
    auto page = store.ReadOps(ns, cursor, want);
    if (!page.has_value()) return page.error();
    for (const grainstore::OpRecord& op : *page) {
      if (last_seq != 0 && op.seq > last_seq) return grainstore::Status::Ok();
      if (!visit(op)) return grainstore::Status::Ok();
    }
    if (page->size() < want) break;
    seen += page->size();
    cursor = page->back().seq;
  }
  return grainstore::Status::Ok();
}

std::vector<std::string> LogRow(const grainstore::OpRecord& op) {
  std::string subject = CellText(op.subject);
  if (!op.new_subject.empty()) subject += " -> " + CellText(op.new_subject);
  return {fmt::format("{}", op.seq), grainstore::FormatIsoUtc(op.at_ns), CellText(op.ns),
          CellText(op.op), ShortId(op.grain_id), std::move(subject)};
}

int RunLog(const GlobalOptions& global, const LogArgs& args) {
  Session s;
  int code = kExitOk;
  // Without an explicit --ns the log covers every namespace (ns 0).
  const bool opened = global.ns_given
                          ? OpenSession(global, Access::kReadOnly, &s, &code)
                          : OpenStore(global, Access::kReadOnly, &s, &code);
  if (!opened) return code;
  const grainstore::NsId ns = global.ns_given ? s.ns : 0;
  // Two passes (PrintListing): the second stops at the first's last entry.
  const ListingFormat<grainstore::OpRecord> format{
      .headers = {"SEQ", "TIME (UTC)", "NS", "OP", "GRAIN", "SUBJECT"},
      .right_aligned = {true, false, false, false, false, false},
      .row = LogRow,
      .json = OpJson};
  std::uint64_t last_seq = 0;
  std::size_t count = 0;
  return PrintListing(
      "log", format, args.json,
      [&](auto note) {
        return ForEachOp(*s.store, ns, args, 0, [&](const grainstore::OpRecord& op) {
          note(op);
          last_seq = op.seq;
          ++count;
          return true;
        });
      },
      [&](auto print) {
        LogArgs bounded = args;
        bounded.limit = count;
        return ForEachOp(*s.store, ns, bounded, last_seq, print);
      });
}

struct PathArgs {
  std::string path;
  // restore --chain: this deleted chain. The option takes ids from 1 (0 is a
  // usage error): Restore reads 0 as "the most recently deleted".
  std::uint64_t chain = 0;
};

enum class Lifecycle { kRestore, kPurge };

int RunLifecycle(const GlobalOptions& global, const PathArgs& args,
                 Lifecycle what) {
  std::string key;
  int code = kExitOk;
  if (!ParsePathArg(args.path, &key, &code)) return code;
  Session s;
  if (!OpenSession(global, Access::kReadOnly, &s, &code)) return code;
  const bool restore = what == Lifecycle::kRestore;
  grainstore::Status st =
      restore ? s.store->Restore(s.ns, key, static_cast<grainstore::ChainId>(args.chain))
              : s.store->Purge(s.ns, key);
  if (!st.ok())
    return ReportError(fmt::format("{} {}", restore ? "restore" : "purge", key),
                       args.chain != 0 ? st : WithMovedNote(s, key, st));
  return Emit(fmt::format("{} {}\n", restore ? "restored" : "purged", CellText(key)));
}

}  // namespace

void AddLifecycleCommands(CLI::App& app, const GlobalOptions& global,
                          std::vector<Command>* out) {
  auto l = std::make_shared<LogArgs>();
  CLI::App* log = app.add_subcommand(
      "log", "Print the op-log (every add, supersede, rename, delete, ...)");
  log->add_option("--after", l->after, "Only entries after sequence number N (seq > N)")
      ->transform(DecimalIn(0, kMaxCount));
  log->add_option("--limit", l->limit, "At most N entries (0: all)")
      ->transform(DecimalIn(0, kMaxCount));
  log->add_flag("--json", l->json, "Print a JSON array instead of a table");
  out->push_back({log, [&global, l] { return RunLog(global, *l); }});

  auto r = std::make_shared<PathArgs>();
  CLI::App* restore = app.add_subcommand(
      "restore", "Bring a deleted file back from its tombstone");
  restore->add_option("path", r->path, "Memory path of the deleted file")
      ->required();
  restore
      ->add_option("--chain", r->chain,
                   "This deleted chain, for an older file at the same path "
                   "(default: the most recently deleted)")
      ->transform(DecimalIn(1, kMaxChainId));
  out->push_back({restore, [&global, r] {
                    return RunLifecycle(global, *r, Lifecycle::kRestore);
                  }});

  auto p = std::make_shared<PathArgs>();
  CLI::App* purge =
      app.add_subcommand("purge", "Erase a deleted file's bodies for good");
  purge->add_option("path", p->path, "Memory path of the deleted file")
      ->required();
  out->push_back({purge, [&global, p] {
                    return RunLifecycle(global, *p, Lifecycle::kPurge);
                  }});
}

}  // namespace cli
