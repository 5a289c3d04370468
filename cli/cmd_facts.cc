// `areev add` and `areev recall`: plain fact and event grains.
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

struct AddArgs {
  grainstore::FactInput input;
  bool event = false;
  bool json = false;
};

int RunAdd(const GlobalOptions& global, AddArgs args) {
  args.input.type =
      args.event ? grainstore::GrainType::kEvent : grainstore::GrainType::kFact;
  // Refused input opens (and creates) nothing.
  if (auto valid = grainstore::Store::CheckFact(args.input); !valid.ok()) {
    return ReportError("add", valid);
  }
  Session s;
  int code = kExitOk;
  if (!OpenSession(global, Access::kWrite, &s, &code)) return code;
  auto fact = s.store->AddFact(s.ns, args.input);
  if (!fact.has_value()) return ReportError("add", fact.error());
  const std::string text =
      args.json ? JsonText(FactJson(*fact)) : fact->grain_id + "\n";
  return Emit(text);
}

struct RecallArgs {
  std::string subject_arg;  // SUBJECT: the same as --subject
  std::string subject;
  std::string relation;
  bool all = false;
  bool json = false;
};

// Longest object/context shown in a table cell; --json prints them whole.
constexpr std::size_t kMaxCellChars = 60;

std::vector<std::string> RecallRow(const grainstore::Fact& f) {
  const bool event = f.type == grainstore::GrainType::kEvent;
  return {ShortId(f.grain_id), event ? "event" : "fact", fmt::format("{}", f.seq),
          grainstore::FormatIsoUtc(f.created_ns), CellText(f.subject, kMaxCellChars),
          CellText(f.relation, kMaxCellChars), CellText(f.object, kMaxCellChars),
          f.live ? "live" : "superseded", CellText(f.context, kMaxCellChars)};
}

// The facts, newest first, in two passes over the store's pages
// (Store::ForEachFact, PrintListing): the first finds the span of times to
// print, the second prints that span.
int RunRecall(const GlobalOptions& global, const RecallArgs& args) {
  int code = kExitOk;
  std::string subject;
  if (!SubjectGivenOnce("recall", "SUBJECT or --subject", args.subject_arg, args.subject,
                        &subject, &code)) {
    return code;
  }
  Session s;
  if (!OpenSession(global, Access::kReadOnly, &s, &code)) return code;
  const ListingFormat<grainstore::Fact> format{
      .headers = {"GRAIN", "TYPE", "VER", "CREATED (UTC)", "SUBJECT", "RELATION", "OBJECT",
                  "STATE", "CONTEXT"},
      .right_aligned = {false, false, true, false, false, false, false, false, false},
      .row = RecallRow,
      .json = FactJson};
  std::int64_t newest_ns = 0, oldest_ns = 0;
  bool any = false;
  auto walk = [&](auto visit) {
    return s.store->ForEachFact(s.ns, subject, args.relation, args.all, visit);
  };
  return PrintListing(
      fmt::format("recall {}", subject), format, args.json,
      [&](auto note) {
        return walk([&](const grainstore::Fact& f) {
          if (!any) newest_ns = f.created_ns;
          any = true;
          oldest_ns = f.created_ns;
          note(f);
          return true;
        });
      },
      [&](auto print) {
        return walk([&](const grainstore::Fact& f) {
          if (f.created_ns > newest_ns) return true;  // added since
          if (f.created_ns < oldest_ns) return false;
          return print(f);
        });
      });
}

}  // namespace

void AddFactCommands(CLI::App& app, const GlobalOptions& global,
                     std::vector<Command>* out) {
  auto a = std::make_shared<AddArgs>();
  CLI::App* add = app.add_subcommand(
      "add", "Add a fact (superseding the same subject+relation) or an event");
  add->add_option("--subject", a->input.subject, "Subject, e.g. alice")
      ->required()
      ->check(NotBlank(true));
  add->add_option("--relation", a->input.relation, "Relation, e.g. prefers")
      ->required()
      ->check(NotBlank(true));
  add->add_option("--object", a->input.object, "Object, e.g. tea");
  add->add_option("--context", a->input.context, "Free-text context");
  add->add_flag("--event", a->event,
                "Record a standalone event grain instead of a fact");
  add->add_flag("--json", a->json, "Print the new grain as JSON");
  out->push_back({add, [&global, a] { return RunAdd(global, *a); }});

  auto r = std::make_shared<RecallArgs>();
  CLI::App* recall = app.add_subcommand(
      "recall", "List live facts and events about a subject");
  recall->add_option("subject", r->subject_arg, "Subject (the same as --subject)")
      ->check(NotBlank());
  recall->add_option("--subject", r->subject, "Subject, e.g. alice")->check(NotBlank());
  recall->add_option("--relation", r->relation,
                     "Only this relation (default: any)")
      ->check(NotBlank());
  recall->add_flag("--all", r->all, "Include superseded facts");
  recall->add_flag("--json", r->json, "Print a JSON array instead of a table");
  out->push_back({recall, [&global, r] { return RunRecall(global, *r); }});
}

}  // namespace cli
