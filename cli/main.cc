// areev: the command line of the areev memory store. Parses arguments with
// CLI11, runs one subcommand, and exits with the codes of docs/cli.md.
#include <malloc.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <new>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli_common.h"
#include "commands.h"

namespace {

// A command on a file of megabytes holds a few whole copies of its body at
// once (the stored one, the edited one, the one sealed). glibc's malloc maps
// each block above a threshold that follows the largest block freed so far,
// and hands the heap's top back above twice that; a file that grows by a
// few bytes per edit then asks every time for a block just past both, and
// pays a page fault for each 4 KiB it touches (an insert into a 4 MiB file
// took several times as long as the copies it makes; docs/performance.md).
// Fixed thresholds keep such blocks in the heap, to be reused by the next
// edit. Blocks above 32 MiB are still mapped and unmapped one by one. Every
// command but `mount` (whose daemon asks for huge pages for its mappings).
void KeepLargeBlocksInTheHeap() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

// CLI11 prints help to std::cout; a help that could not be written is a
// failure, as any other command's output is.
int ExitAfterHelp(const CLI::App& app, const CLI::Error& e) {
  errno = 0;
  const int code = app.exit(e);
  std::cout.flush();
  return std::cout.fail() ? cli::FailWritingStdout() : code;
}

// The option an argument written as one names: "--db" of "--db=x", "-h" of
// "-h".
std::string OptionName(std::string_view arg) {
  return std::string(arg.starts_with("--") ? arg.substr(0, arg.find('=')) : arg);
}

// The first argument after the program's name: where options may begin.
std::vector<std::string>::const_iterator OptionsBegin(const std::vector<std::string>& args) {
  return args.begin() + (args.empty() ? 0 : 1);
}

// The first "--" of `args` after the program's name: where options end.
std::vector<std::string>::const_iterator OptionsEnd(const std::vector<std::string>& args) {
  return std::find(OptionsBegin(args), args.end(), "--");
}

// Whether `arg` names an option of the app or of `command` as it would be
// typed alone: a long option with or without its value ("--db", "--db=x"),
// a short option exactly ("-h", not "-hx", which may be a value), or
// --version, which only the whole command line may hold.
bool NamesAnOption(const CLI::App& app, const CLI::App& command, std::string_view arg) {
  if (arg.size() < 2 || arg[0] != '-' || arg == "--") return false;
  const std::string name = OptionName(arg);
  if (!name.starts_with("--") && name.size() != 2) return false;
  return name == "--version" || app.get_option_no_throw(name) != nullptr ||
         command.get_option_no_throw(name) != nullptr;
}

// Whether `option` is written among `args` before any "--" (by any of its
// names, alone or with "=value"), rather than set from its environment
// variable.
bool WrittenBeforeOptionsEnd(const CLI::Option& option, const std::vector<std::string>& args) {
  return std::any_of(OptionsBegin(args), OptionsEnd(args),
                     [&](std::string_view arg) {
                       return arg.size() >= 2 && arg[0] == '-' &&
                              option.check_name(OptionName(arg));
                     });
}

// Values given after an option's '=' ("--ns=-h": the option, then its value),
// which are never taken for another option.
using InlineValues = std::set<std::pair<std::string, std::string>>;

// An option written without its value takes the next argument as one, and
// CLI11 lets that be another option: `--db --durable` would open a store
// named "--durable", not durably; `--db -h` would make a store named "-h".
// The value of each option given, when it names one of the command's own
// options, short or long, and was not written after the option's '='
// (empty: none).
std::string OptionTakenAsValue(const CLI::App& app, const CLI::App& command,
                               const InlineValues& inline_values,
                               const std::vector<std::string>& args) {
  for (const CLI::App* scope : {&app, &command}) {
    for (const CLI::Option* option : scope->get_options()) {
      // An argument may look like an option after "--" (AfterOptionsEnd).
      if (option->get_positional()) continue;
      // A value from the environment ($AREEV_DB) followed no option.
      if (!WrittenBeforeOptionsEnd(*option, args)) continue;
      for (const std::string& value : option->results()) {
        if (!NamesAnOption(app, command, value)) continue;
        const bool written_inline =
            std::any_of(inline_values.begin(), inline_values.end(), [&](const auto& given) {
              return given.second == value && option->check_name(given.first);
            });
        if (written_inline) continue;
        return fmt::format("{} needs a value, but the next argument is the option {}",
                           option->get_name(), value);
      }
    }
  }
  return {};
}

// The option named `name` ("--ns") in the app or any subcommand, if it takes
// a value (a flag does not).
bool TakesAValue(const CLI::App& app, const std::string& name) {
  std::vector<const CLI::App*> scopes = {&app};
  for (const CLI::App* sub : app.get_subcommands({})) scopes.push_back(sub);
  for (const CLI::App* scope : scopes) {
    const CLI::Option* option = scope->get_option_no_throw(name);
    if (option != nullptr) return option->get_items_expected_max() != 0;
  }
  return false;
}

// The arguments with each `--name=` (an empty value after the '=') of an
// option that takes a value split into `--name` and an empty argument:
// CLI11 reads `--ns=` as `--ns` alone and takes the next argument as its
// value, so `--ns= store.db` wrote to ./agent.db in a namespace "store.db".
// Each `--name=value` is noted in `inline_values`.
std::vector<std::string> SplitEmptyValues(const CLI::App& app, int argc, char** argv,
                                          InlineValues* inline_values) {
  std::vector<std::string> out;
  bool options_end = false;
  for (int i = 0; i < argc; ++i) {
    const std::string_view arg = argv[i];
    options_end = options_end || arg == "--";
    const std::size_t eq = arg.find('=');
    if (i > 0 && !options_end && arg.starts_with("--") && eq != std::string_view::npos &&
        eq > 2) {
      const std::string name(arg.substr(0, eq));
      if (eq == arg.size() - 1 && TakesAValue(app, name)) {
        out.push_back(name);
        out.emplace_back();
        continue;
      }
      inline_values->emplace(name, std::string(arg.substr(eq + 1)));
    }
    out.emplace_back(arg);
  }
  return out;
}

bool TakesPositionals(const CLI::App& command) {
  return !command.get_options([](const CLI::Option* o) { return o->get_positional(); }).empty();
}

// The arguments after the first "--" of `args`, which are never options.
// CLI11 parses them as options all the same for a command that takes no
// positional argument: `areev log -- --db x` read store x.
std::vector<std::string> AfterOptionsEnd(const std::vector<std::string>& args) {
  const auto end = OptionsEnd(args);
  if (end == args.end()) return {};
  return {end + 1, args.end()};
}

// The arguments after "--" that `command` did not take as its arguments
// (CLI11 parses an argument after "--" as an option once a command's
// arguments are all given: `areev cat /memories/a -- --db x` read store x).
// Also after a parse that stopped at one of them (`purge P -- --help`).
std::vector<std::string> NotTakenAfterOptionsEnd(const CLI::App& command,
                                                 const std::vector<std::string>& after) {
  std::vector<std::string> taken;
  for (const CLI::Option* o :
       command.get_options([](const CLI::Option* o) { return o->get_positional(); })) {
    for (const std::string& value : o->results()) taken.push_back(value);
  }
  // The command's arguments are taken in order, those after "--" last: the
  // first `k` after "--" are the last `k` taken.
  for (std::size_t k = std::min(after.size(), taken.size()); k > 0; --k) {
    if (std::equal(after.begin(), after.begin() + static_cast<std::ptrdiff_t>(k),
                   taken.end() - static_cast<std::ptrdiff_t>(k))) {
      return {after.begin() + static_cast<std::ptrdiff_t>(k), after.end()};
    }
  }
  return after;
}

// The refusal of arguments after "--" that `command` does not take.
std::string NotTakenMessage(const CLI::App& command, const std::vector<std::string>& extras) {
  return fmt::format("{} takes no {}arguments, but {} followed '--'", command.get_name(),
                     TakesPositionals(command) ? "more " : "", fmt::join(extras, " "));
}

// The command CLI11 recognised in `app`, if any.
const CLI::App* ParsedCommand(const std::vector<cli::Command>& commands) {
  for (const cli::Command& command : commands) {
    if (command.app->parsed()) return command.app;
  }
  return nullptr;
}

// Whether `arg` is written as an option ("-x", "--name", "--name=value")
// rather than as a value ("-" is stdin). An argument left over that starts
// with '-', "-1" too, is far more likely a mistyped option than a value.
bool LooksLikeAnOption(std::string_view arg) { return arg.size() > 1 && arg[0] == '-'; }

// Why the first argument, where a subcommand belongs, is refused.
std::string NotACommand(const std::string& arg) {
  if (arg == "--") return "the command must come before '--'";
  if (arg == "--version") return "--version takes no other arguments";
  if (arg.starts_with("--version=")) return "--version takes no value, got '" + arg + "'";
  if (LooksLikeAnOption(arg)) return "unknown option '" + arg + "'";
  return "unknown command '" + arg + "'";
}

// Why arguments `command` does not take are refused: options it does not
// know by that name, else the arguments it has no place for.
std::string NotExpected(const CLI::App* command, const std::vector<std::string>& extras) {
  // `areev --version log`: --version is the whole command line or nothing.
  if (std::find(extras.begin(), extras.end(), "--version") != extras.end()) {
    return "--version takes no other arguments: areev --version prints the version";
  }
  // `log --subject x`: an unknown option written with its value apart; the
  // value is not the fault.
  if (!extras.empty() && LooksLikeAnOption(extras.front())) {
    std::vector<std::string> quoted;
    for (const std::string& extra : extras) {
      if (LooksLikeAnOption(extra)) quoted.push_back("'" + extra + "'");
    }
    return fmt::format("unknown option{} {}", quoted.size() > 1 ? "s" : "",
                       fmt::join(quoted, " "));
  }
  if (command == nullptr) {
    return fmt::format("unexpected argument{} {}", extras.size() > 1 ? "s" : "",
                       fmt::join(extras, " "));
  }
  return fmt::format("{} takes no {}arguments, but {} {} given", command->get_name(),
                     TakesPositionals(*command) ? "more " : "", fmt::join(extras, " "),
                     extras.size() > 1 ? "were" : "was");
}

// An option given twice that takes one value (CLI11's "At Most 1 required
// but received 2"): which option, in our words; "" for any other failure.
std::string GivenTwice(const CLI::ParseError& e) {
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) == nullptr) return "";
  const std::string what = e.what();
  const std::size_t at = what.find(": At Most 1 required but received ");
  if (at == std::string::npos || at == 0) return "";
  return fmt::format("{}: given more than once; give it once", what.substr(0, at));
}

