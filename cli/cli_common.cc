// Status -> exit code mapping, store opening and small I/O helpers.
#include "cli_common.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "grainstore/display_text.h"
#include "grainstore/options.h"
#include "grainstore/path.h"
#include "grainstore/time_format.h"
#include "output.h"

namespace cli {

int ExitCodeFor(const grainstore::Status& status) {
  using grainstore::StatusCode;
  switch (status.code()) {
    case StatusCode::kOk:
      return kExitOk;
    case StatusCode::kInvalidArgument:
      return kExitUsage;
    case StatusCode::kCorruption:
      return kExitStore;
    default:
      return kExitFailed;
  }
}

int Fail(int code, std::string_view message) {
  // One line whatever the message quotes (a name with a newline in it).
  // stderr may be closed or full; the exit code still says what happened.
  // A usage error points at the help, unless it already does.
  const bool add_help = code == kExitUsage && !message.ends_with("run with --help") &&
                        !message.ends_with("Run with --help for more information.");
  const std::string shown = grainstore::DisplayText(message, 0, grainstore::Malformed::kEscape);
  const std::string line =
      fmt::format("areev: {}{}\n", shown, add_help ? "; run with --help" : "");
  (void)std::fwrite(line.data(), 1, line.size(), stderr);
  (void)std::fflush(stderr);
  return code;
}

namespace {

// The store this process opened (a command opens one), named in reports of
// damage found in it after the open.
std::string& OpenedStorePath() {
  static std::string path;
  return path;
}

}  // namespace

std::string WithLockWait(std::string text) {
  if (!text.ends_with("database is locked")) return text;
  const int seconds = grainstore::Options{}.busy_timeout_ms / 1000;
  return fmt::format("{}: waited {} s for another process's write lock; try again once it "
                     "lets go",
                     text, seconds);
}

int ReportError(std::string_view what, const grainstore::Status& status) {
  std::string text = WithLockWait(status.message());
  if (text.empty())
    text = std::string(grainstore::StatusCodeName(status.code()));
  if (status.code() == grainstore::StatusCode::kCorruption && !OpenedStorePath().empty()) {
    text += fmt::format(" (in the store {})", OpenedStorePath());
  }
  return Fail(ExitCodeFor(status), fmt::format("{}: {}", what, text));
}

grainstore::Status WithMovedNote(const Session& s, std::string_view key,
                                 const grainstore::Status& status, MovedNoteFindings* found) {
  MovedNoteFindings unused;
  if (found == nullptr) found = &unused;
  *found = MovedNoteFindings{};
  if (!status.IsNotFound()) return status;
  // A file at `key` since a move away is what the path names (a deleted one:
  // cat finds no live file there, history and restore find it): a move counts
  // only if every file that lay at `key` was gone by then.
  std::int64_t last_there_ns = 0;
  if (auto latest = s.store->FindChain(s.ns, key); latest.has_value()) {
    found->latest = *latest;
    if (latest->state == grainstore::ChainState::kLive) return status;
    last_there_ns = latest->deleted_ns;
  }
  // The file that left: the chain its own rename names, or one of the files
  // where a directory's renames lead that has a version written at `key`
  // (they also "move" names under it that never held a file).
  auto lay_at_key = [&](grainstore::ChainId id) {
    bool there = false;
    std::string last;
    const grainstore::Status read = s.store->ForEachVersion(id, [&](const auto& v) {
      there = there || v.subject == key;
      last = v.subject;
      return true;
    });
    return read.ok() && there ? last : std::string();
  };
  // A directory renamed after the file had left it moved nothing: the note
  // names the newest move that carried a file from `key`, among the last few.
  constexpr int kMovesTried = 16;
  std::optional<grainstore::Status> noted;
  const grainstore::Status read = s.store->ForEachMoveAwayFrom(
      s.ns, key, kMovesTried, [&](const grainstore::Store::MovedAway& away) {
        if (away.at_ns < last_there_ns) return false;  // newest first: the rest are older
        std::optional<grainstore::ChainInfo> left;
        std::string now_at;
        if (away.chain != 0) {
          now_at = lay_at_key(away.chain);
          if (now_at.empty()) return true;
          auto chain = s.store->ChainAt(s.ns, now_at, away.chain, grainstore::kMemoryFileRelation);
          if (chain.has_value()) left = std::move(*chain);
        } else {
          // The last place on the renames' way where a file from `key` lies:
          // one deleted there stays while the renames after it go on.
          for (auto place = away.places.rbegin(); place != away.places.rend() && !left; ++place) {
            auto chains = s.store->ChainsAt(s.ns, *place, grainstore::kMemoryFileRelation);
            if (!chains.has_value()) continue;
            for (const grainstore::ChainInfo& chain : *chains) {
              if (lay_at_key(chain.id) == *place) {
                left = chain;
                now_at = *place;
                break;
              }
            }
          }
        }
        if (!left || now_at == key) return true;
        std::string note = fmt::format("{}; moved away at {}, now at {}", status.message(),
                                       grainstore::FormatIsoUtc(away.at_ns), now_at);
        if (left->state != grainstore::ChainState::kLive) {
          note += fmt::format(" ({} there at {})", grainstore::ChainStateName(left->state),
                              grainstore::FormatIsoUtc(grainstore::ChainEndNs(*left)));
        }
        noted = grainstore::Status::NotFound(std::move(note));
        return false;
      });
  found->moved = read.ok() && noted.has_value();
  return found->moved ? *std::move(noted) : status;
}

namespace {

// The store's path as a message shows it: quoted when blanks at its ends
// (or nothing but blanks) would otherwise not be seen.
std::string StorePathText(std::string_view path) {
  const bool edges_blank = !path.empty() && (grainstore::IsBlankText(path.substr(0, 1)) ||
                                             grainstore::IsBlankText(path.substr(path.size() - 1)));
  if (grainstore::IsBlankText(path) || edges_blank) return fmt::format("'{}'", path);
  return std::string(path);
}

// Why a store that does not exist cannot be read: a symbolic link is named
// with where it points.
std::string Absent(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(path, ec))) {
    const std::filesystem::path target = std::filesystem::read_symlink(path, ec);
    if (!ec) {
      return fmt::format("it is a symbolic link to {}, which does not exist (only commands that "
                         "write create a store)", target.string());
    }
  }
  return "no such file (only commands that write create a store)";
}

