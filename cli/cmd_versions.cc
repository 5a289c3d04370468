// `areev history`, `areev cat` and `areev diff`: reading a chain's versions.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "commands.h"
#include "grainstore/path.h"
#include "grainstore/time_format.h"
#include "grainstore/version_spec.h"
#include "line_diff.h"
#include "listing.h"
#include "output.h"

namespace cli {
namespace {

struct HistoryArgs {
  std::string path;
  std::string subject;
  std::string relation = grainstore::kMemoryFileRelation;
  std::uint64_t chain = 0;
  const CLI::Option* chain_opt = nullptr;
  bool all = false;
  bool chains = false;
  bool json = false;
};

// The chain subject named by a positional path and/or --subject. Memory-file
// subjects are validated and normalised like memory-tool paths.
bool ResolveSubject(const HistoryArgs& args, std::string* subject, int* code) {
  std::string raw;
  if (!SubjectGivenOnce("history", "PATH or --subject", args.path, args.subject, &raw, code)) {
    return false;
  }
  if (args.relation == grainstore::kMemoryFileRelation)
    return ParsePathArg(raw, subject, code);
  *subject = raw;
  return true;
}

// The chain --chain names (it must lie at `subject`), else the one History
// shows: the live file, or the most recently deleted.
grainstore::Result<grainstore::ChainInfo> PickChain(const Session& s, std::string_view subject,
                                                    std::string_view relation,
                                                    const CLI::Option* chain_opt,
                                                    std::uint64_t chain) {
  if (chain_opt != nullptr && chain_opt->count() > 0) {
    return s.store->ChainAt(s.ns, subject, static_cast<grainstore::ChainId>(chain), relation);
  }
  return s.store->FindChain(s.ns, subject, relation);
}

// "# other files at this path: ..." when more chains than `shown` lie at
// `subject` (a file deleted, then another created at the same path): the
// newest ten, or with `all` every one.
std::string OtherChainsNote(const Session& s, std::string_view subject,
                            std::string_view relation, grainstore::ChainId shown, bool all) {
  static constexpr std::size_t kNamed = 10;
  auto chains = s.store->ChainsAt(s.ns, subject, relation);
  if (!chains.has_value()) return "";
  std::string others;
  std::size_t named = 0;
  std::size_t more = 0;
  for (const auto& c : *chains) {
    if (c.id == shown) continue;
    if (!all && named == kNamed) {
      ++more;
      continue;
    }
    ++named;
    if (!others.empty()) others += ", ";
    others += fmt::format("chain {} ({} version{}, {}", c.id, c.head_seq,
                          c.head_seq == 1 ? "" : "s",
                          grainstore::ChainStateName(c.state));
    if (c.state != grainstore::ChainState::kLive) {
      others += " " + grainstore::FormatIsoUtc(grainstore::ChainEndNs(c));
    }
    others += ")";
  }
  if (others.empty()) return "";
  if (more > 0) others += fmt::format(" and {} older (`--all` names every one)", more);
  return fmt::format("# other files at this path: {}; `--chain ID` shows one\n", others);
}

std::string VersionNote(const grainstore::VersionInfo& v) {
  if (v.transient && v.purged) return "transient,purged";
  if (v.transient) return "transient";
  if (v.purged) return "purged";
  return "";
}

// Calls `visit` for each version of `chain` up to `last_seq` (0: all) that
// `all` shows (transient ones only with --all), page by page
// (Store::ForEachVersion), so a chain of a million versions is never held at
// once. Stops when `visit` returns false.
template <typename Visit>
grainstore::Status ForEachVersion(grainstore::Store& store, grainstore::ChainId chain, bool all,
                                  std::uint32_t last_seq, Visit visit) {
  return store.ForEachVersion(chain, [&](const grainstore::VersionInfo& v) {
    if (last_seq != 0 && v.seq > last_seq) return false;
    return (v.transient && !all) || visit(v);
  });
}

std::vector<std::string> HistoryRow(const grainstore::VersionInfo& v) {
  return {fmt::format("{}", v.seq), ShortId(v.grain_id), grainstore::FormatIsoUtc(v.created_ns),
          fmt::format("{}", v.size), CellText(v.op), CellText(v.subject), VersionNote(v)};
}

// The chain's versions as a table, or with `json` as a JSON array whose
// entries carry the chain's state, in two passes (PrintListing): the second
// stops at the first's last version. Returns kExitOk or the exit code of a
// failure it reported.
int PrintVersions(grainstore::Store& store, const grainstore::ChainInfo& chain,
                  std::string_view subject, bool all, bool json) {
  // The chain's state rides on every JSON entry (an additive field): a
  // reader tells a deleted file from a live one as the table's note does.
  const std::string state = grainstore::ChainStateName(chain.state);
  const ListingFormat<grainstore::VersionInfo> format{
      .headers = {"VER", "GRAIN", "CREATED (UTC)", "SIZE", "OP", "SUBJECT", "NOTE"},
      .right_aligned = {true, false, false, true, false, false, false},
      .row = HistoryRow,
      .json = [&](const grainstore::VersionInfo& v) {
        nlohmann::json entry = VersionJson(v);
        entry["chain_state"] = state;
        return entry;
      }};
  std::uint32_t last_seq = 0;
  return PrintListing(
      fmt::format("history {}", subject), format, json,
      [&](auto note) {
        return ForEachVersion(store, chain.id, all, 0, [&](const grainstore::VersionInfo& v) {
          note(v);
          last_seq = v.seq;
          return true;
        });
      },
      [&](auto print) { return ForEachVersion(store, chain.id, all, last_seq, print); });
}

const char* NodeKindName(grainstore::NodeKind kind) {
  switch (kind) {
    case grainstore::NodeKind::kDirectory:
      return "directory";
    case grainstore::NodeKind::kSymlink:
      return "symbolic link";
    case grainstore::NodeKind::kFile:
      break;
  }
  return "file";
}

// "the file /memories/x" when a file (or a symbolic link) stands where a
// directory above `key` would be, which a restore at `key` needs; "" when
// none does, or the store cannot say.
std::string NotADirectoryAbove(const Session& s, std::string_view key) {
  auto in_the_way = s.store->FileInTheWay(s.ns, grainstore::ParentKey(key));
  if (!in_the_way.has_value() || !in_the_way->has_value()) return "";
  const grainstore::NodeInfo& node = **in_the_way;
  return fmt::format("the {} now at {}", NodeKindName(node.kind), CellText(node.key));
}

// A memory path without a chain: where a file that left it went
// (WithMovedNote), and what lies there instead, when something does (a file
// written unversioned through the mount, which `cat` reads; a directory).
grainstore::Status WhyNoHistory(const Session& s, std::string_view key,
                                const grainstore::Status& status) {
  grainstore::Status why = WithMovedNote(s, key, status);
  if (!status.IsNotFound()) return why;
  auto node = s.store->StatKey(s.ns, key);
  if (!node.has_value()) return why;
  std::string message = why.message();
  if (node->kind == grainstore::NodeKind::kFile && node->chain_id == 0) {
    message += "; it is an unversioned file (a temp, swap, backup or .git file written through "
               "the mount keeps only its current content, which `areev cat` reads)";
  } else if (node->kind != grainstore::NodeKind::kFile) {
    message += fmt::format("; it is a {}", NodeKindName(node->kind));
  }
  return std::move(why).WithMessage(std::move(message));
}

// Every chain at `subject` (the live one first, then the most recently
// deleted), as a table or with `json` a JSON array: what the "# other files
// at this path" line names, for scripts too.
int PrintChains(const Session& s, std::string_view subject, std::string_view relation,
                bool json) {
  auto chains = s.store->ChainsAt(s.ns, subject, relation);
  if (chains.has_value() && chains->empty()) {
    chains = grainstore::Status::NotFound(
        fmt::format("no history for {} ({})", subject, relation));
  }
  if (!chains.has_value()) {
    const bool file = relation == grainstore::kMemoryFileRelation;
    return ReportError(fmt::format("history {} --chains", subject),
                       file ? WhyNoHistory(s, subject, chains.error()) : chains.error());
  }
  if (json) {
    nlohmann::json array = nlohmann::json::array();
    for (const grainstore::ChainInfo& c : *chains) array.push_back(ChainJson(c));
    return Emit(JsonText(array));
  }
  Table table({"CHAIN", "STATE", "VERSIONS", "CREATED (UTC)", "DELETED (UTC)", "PURGED (UTC)"},
              {true, false, true, false, false, false});
  for (const grainstore::ChainInfo& c : *chains) {
    const auto time_if = [](bool shown, std::int64_t ns) {
      return shown ? grainstore::FormatIsoUtc(ns) : std::string();
    };
    table.AddRow({fmt::format("{}", c.id), grainstore::ChainStateName(c.state),
                  fmt::format("{}", c.head_seq), grainstore::FormatIsoUtc(c.created_ns),
                  time_if(c.state != grainstore::ChainState::kLive, c.deleted_ns),
                  time_if(c.state == grainstore::ChainState::kPurged, c.purged_ns)});
  }
  return Emit(table.Render());
}

int RunHistory(const GlobalOptions& global, const HistoryArgs& args) {
  std::string subject;
  int code = kExitOk;
  if (!ResolveSubject(args, &subject, &code)) return code;
  if (args.chains && args.chain_opt->count() > 0) {
    return Fail(kExitUsage, "history: --chains lists every chain at the path; give it or --chain");
  }
  Session s;
  if (!OpenSession(global, Access::kReadOnly, &s, &code)) return code;
  if (args.chains) return PrintChains(s, subject, args.relation, args.json);
  // The chain first, then its versions: the state printed is that chain's
  // even if another process deletes or re-creates the file in between.
  auto chain = PickChain(s, subject, args.relation, args.chain_opt, args.chain);
  if (!chain.has_value()) {
    const bool file = args.relation == grainstore::kMemoryFileRelation &&
                      args.chain_opt->count() == 0;
    return ReportError(fmt::format("history {}", subject),
                       file ? WhyNoHistory(s, subject, chain.error()) : chain.error());
  }
  if (const int printed = PrintVersions(*s.store, *chain, subject, args.all, args.json);
      printed != kExitOk || args.json) {
    return printed;
  }
  std::string text;
  if (chain->state != grainstore::ChainState::kLive) {
    const bool purged = chain->state == grainstore::ChainState::kPurged;
    const std::string restore = args.chain_opt->count() > 0
                                    ? fmt::format("`areev restore --chain {}`", chain->id)
                                    : std::string("`areev restore`");
    std::string how = fmt::format("; {} brings it back", restore);
    // Restore needs the path free: a memory file's path taken since by
    // another file or a directory is named.
    if (args.relation == grainstore::kMemoryFileRelation) {
      if (auto taken = s.store->StatKey(s.ns, subject); taken.has_value()) {
        how = fmt::format("; {} brings it back once the {} now at that path is moved or deleted",
                          restore, NodeKindName(taken->kind));
      } else if (auto blocker = NotADirectoryAbove(s, subject); !blocker.empty()) {
        how = fmt::format("; {} brings it back once {} is moved or deleted", restore, blocker);
      }
    }
    text += fmt::format("# {} {} at {}{}\n", CellText(subject), purged ? "purged" : "deleted",
                        grainstore::FormatIsoUtc(grainstore::ChainEndNs(*chain)),
                        purged ? "" : how);
  }
  text += OtherChainsNote(s, subject, args.relation, chain->id, args.all);
  return Emit(text);
}

struct CatArgs {
  std::string path;
  std::string version;
  const CLI::Option* version_opt = nullptr;  // given, even as "", when count() > 0
  std::string version_arg;  // VERSION after the path: the same as --version
  const CLI::Option* version_arg_opt = nullptr;
  std::uint64_t chain = 0;
  const CLI::Option* chain_opt = nullptr;
};

// `cat` of a path whose last file, `latest`, was deleted (and no file moved
// away from it since, which WithMovedNote names): says so, and where its
// versions are.
grainstore::Status WithDeletedNote(const grainstore::Status& status,
                                   const grainstore::ChainInfo& latest) {
  if (!status.IsNotFound() || latest.state == grainstore::ChainState::kLive) return status;
  if (latest.state == grainstore::ChainState::kPurged) {
    return grainstore::Status::NotFound(
        fmt::format("{}; the file there was deleted at {} and purged at {}", status.message(),
                    grainstore::FormatIsoUtc(latest.deleted_ns),
                    grainstore::FormatIsoUtc(latest.purged_ns)));
  }
  return grainstore::Status::NotFound(fmt::format(
      "{}; the file there was deleted at {}: `areev history` lists its versions, which `cat` "
      "reads by number, and `areev restore` brings it back",
      status.message(), grainstore::FormatIsoUtc(latest.deleted_ns)));
}

int RunCat(const GlobalOptions& global, const CatArgs& args) {
  std::string key;
  int code = kExitOk;
  if (!ParsePathArg(args.path, &key, &code)) return code;
  const bool by_arg = args.version_arg_opt->count() > 0;
  if (by_arg && args.version_opt->count() > 0) {
    return Fail(kExitUsage, "cat: give the version after the path or as --version, not both");
  }
  const std::string& version = by_arg ? args.version_arg : args.version;
  const bool latest = !by_arg && args.version_opt->count() == 0;
  Session s;
  if (!OpenSession(global, Access::kReadOnly, &s, &code)) return code;
  grainstore::Result<std::string> body = std::string();
  if (args.chain_opt->count() > 0) {
    auto chain = PickChain(s, key, grainstore::kMemoryFileRelation, args.chain_opt, args.chain);
    if (!chain.has_value()) return ReportError(fmt::format("cat {}", key), chain.error());
    body = s.store->ReadChainVersion(
        chain->id, key, latest ? fmt::format("{}", chain->head_seq) : version);
  } else {
    body = latest ? s.store->ReadFile(s.ns, key) : s.store->ReadVersion(s.ns, key, version);
  }
  if (!body.has_value()) {
    std::string what = latest ? fmt::format("cat {}", key)
                              : fmt::format("cat {} --version {}", key, version);
    if (args.chain_opt->count() > 0) return ReportError(what, body.error());
    if (!latest) return ReportError(what, WhyNoHistory(s, key, body.error()));
    MovedNoteFindings found;
    grainstore::Status why = WithMovedNote(s, key, body.error(), &found);
    if (!found.moved && found.latest) why = WithDeletedNote(why, *found.latest);
    return ReportError(what, why);
  }
  return Emit(*body);
}

struct DiffArgs {
  std::string path;
  std::string from;
  std::string to;
  std::size_t context = 3;
  const CLI::Option* from_opt = nullptr;  // given, even as "", when count() > 0
  const CLI::Option* to_opt = nullptr;
  std::vector<std::string> versions;  // FROM [TO] after the path: --from and --to
  std::uint64_t chain = 0;
  const CLI::Option* chain_opt = nullptr;
};

// The version `spec` names, found as `cat --version` finds it: with --chain
// within that chain, else a number in the chain `history` shows and a grain
// id in any chain at the path (Store::FindVersion).
grainstore::Result<grainstore::VersionInfo> FindDiffVersion(
    const Session& s, std::string_view key, const grainstore::ChainInfo* chain,
    std::string_view spec) {
  if (chain != nullptr) return s.store->FindChainVersion(chain->id, key, spec);
  return s.store->FindVersion(s.ns, key, spec);
}

// A header's text after the name: the version, its grain and time, and,
// when the two sides are versions of different files that lay at the path
// (`name_chain`), the chain, which `history --chains` lists.
std::string DiffLabel(const grainstore::VersionInfo& v, bool name_chain) {
  // The name as the tables show it: a name with a newline or a terminal
  // escape in it must not split the header line or reach the terminal.
  std::string label = fmt::format("{}\tv{} {} {}", CellText(v.subject), v.seq,
                                  ShortId(v.grain_id), grainstore::FormatIsoUtc(v.created_ns));
  if (name_chain) label += fmt::format(" (chain {})", v.chain_id);
  return label;
}

int RunDiff(const GlobalOptions& global, const DiffArgs& args) {
  std::string key;
  int code = kExitOk;
  if (!ParsePathArg(args.path, &key, &code)) return code;
  if (args.versions.size() > 2) {
    return Fail(kExitUsage, fmt::format("diff: at most two versions follow the path (FROM TO), "
                                        "not {}", args.versions.size()));
  }
  if (!args.versions.empty() && (args.from_opt->count() > 0 || args.to_opt->count() > 0)) {
    return Fail(kExitUsage, "diff: give the versions after the path or as --from and --to, "
                            "not both");
  }
  const bool has_from = args.from_opt->count() > 0 || !args.versions.empty();
  const bool has_to = args.to_opt->count() > 0 || args.versions.size() > 1;
  const std::string& from_spec = args.versions.empty() ? args.from : args.versions[0];
  const std::string& to_spec = args.versions.size() > 1 ? args.versions[1] : args.to;
  Session s;
  if (!OpenSession(global, Access::kReadOnly, &s, &code)) return code;
  auto chain = PickChain(s, key, grainstore::kMemoryFileRelation, args.chain_opt, args.chain);
  if (!chain.has_value()) {
    // Without --chain, what lies at the path is named as `history` names it.
    const bool by_path = args.chain_opt->count() == 0;
    return ReportError(fmt::format("diff {}", key),
                       by_path ? WhyNoHistory(s, key, chain.error()) : chain.error());
  }
  const grainstore::ChainInfo* given = args.chain_opt->count() > 0 ? &*chain : nullptr;
  grainstore::VersionInfo to;
  if (has_to) {
    auto found = FindDiffVersion(s, key, given, to_spec);
    if (!found.has_value()) return ReportError(fmt::format("diff {} --to", key), found.error());
    to = std::move(found).value();
  } else {
    // The chain's last version, by number: one probe however long the
    // history (listing it took 2 s and 567 MB at a million versions).
    // Every chain is written with its first version: one without any was
    // damaged (a page of versions that reads as empty).
    if (chain->head_seq == 0) {
      return ReportError(fmt::format("diff {}", key),
                         grainstore::Status::Corruption("the file's chain has no versions"));
    }
    auto last = s.store->FindChainVersion(chain->id, key, fmt::format("{}", chain->head_seq));
    if (!last.has_value()) return ReportError(fmt::format("diff {}", key), last.error());
    to = std::move(last).value();
  }
  std::optional<grainstore::VersionInfo> from;
  if (has_from) {
    auto found = FindDiffVersion(s, key, given, from_spec);
    if (!found.has_value())
      return ReportError(fmt::format("diff {} --from", key), found.error());
    from = std::move(found).value();
  } else {
    // The version before --to in its own chain (which --to may have found in
    // an older file at this path), transient ones passed over: probed one
    // number at a time, downwards.
    for (auto seq = to.seq; seq > 1 && !from.has_value(); --seq) {
      auto v = s.store->FindChainVersion(to.chain_id, key, fmt::format("{}", seq - 1));
      if (!v.has_value()) {
        if (v.error().code() == grainstore::StatusCode::kNotFound) continue;
        return ReportError(fmt::format("diff {}", key), v.error());
      }
      if (!v->transient) from = std::move(v).value();
    }
  }
  std::string old_body;
  if (from.has_value()) {
    auto body = s.store->ReadChainVersion(from->chain_id, key, fmt::format("{}", from->seq));
    if (!body.has_value())
      return ReportError(fmt::format("diff {} v{}", key, from->seq), body.error());
    old_body = std::move(body).value();
  }
  auto new_body = s.store->ReadChainVersion(to.chain_id, key, fmt::format("{}", to.seq));
  if (!new_body.has_value())
    return ReportError(fmt::format("diff {} v{}", key, to.seq), new_body.error());
  const bool two_files = from.has_value() && from->chain_id != to.chain_id;
  const std::string text = UnifiedDiff(old_body, *new_body,
                                       from.has_value() ? DiffLabel(*from, two_files) : "/dev/null",
                                       DiffLabel(to, two_files), args.context);
  return Emit(text);
}

}  // namespace

void AddVersionCommands(CLI::App& app, const GlobalOptions& global,
                        std::vector<Command>* out) {
  auto h = std::make_shared<HistoryArgs>();
  CLI::App* history = app.add_subcommand(
      "history", "List the versions of a file (or any chain)");
  history->add_option("path", h->path, "Memory path (same as --subject)")->check(NotBlank());
  history->add_option("--subject", h->subject,
                      "Chain subject, e.g. /memories/prefs.md")
      ->check(NotBlank());
  history->add_option("--relation", h->relation, "Chain relation")
      ->capture_default_str()
      ->check(NotBlank());
  h->chain_opt = history->add_option(
      "--chain", h->chain, "This chain: another file that lived at the path (history's \"# other files at this path\" line lists their ids)")
      ->transform(DecimalIn(1, kMaxChainId));
  history->add_flag("--all", h->all,
                    "Include transient (coalesced) versions, and name every other file that "
                    "lay at the path");
  history->add_flag("--chains", h->chains,
                    "List every chain that lay at the path (the live file and the deleted "
                    "ones) instead of one chain's versions");
  history->add_flag("--json", h->json, "Print a JSON array instead of a table");
  out->push_back({history, [&global, h] { return RunHistory(global, *h); }});

  auto c = std::make_shared<CatArgs>();
  CLI::App* cat =
      app.add_subcommand("cat", "Print a file's current body or any version");
  cat->add_option("path", c->path, "Memory path")->required();
  c->version_arg_opt = cat->add_option("version", c->version_arg, "The same as --version")
                         ->check(VersionName());
  c->version_opt = cat->add_option("--version", c->version,
                                   "Version number or grain-id prefix (>= 6 hex)")
                     ->check(VersionName());
  c->chain_opt = cat->add_option("--chain", c->chain,
                                 "Read from this chain (an older file at the same path)")
                   ->transform(DecimalIn(1, kMaxChainId));
  out->push_back({cat, [&global, c] { return RunCat(global, *c); }});

  auto d = std::make_shared<DiffArgs>();
  CLI::App* diff =
      app.add_subcommand("diff", "Unified diff between two versions of a file");
  diff->add_option("path", d->path, "Memory path")->required();
  diff->add_option("versions", d->versions, "FROM [TO]: the same as --from and --to")
      ->check(VersionName());
  d->from_opt = diff->add_option("--from", d->from,
                                 "Old version (default: the one before --to)")
                   ->check(VersionName());
  d->to_opt = diff->add_option("--to", d->to, "New version (default: the newest)")
                 ->check(VersionName());
  d->chain_opt = diff->add_option("--chain", d->chain,
                                  "Versions of this chain (an older file at the same path)")
                   ->transform(DecimalIn(1, kMaxChainId));
  diff->add_option("-U,--unified", d->context, "Lines of context")
      ->transform(DecimalIn(0, kMaxCount))
      ->capture_default_str();
  out->push_back({diff, [&global, d] { return RunDiff(global, *d); }});
}

}  // namespace cli