// CLI11's words for a missing value, a value given to an on/off option and
// a missing command, in ours; "" for any other failure.
std::string InOurWords(const CLI::ParseError& e, const std::vector<std::string>& args) {
  const std::string what = e.what();
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr &&
      what.starts_with("A subcommand is required")) {
    return "a command is required: memtool, history, cat, diff, log, restore, purge, add, "
           "recall, mount or umount";
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) == nullptr) return "";
  // "--db: 1 required TEXT missing"
  if (const std::size_t at = what.find(": 1 required "); at != std::string::npos && at > 0 &&
      what.ends_with(" missing")) {
    return fmt::format("{} needs a value", what.substr(0, at));
  }
  // "json was given a disallowed flag override": quote the argument given.
  constexpr std::string_view kOverride = " was given a disallowed flag override";
  if (what.ends_with(kOverride)) {
    std::string name = what.substr(0, what.size() - kOverride.size());
    while (name.starts_with("-")) name.erase(0, 1);
    const std::string dashed = (name.size() == 1 ? "-" : "--") + name;
    const std::string prefix = dashed + "=";
    const auto given = std::find_if(OptionsBegin(args), OptionsEnd(args),
                                    [&](const std::string& a) { return a.starts_with(prefix); });
    return given == OptionsEnd(args)
               ? fmt::format("{} takes no value", dashed)
               : fmt::format("{} takes no value, got '{}'", dashed, *given);
  }
  return "";
}