// Reports a failure to open the store; returns the exit code.
int OpenFailure(const GlobalOptions& global, Access access, const grainstore::Status& st) {
  // Any failure to open (missing, unreadable, not a store, newer schema) is
  // "the store cannot be opened"; a bad argument stays a usage error, and a
  // store another process kept locked past the busy timeout is a failed
  // operation, as it is once open (docs/cli.md, exit codes).
  const int code = st.code() == grainstore::StatusCode::kInvalidArgument ? kExitUsage
                   : st.code() == grainstore::StatusCode::kBusy          ? kExitFailed
                                                                        : kExitStore;
  std::string why = WithLockWait(st.message().empty() ? st.ToString() : st.message());
  // Only a file known to be absent: one in a directory the user may not
  // search is not known to exist or not (exists() fails with EACCES), and
  // the store's own message says so.
  std::error_code ec;
  if (access == Access::kReadOnly && st.code() != grainstore::StatusCode::kInvalidArgument &&
      !std::filesystem::exists(global.db, ec) && !ec) {
    why = Absent(global.db);
  }
  return Fail(code, fmt::format("cannot open store {}: {}", StorePathText(global.db), why));
}

// "; it has namespaces a, b (choose one with --ns NAME)": the first few the
// store has, by name, for a command that named none it has. "" when they
// cannot be listed.
std::string NamespacesHint(grainstore::Store& store) {
  constexpr std::size_t kNamed = 5;
  auto names = store.ListNamespaces();
  if (!names.has_value()) return "";
  if (names->empty()) return " (the store has no namespace yet)";
  const std::size_t more = names->size() > kNamed ? names->size() - kNamed : 0;
  names->resize(names->size() - more);
  return fmt::format("; it has namespace{} {}{} (choose one with --ns NAME)",
                     names->size() + more > 1 ? "s" : "", fmt::join(*names, ", "),
                     more > 0 ? fmt::format(" and {} more", more) : "");
}

}  // namespace

