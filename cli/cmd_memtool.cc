// `areev memtool`: the memory tool from the shell.
//
// Single mode prints the tool_result content verbatim (no newline added) and
// exits 0, or 1 when is_error. Input the contract rejects before it looks at
// a store (malformed JSON, a bad parameter or path) is answered without
// opening the store, so it creates none. Batch mode reads one JSON command per stdin
// line and writes one memtool::ToJsonLine per command. A store failure that
// the contract reports as `Storage operation failed` also logs the store's
// own message on stderr.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.h"
#include "memtool/memtool.h"

namespace cli {
namespace {

struct MemtoolArgs {
  std::string json;
  bool json_given = false;
  bool batch = false;
};

// Appends up to `n` bytes of `data` to `out`, which is kept to one byte past
// memtool::kMaxInputBytes; its capacity grows by doubling but never past that
// bound, so that a command at the limit is not held in a buffer twice as
// large.
void AppendCapped(std::string* out, const char* data, std::size_t n) {
  constexpr std::size_t kCap = memtool::kMaxInputBytes + 1;
  const std::size_t take = std::min(n, kCap - std::min(out->size(), kCap));
  if (out->size() + take > out->capacity()) {
    // Into a new string: reserve() on this one would double whatever it is
    // asked for that is under twice its capacity, past the bound.
    std::string grown;
    grown.reserve(std::min(std::max(out->capacity() * 2, out->size() + take), kCap));
    grown.append(*out);
    out->swap(grown);
  }
  out->append(data, take);
}

// Reads stdin to its end, or to one byte past memtool::kMaxInputBytes (the
// command is then refused as too large, unread bytes and all); false (errno
// set) when it cannot be read: closed, a directory. Plain read(2): a stream
// would throw from inside its buffer.
bool ReadStdinCommand(std::string* out) {
  char buf[1 << 16];
  while (out->size() <= memtool::kMaxInputBytes) {
    const ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
    if (n > 0) {
      AppendCapped(out, buf, static_cast<std::size_t>(n));
    } else if (n == 0) {
      return true;
    } else if (errno != EINTR) {
      return false;
    }
  }
  return true;
}

// The lines of stdin, each kept to one byte past memtool::kMaxInputBytes:
// the rest of a longer line is read and dropped, so that the line is refused
// as too large without being held whole.
class StdinLines {
 public:
  // The next line, without its '\n'; false at the end of input or when a
  // read fails (failed() then says so, errno set).
  bool Next(std::string* line) {
    line->clear();
    bool any = false;
    for (;;) {
      if (pos_ == end_ && !Fill()) return any && !failed_;
      any = true;
      const char* start = buf_ + pos_;
      const char* newline = static_cast<const char*>(std::memchr(start, '\n', end_ - pos_));
      const std::size_t len = newline != nullptr ? newline - start : end_ - pos_;
      AppendCapped(line, start, len);
      pos_ += len;
      if (newline != nullptr) {
        ++pos_;
        return true;
      }
    }
  }
  bool failed() const { return failed_; }

  // Reads and drops the rest of the current line (after a line that could
  // not be held): the next line then starts after its newline.
  void DropRestOfLine() {
    for (;;) {
      if (pos_ == end_ && !Fill()) return;
      const char* start = buf_ + pos_;
      const char* newline = static_cast<const char*>(std::memchr(start, '\n', end_ - pos_));
      if (newline != nullptr) {
        pos_ += newline - start + 1;
        return;
      }
      pos_ = end_;
    }
  }

 private:
  bool Fill() {
    if (eof_) return false;  // a terminal would wait for more
    for (;;) {
      const ssize_t n = read(STDIN_FILENO, buf_, sizeof buf_);
      if (n > 0) {
        pos_ = 0;
        end_ = static_cast<std::size_t>(n);
        return true;
      }
      if (n == 0) {
        eof_ = true;
        return false;
      }
      if (errno != EINTR) {
        failed_ = true;
        return false;
      }
    }
  }

  char buf_[1 << 16];
  std::size_t pos_ = 0;
  std::size_t end_ = 0;
  bool eof_ = false;
  bool failed_ = false;
};

// A store failure's own message goes to stderr; stdout keeps the contract's.
void LogDetail(const memtool::ToolResult& result) {
  if (!result.detail.empty()) (void)Fail(kExitFailed, "memtool: " + WithLockWait(result.detail));
}

// The store, opened at the first command that needs it, so that a session
// of bad input leaves no store behind where there was none.
class LazyTool {
 public:
  explicit LazyTool(const GlobalOptions& global) : global_(global) {}

  bool opened() const { return tool_.has_value(); }

  // The tool, or nullptr with *code set when the store cannot be opened.
  memtool::MemoryTool* Get(int* code) {
    if (!tool_) {
      if (!OpenSession(global_, Access::kWrite, &session_, code)) return nullptr;
      tool_.emplace(session_.store.get(), session_.ns);
    }
    return &*tool_;
  }