// Reports why `args` did not parse (CLI11's `e`, or a call for help, which
// is answered); returns the exit code.
int ParseFailure(const CLI::App& app, const std::vector<cli::Command>& commands,
                 const std::vector<std::string>& args, const InlineValues& inline_values,
                 const CLI::ParseError& e) {
  const CLI::App* command = ParsedCommand(commands);
  const std::vector<std::string> after = AfterOptionsEnd(args);
  const bool help = dynamic_cast<const CLI::CallForHelp*>(&e) != nullptr ||
                    dynamic_cast<const CLI::CallForAllHelp*>(&e) != nullptr;
  if (help) {
    // -h after "--" is an argument: `purge P -- --help` must not print
    // the help and exit 0 having purged nothing.
    const bool asked = std::any_of(OptionsBegin(args), OptionsEnd(args),
                                   [](const std::string& a) { return a == "-h" || a == "--help"; });
    if (asked || after.empty()) return ExitAfterHelp(app, e);
    if (command == nullptr) return cli::Fail(cli::kExitUsage, NotACommand("--"));
    return cli::Fail(cli::kExitUsage,
                     NotTakenMessage(*command, NotTakenAfterOptionsEnd(*command, after)));
  }
  // `cat P --db --version 1`: the option taken as a value is the fault,
  // not the argument left over after it.
  if (command != nullptr) {
    if (std::string taken = OptionTakenAsValue(app, *command, inline_values, args);
        !taken.empty()) {
      return cli::Fail(cli::kExitUsage, taken);
    }
  }
  // `cat P -- --version 1`: arguments after "--" CLI11 read as options.
  const std::vector<std::string> rest = app.remaining();
  if (command != nullptr && !after.empty()) {
    const bool all_after = std::all_of(rest.begin(), rest.end(), [&](const std::string& r) {
      return std::find(after.begin(), after.end(), r) != after.end();
    });
    const std::vector<std::string> extras = NotTakenAfterOptionsEnd(*command, after);
    if (all_after && !extras.empty()) {
      return cli::Fail(cli::kExitUsage, NotTakenMessage(*command, extras));
    }
  }
  if (app.get_subcommands().empty() && !rest.empty()) {
    // CLI11 leaves "--version" of "--version=x", and SplitEmptyValues made
    // "--version" and "" of "--version=" (cat's --version takes a value).
    std::string first = rest.front();
    if (first == "--version" && args.size() > 1 && args[1].starts_with("--version=")) {
      first = args[1];
    } else if (first == "--version" && args.size() > 2 && args[1] == first && args[2].empty()) {
      first = "--version=";
    }
    return cli::Fail(cli::kExitUsage, NotACommand(first));
  }
  // CLI11 2.1 names the extra arguments last first.
  if (const std::vector<std::string> extras = app.remaining(true);
      dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && !extras.empty()) {
    return cli::Fail(cli::kExitUsage, NotExpected(command, extras));
  }
  if (std::string twice = GivenTwice(e); !twice.empty()) {
    return cli::Fail(cli::kExitUsage, twice);
  }
  if (std::string ours = InOurWords(e, args); !ours.empty()) {
    return cli::Fail(cli::kExitUsage, ours);
  }
  return cli::Fail(cli::kExitUsage, e.what());
}

}  // namespace