bool CheckStoreOptions(const GlobalOptions& global, int* exit_code) {
  // A bad name is a usage error, found before the store is opened, so that
  // it creates no store file.
  if (auto valid = grainstore::Store::CheckNamespaceName(global.ns); !valid.ok()) {
    *exit_code = ReportError("--ns", valid);
    return false;
  }
  if (auto valid = grainstore::Store::CheckPath(global.db); !valid.ok()) {
    *exit_code = OpenFailure(global, Access::kWrite, valid);
    return false;
  }
  return true;
}

bool OpenStore(const GlobalOptions& global, Access access, Session* session,
               int* exit_code) {
  grainstore::Options options;
  options.durability = global.durable ? grainstore::Durability::kFull
                                      : grainstore::Durability::kNormal;
  options.create_if_missing = access == Access::kWrite;
  auto opened = grainstore::Store::Open(global.db, options);
  if (!opened.has_value()) {
    *exit_code = OpenFailure(global, access, opened.error());
    return false;
  }
  session->store = std::move(opened).value();
  OpenedStorePath() = global.db;
  return true;
}

bool OpenSession(const GlobalOptions& global, Access access, Session* session,
                 int* exit_code) {
  if (auto valid = grainstore::Store::CheckNamespaceName(global.ns); !valid.ok()) {
    *exit_code = ReportError("--ns", valid);
    return false;
  }
  if (!OpenStore(global, access, session, exit_code)) return false;
  auto ns = access == Access::kWrite ? session->store->Namespace(global.ns)
                                     : session->store->FindNamespace(global.ns);
  if (!ns.has_value()) {
    if (ns.error().IsNotFound()) {
      *exit_code = Fail(kExitFailed, fmt::format("namespace {} not found in {}{}", global.ns,
                                                 StorePathText(global.db), NamespacesHint(*session->store)));
    } else {
      *exit_code = ReportError(fmt::format("namespace {}", global.ns), ns.error());
    }
    return false;
  }
  session->ns = ns.value();
  return true;
}

bool SubjectGivenOnce(std::string_view command, std::string_view names, const std::string& arg,
                      const std::string& option, std::string* subject, int* exit_code) {
  if (!arg.empty() && !option.empty() && arg != option) {
    *exit_code = Fail(kExitUsage, fmt::format("{}: give the subject once ({})", command, names));
    return false;
  }
  *subject = arg.empty() ? option : arg;
  if (subject->empty()) {
    *exit_code = Fail(kExitUsage, fmt::format("{}: a subject is required ({})", command, names));
    return false;
  }
  return true;
}

bool ParsePathArg(std::string_view raw, std::string* key, int* exit_code) {
  auto parsed = grainstore::ParseMemoryPath(raw);
  if (!parsed.has_value()) {
    *exit_code = Fail(kExitUsage, fmt::format("path: {}", parsed.error().message()));
    return false;
  }
  *key = parsed->key;
  return true;
}

int Emit(std::string_view data) {
  if (EmitPart(data) != kExitOk) return kExitFailed;
  if (std::fflush(stdout) == 0) return kExitOk;
  return FailWritingStdout();
}

int EmitPart(std::string_view data) {
  errno = 0;
  if (data.empty() || std::fwrite(data.data(), 1, data.size(), stdout) == data.size()) {
    return kExitOk;
  }
  return FailWritingStdout();
}

int FailWritingStdout() {
  return Fail(kExitFailed, fmt::format("cannot write to stdout: {}",
                                       std::strerror(errno ? errno : EIO)));
}

}  // namespace cli