 private:
  const GlobalOptions& global_;
  Session session_;
  std::optional<memtool::MemoryTool> tool_;
};

// One command's result: until the store is open, the input's own error
// without it; else the store's answer, whose store failure (if any) is
// logged to stderr. nullopt (with *code set) when the store cannot be opened.
std::optional<memtool::ToolResult> Answer(LazyTool& lazy, const std::string& command,
                                          int* code) {
  if (!lazy.opened()) {
    if (auto rejected = memtool::RejectedWithoutStore(command)) return rejected;
  }
  memtool::MemoryTool* tool = lazy.Get(code);
  if (tool == nullptr) return std::nullopt;
  memtool::ToolResult result = tool->Execute(command);
  LogDetail(result);
  return result;
}

// The result line of a command this process had no memory to hold or answer
// (a large body under a tight `ulimit -v`), as the tool answers one it runs
// out of memory in.
constexpr char kOutOfMemoryLine[] =
    R"({"content": "Error: Out of memory", "is_error": true})"
    "\n";

// One batch line read, answered and printed. kExitOk to go on; otherwise the
// exit code to end the batch with.
int BatchLine(LazyTool& lazy, const std::string& line) {
  int code = kExitOk;
  const std::optional<memtool::ToolResult> answered = Answer(lazy, line, &code);
  if (!answered) return code;
  std::string out = memtool::ToJsonLine(*answered);
  if (out.empty() || out.back() != '\n') out.push_back('\n');
  return Emit(out) == kExitOk ? kExitOk : kExitFailed;
}

int RunBatch(LazyTool& lazy) {
  auto lines = std::make_unique<StdinLines>();
  std::string line;
  for (;;) {
    errno = 0;  // what a failed read leaves is its reason
    bool read_whole = false;
    int code = kExitOk;
    try {
      if (!lines->Next(&line)) break;
      read_whole = true;
      // A line kept cut at one byte past the limit stays over it.
      if (!line.empty() && line.back() == '\r' && line.size() <= memtool::kMaxInputBytes) {
        line.pop_back();
      }
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      code = BatchLine(lazy, line);
    } catch (const std::bad_alloc&) {
      // The line, or its answer, did not fit in memory: it fails alone, and
      // the batch goes on with the next line.
      std::string().swap(line);
      if (!read_whole) lines->DropRestOfLine();
      (void)Fail(kExitFailed, "memtool: out of memory while reading or answering a command");
      code = Emit(kOutOfMemoryLine) == kExitOk ? kExitOk : kExitFailed;
    }
    if (code != kExitOk) return code;
  }
  if (lines->failed()) {
    return Fail(kExitFailed,
                fmt::format("reading stdin failed: {}", std::strerror(errno ? errno : EIO)));
  }
  return kExitOk;
}

// One command (given, or read from stdin with "-"), answered on stdout.
int RunOne(const GlobalOptions& global, const std::string& given) {
  std::string command;
  try {
    command = given;
    if (command == "-") {
      command.clear();
      if (!ReadStdinCommand(&command)) {
        return Fail(kExitFailed, fmt::format("reading stdin failed: {}", std::strerror(errno)));
      }
    }
    int code = kExitOk;
    LazyTool lazy(global);
    const std::optional<memtool::ToolResult> answered = Answer(lazy, command, &code);
    if (!answered) return code;
    if (Emit(answered->content) != kExitOk) return kExitFailed;
    return answered->is_error ? kExitFailed : kExitOk;
  } catch (const std::bad_alloc&) {
    // As the tool answers a command it runs out of memory in.
    std::string().swap(command);
    (void)Fail(kExitFailed, "memtool: out of memory while reading or answering the command");
    (void)Emit("Error: Out of memory");
    return kExitFailed;
  }
}

int RunMemtool(const GlobalOptions& global, const MemtoolArgs& args) {
  if (args.batch && args.json_given) {
    return Fail(kExitUsage, "memtool: give a JSON command or --batch, not both");
  }
  if (!args.batch && !args.json_given) {
    return Fail(kExitUsage, "memtool: give one JSON command (or - for stdin), or --batch");
  }
  int code = kExitOk;
  if (!CheckStoreOptions(global, &code)) return code;
  if (!args.batch) return RunOne(global, args.json);
  // A closed stdin must be found before the store is opened: SQLite puts
  // /dev/null on descriptors 0-2 that are free, which would read as empty.
  if (fcntl(STDIN_FILENO, F_GETFD) == -1) {
    return Fail(kExitFailed, fmt::format("reading stdin failed: {}", std::strerror(errno)));
  }
  LazyTool lazy(global);
  // A store that exists is opened before any command runs, so that a failure
  // to open it (or its namespace) comes before any result line; a missing one
  // is created by the first command that needs it.
  std::error_code ec;
  if ((std::filesystem::exists(global.db, ec) || ec) && lazy.Get(&code) == nullptr) {
    return code;
  }
  return RunBatch(lazy);
}

}  // namespace

void AddMemtoolCommand(CLI::App& app, const GlobalOptions& global,
                       std::vector<Command>* out) {
  auto args = std::make_shared<MemtoolArgs>();
  CLI::App* sub = app.add_subcommand(
      "memtool",
      "Run memory-tool JSON commands (memory_20250818) against the store");
  CLI::Option* json_opt =
      sub->add_option("command", args->json,
                      "One JSON command object, or - to read it from stdin");
  sub->add_flag(
      "--batch", args->batch,
      "Read one JSON command per stdin line; print one JSON result per line");
  out->push_back({sub, [&global, args, json_opt] {
                    args->json_given = json_opt->count() > 0;
                    return RunMemtool(global, *args);
                  }});
}

}  // namespace cli
