// binding_core: the language-neutral part of the Python and Node bindings. One
// Handle owns an open grainstore::Store plus one namespace and answers the
// calls both bindings expose (memory-tool JSON, history, version reads). It
// never throws; failures come back as a BindingError with a kind the bindings
// map onto their own exception types.
#ifndef AREEV_BINDINGS_CORE_BINDING_CORE_H_
#define AREEV_BINDINGS_CORE_BINDING_CORE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "grainstore/store.h"
#include "memtool/memtool.h"

namespace areev_binding {

// How a binding should surface a failure.
enum class ErrorKind : std::uint8_t {
  kNone = 0,
  kTool,          // a memory-tool error: the bare tool message (ValueError / Error)
  kInvalid,       // bad argument: namespace name, path, version selector
  kNotFound,      // no such file / version / history
  kClosed,        // the handle was closed
  kStore,         // the store failed (I/O, busy, corruption, ...)
};

struct BindingError {
  ErrorKind kind = ErrorKind::kNone;
  std::string message;
  int sys_errno = 0;  // kStore: the errno behind it (grainstore::ErrnoOf), else 0
  // kTool: for `Storage operation failed ...`, the store's own message
  // (memtool::ToolResult::detail: for the application's log, not the
  // model); else "".
  std::string detail;
  bool ok() const { return kind == ErrorKind::kNone; }
};

// One version of a memory file, as both bindings return it.
struct VersionRow {
  std::uint32_t version = 0;
  std::string grain_id;
  std::string created;  // ISO 8601 UTC with microseconds, e.g. 2026-11-30T08:45:42.123456Z
  std::int64_t created_ns = 0;
  std::uint64_t size = 0;
  std::string op;
  std::string subject;
  bool transient = false;
  bool purged = false;      // the body was erased by `areev purge`
  std::string chain_state;  // "live", "deleted" or "purged": the file's, on every row
};

// Handle: thread-safe. Every method may be called from any thread, at the same
// time as any other method, close included. Close() makes later calls fail with
// kClosed; calls already running finish on the store, which is closed when the
// last of them returns.
class Handle {
 public:
  // Opens the store file at `path` (created if missing) and resolves (creating
  // if missing) namespace `ns`. `durable` selects fsync-per-write. On failure
  // returns nullptr and fills `error` (kInvalid for a bad namespace name, kStore
  // otherwise).
  static std::unique_ptr<Handle> Open(const std::string& path, std::string_view ns,
                                      bool durable, BindingError* error);

  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() = default;

  // Runs one memory-tool command (JSON object text). On success returns the
  // tool_result content; on a tool error fills `error` (kTool, bare message).
  std::string MemoryTool(std::string_view json, BindingError* error);

  // Versions of the memory file at raw path `path` (oldest first), or of the
  // file most recently deleted there. kInvalid (bad path), kNotFound.
  std::vector<VersionRow> History(std::string_view path, BindingError* error);

  // Body of the file at `path`: the current one when `version` is empty,
  // otherwise the version numbered `version` ("3") or whose grain id starts
  // with it (>= 6 hex chars). kInvalid, kNotFound, kStore.
  // `version`: "" for the current body, else a version spec (number or
  // grain-id prefix). `by_number`: the caller passed a number (a typed int),
  // which names only a version number, never a grain-id prefix of digits.
  std::string Read(std::string_view path, std::string_view version, BindingError* error,
                   bool by_number = false);

  // A second handle on the same open store that stays usable after Close() of
  // this one (the store closes when every handle is gone). Lets an async call
  // made before Close() finish after it. nullptr and kClosed once closed.
  std::unique_ptr<Handle> Pin(BindingError* error) const;

  // Marks the handle closed. Idempotent. Returns false if it was already closed.
  bool Close();
  bool closed() const;

 private:
  struct Shared;  // the store and the tool, kept alive by running calls
  explicit Handle(std::shared_ptr<Shared> shared);
  // The open state, or nullptr (and kClosed in `error`) once closed.
  std::shared_ptr<Shared> Acquire(BindingError* error) const;

  mutable std::mutex mu_;
  std::shared_ptr<Shared> shared_;  // guarded by mu_; null once closed
};

}  // namespace areev_binding

#endif  // AREEV_BINDINGS_CORE_BINDING_CORE_H_