int main(int argc, char** argv) {
  // A write past `ulimit -f` fails with EFBIG and is reported as the failure
  // of that command ("File too large"), instead of killing the process.
  signal(SIGXFSZ, SIG_IGN);
  cli::GlobalOptions global;
  CLI::App app{"areev: a versioned memory store for Anthropic's memory tool",
               "areev"};
  app.require_subcommand(1);
  // An on/off option takes no value: CLI11 would read `--durable=0` as off
  // and `--event=no` as a fact, changing what a command writes. Set before
  // any option, so every subcommand's flags inherit it.
  app.option_defaults()->disable_flag_override();
  app.footer("areev --version prints the version. --db, --ns and --durable may also follow "
             "the subcommand. Exit codes and details: docs/cli.md");
  app.fallthrough();  // --db/--ns/--durable may follow the subcommand
  CLI::Option* db = app.add_option("--db", global.db,
                                   "Store file (default: $AREEV_DB, else ./agent.db)")
                        ->envname("AREEV_DB");
  CLI::Option* ns =
      app.add_option("--ns", global.ns, "Namespace (default: default)");
  app.add_flag("--durable", global.durable,
               "fsync every acknowledged write (Durability::kFull)");
  // "areev 0.1.0": the project version CMake declares (cli/CMakeLists.txt).
  // Only as the whole command line: a flag of the app would fall through to
  // every subcommand, and `areev purge P --version` would print it and exit 0
  // having purged nothing.
  if (argc == 2 && std::string_view(argv[1]) == "--version") {
    errno = 0;
    std::fputs("areev " AREEV_VERSION "\n", stdout);
    return std::fflush(stdout) == 0 && !std::ferror(stdout) ? cli::kExitOk
                                                             : cli::FailWritingStdout();
  }

  std::vector<cli::Command> commands;
  cli::AddMemtoolCommand(app, global, &commands);
  cli::AddVersionCommands(app, global, &commands);
  cli::AddLifecycleCommands(app, global, &commands);
  cli::AddFactCommands(app, global, &commands);
  cli::AddMountCommands(app, global, &commands);
  for (const cli::Command& command : commands) {
    if (command.app->get_name() == "umount") continue;  // uses no store
    command.app->footer("Also: --db FILE (default $AREEV_DB, else ./agent.db), --ns NAME "
                        "(default: default), --durable; see areev --help and docs/cli.md");
  }

  InlineValues inline_values;
  std::vector<std::string> args = SplitEmptyValues(app, argc, argv, &inline_values);
  std::vector<char*> arg_ptrs;
  for (std::string& arg : args) arg_ptrs.push_back(arg.data());
  try {
    app.parse(static_cast<int>(arg_ptrs.size()), arg_ptrs.data());
  } catch (const CLI::ParseError& e) {
    return ParseFailure(app, commands, args, inline_values, e);
  }
  // CLI11 skips an empty variable; a script that meant to name a store would
  // then write to ./agent.db wherever it runs.
  const bool uses_store = !app.got_subcommand("umount");
  if (const char* env = std::getenv("AREEV_DB");
      uses_store && db->count() == 0 && env != nullptr && *env == 0) {
    return cli::Fail(cli::kExitUsage,
                     "AREEV_DB is set but empty: set it to a store file, or unset it for "
                     "./agent.db");
  }
  global.ns_given = ns->count() > 0;
  // The mount's daemon maps its large buffers with huge pages instead
  // (docs/fusefs.md, "The daemon process").
  if (!app.got_subcommand("mount")) KeepLargeBlocksInTheHeap();
  for (const auto& command : commands) {
    if (!command.app->parsed()) continue;
    if (std::string taken = OptionTakenAsValue(app, *command.app, inline_values, args);
        !taken.empty()) {
      return cli::Fail(cli::kExitUsage, taken);
    }
    if (const std::vector<std::string> extras =
            NotTakenAfterOptionsEnd(*command.app, AfterOptionsEnd(args));
        !extras.empty()) {
      return cli::Fail(cli::kExitUsage, NotTakenMessage(*command.app, extras));
    }
    try {
      return command.run();
    } catch (const std::bad_alloc&) {
      // Under a tight `ulimit -v` (a large body, a long history): one line
      // and an exit code, not an abort. A write either committed before or
      // did not happen (SQLite's transactions).
      return cli::Fail(cli::kExitFailed,
                       fmt::format("{}: out of memory", command.app->get_name()));
    }
  }
  return cli::Fail(cli::kExitUsage, "no subcommand given");
}
