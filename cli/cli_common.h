// Shared plumbing of the `areev` command line: global options, opening the
// store, and the one mapping from grainstore::Status to the documented exit
// codes (docs/cli.md, "Exit codes"). Every subcommand reports errors through
// ReportError so the messages and codes stay uniform.
#ifndef CLI_CLI_COMMON_H_
#define CLI_CLI_COMMON_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "grainstore/result.h"
#include "grainstore/status.h"
#include "grainstore/store.h"

namespace CLI {
class App;
}  // namespace CLI

namespace cli {

// The stable exit codes of every subcommand (docs/cli.md).
enum ExitCode : int {
  kExitOk = 0,      // success
  kExitFailed = 1,  // not found, conflict, tool error, operation failed
  kExitUsage = 2,   // bad usage: unknown flag, missing or invalid argument
  kExitStore = 3,   // the store cannot be opened, or it is corrupt
};

// Options shared by all subcommands, parsed on the top-level app.
struct GlobalOptions {
  std::string db = "agent.db";  // --db, else $AREEV_DB, else ./agent.db
  std::string ns = "default";   // --ns
  bool ns_given = false;        // --ns appeared on the command line
  bool durable = false;         // --durable: Durability::kFull
};

// Whether a command may create the store file and the namespace.
enum class Access { kReadOnly, kWrite };

// An open store plus the resolved namespace.
struct Session {
  std::unique_ptr<grainstore::Store> store;
  grainstore::NsId ns = 0;
};

// A parsed subcommand and the function that runs it (returns an exit code).
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// The exit code for a failed library call (kExitOk for an OK status):
// InvalidArgument -> usage (2), Corruption -> store (3), everything else -> 1.
int ExitCodeFor(const grainstore::Status& status);

// `text` with, when it is SQLite's "database is locked" (said once the busy
// timeout ran out), how long it waited and what to do: "...: waited 30 s for
// another process's write lock; try again once it lets go".
std::string WithLockWait(std::string text);

// Prints "areev: <what>: <message>" to stderr and returns ExitCodeFor(status).
int ReportError(std::string_view what, const grainstore::Status& status);

// What WithMovedNote read on its way: the newest chain at the key (none
// when no file lay there or the store could not say), and whether it named
// a move.
struct MovedNoteFindings {
  std::optional<grainstore::ChainInfo> latest;
  bool moved = false;
};

// `status`, plus "; moved away at T, now at P" when it is NotFound and the
// op-log says the file that lay at `key` was moved away since
// (Store::ForEachMoveAwayFrom): a user asking for a file by its old path
// learns where it went. `found`, when given, receives what it read.
grainstore::Status WithMovedNote(const Session& s, std::string_view key,
                                 const grainstore::Status& status,
                                 MovedNoteFindings* found = nullptr);

// Prints "areev: <message>" to stderr and returns `code`.
int Fail(int code, std::string_view message);

// The checks of --ns and --db that need no store: the namespace's name and
// what Store::Open checks of the path before opening anything. On failure
// prints the error as OpenSession would and sets *exit_code (2, or 3 for a
// path that names no file: a directory, a device). For a command that
// answers some input without opening the store (memtool), or that opens it
// elsewhere (mount).
bool CheckStoreOptions(const GlobalOptions& global, int* exit_code);

// Opens the store named by `global` into session->store (ns left 0). kWrite
// creates a missing file; kReadOnly requires it. On failure prints the error
// and sets *exit_code (3, or 2 for an invalid argument).
bool OpenStore(const GlobalOptions& global, Access access, Session* session,
               int* exit_code);

// Opens the store named by `global` and resolves the namespace. kWrite creates
// the file and the namespace when missing; kReadOnly requires both to exist.
// On failure prints the error and sets *exit_code (3 when the file cannot be
// opened or is not a store, 1 for a missing namespace, 2 for a bad ns name).
bool OpenSession(const GlobalOptions& global, Access access, Session* session,
                 int* exit_code);

// The subject `command` takes either as an argument or as --subject (both
// given must agree), in *subject; `names` says how, e.g. "PATH or --subject".
// Otherwise prints why and sets *exit_code to kExitUsage.
bool SubjectGivenOnce(std::string_view command, std::string_view names, const std::string& arg,
                      const std::string& option, std::string* subject, int* exit_code);

// Normalises a memory-file path argument ("/memories/a.md"). On failure prints
// the contract message and sets *exit_code to kExitUsage.
bool ParsePathArg(std::string_view raw, std::string* key, int* exit_code);

// Writes bytes to stdout verbatim and flushes. Returns kExitOk, or prints
// "areev: cannot write to stdout: <reason>" and returns kExitFailed.
int Emit(std::string_view data);
// Emit without the flush: output printed piece by piece as it is read (a
// long log), ended by an Emit.
int EmitPart(std::string_view data);

// Prints "areev: cannot write to stdout: <reason>" (errno's, else EIO's) and
// returns kExitFailed: for output that did not reach stdout.
int FailWritingStdout();

}  // namespace cli

#endif  // CLI_CLI_COMMON_H_
