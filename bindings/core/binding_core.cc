#include "binding_core.h"

#include <optional>
#include <string>
#include <utility>

#include "grainstore/path.h"
#include "grainstore/version_spec.h"
#include "grainstore/time_format.h"

namespace areev_binding {

struct Handle::Shared {
  std::unique_ptr<grainstore::Store> store;
  grainstore::NsId ns = 0;
  std::unique_ptr<memtool::MemoryTool> tool;
};

namespace {

ErrorKind KindOf(const grainstore::Status& status) {
  switch (status.code()) {
    case grainstore::StatusCode::kOk:
      return ErrorKind::kNone;
    case grainstore::StatusCode::kNotFound:
      return ErrorKind::kNotFound;
    case grainstore::StatusCode::kInvalidArgument:
    case grainstore::StatusCode::kIsADirectory:
    case grainstore::StatusCode::kNotADirectory:
      return ErrorKind::kInvalid;
    default:
      return ErrorKind::kStore;
  }
}

void Fail(const grainstore::Status& status, BindingError* error) {
  error->kind = KindOf(status);
  error->message = status.message().empty() ? status.ToString() : status.message();
  error->sys_errno = grainstore::ErrnoOf(status);
}

// The namespace `ns` of the store at `path`, created when missing. A failure
// names the store and the step ("cannot create namespace work in store
// own.db: the store cannot be written: ..."), as the CLI's does.
std::optional<grainstore::NsId> OpenNamespace(grainstore::Store& store, const std::string& path,
                                              std::string_view ns, BindingError* error) {
  auto found = store.FindNamespace(ns);
  const bool missing = !found.has_value() && found.error().IsNotFound();
  auto ns_id = missing ? store.Namespace(ns) : std::move(found);
  if (ns_id.has_value()) return *ns_id;
  Fail(ns_id.error(), error);
  error->message = "cannot " + std::string(missing ? "create" : "open") + " namespace " +
                   std::string(ns) + " in store " + path + ": " + error->message;
  return std::nullopt;
}

}  // namespace

Handle::Handle(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}

std::unique_ptr<Handle> Handle::Open(const std::string& path, std::string_view ns,
                                     bool durable, BindingError* error) {
  // A bad name is refused before the store is opened: it creates no file.
  if (auto valid = grainstore::Store::CheckNamespaceName(ns); !valid.ok()) {
    Fail(valid, error);
    return nullptr;
  }
  grainstore::Options options;
  options.durability =
      durable ? grainstore::Durability::kFull : grainstore::Durability::kNormal;
  auto store = grainstore::Store::Open(path, options);
  if (!store.has_value()) {
    Fail(store.error(), error);
    if (error->kind != ErrorKind::kInvalid) {
      error->kind = ErrorKind::kStore;
      error->message = "cannot open store " + path + ": " + error->message;
    }
    return nullptr;
  }
  auto ns_id = OpenNamespace(**store, path, ns, error);
  if (!ns_id.has_value()) return nullptr;
  auto shared = std::make_shared<Shared>();
  shared->store = std::move(store).value();
  shared->ns = *ns_id;
  shared->tool = std::make_unique<memtool::MemoryTool>(shared->store.get(), shared->ns);
  return std::unique_ptr<Handle>(new Handle(std::move(shared)));
}

std::shared_ptr<Handle::Shared> Handle::Acquire(BindingError* error) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!shared_) {
    error->kind = ErrorKind::kClosed;
    error->message = "the Areev handle is closed";
  }
  return shared_;
}

std::unique_ptr<Handle> Handle::Pin(BindingError* error) const {
  auto shared = Acquire(error);
  if (!shared) return nullptr;
  return std::unique_ptr<Handle>(new Handle(std::move(shared)));
}

bool Handle::Close() {
  std::shared_ptr<Shared> last;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!shared_) return false;
    last = std::move(shared_);
  }
  // `last` drops here, outside the lock: closing the store may wait on SQLite.
  return true;
}

bool Handle::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return shared_ == nullptr;
}

std::string Handle::MemoryTool(std::string_view json, BindingError* error) {
  auto shared = Acquire(error);
  if (!shared) return {};
  memtool::ToolResult result = shared->tool->Execute(json);
  if (result.is_error) {
    error->kind = ErrorKind::kTool;
    error->message = std::move(result.message);
    error->detail = std::move(result.detail);
    return {};
  }
  return std::move(result.content);
}

std::vector<VersionRow> Handle::History(std::string_view path, BindingError* error) {
  std::vector<VersionRow> rows;
  auto shared = Acquire(error);
  if (!shared) return rows;
  auto parsed = grainstore::ParseMemoryPath(path);
  if (!parsed.has_value()) {
    Fail(parsed.error(), error);
    error->kind = ErrorKind::kInvalid;
    return rows;
  }
  // The chain first, then its versions: the state on the rows is that
  // chain's even if another process deletes or re-creates the file between.
  auto chain = shared->store->FindChain(shared->ns, parsed->key);
  if (!chain.has_value()) {
    Fail(chain.error(), error);
    return rows;
  }
  const char* state = grainstore::ChainStateName(chain->state);
  // Page by page: a long history is held once, as rows, not twice.
  const grainstore::Status read =
      shared->store->ForEachVersion(chain->id, [&](const grainstore::VersionInfo& v) {
        VersionRow row;
        row.version = v.seq;
        row.grain_id = v.grain_id;
        row.created = grainstore::FormatIsoUtc(v.created_ns, 6);
        row.created_ns = v.created_ns;
        row.size = v.size;
        row.op = v.op;
        row.subject = v.subject;
        row.transient = v.transient;
        row.purged = v.purged;
        row.chain_state = state;
        rows.push_back(std::move(row));
        return true;
      });
  if (!read.ok()) {
    Fail(read, error);
    return {};
  }
  return rows;
}

std::string Handle::Read(std::string_view path, std::string_view version,
                         BindingError* error, bool by_number) {
  auto shared = Acquire(error);
  if (!shared) return {};
  auto parsed = grainstore::ParseMemoryPath(path);
  if (!parsed.has_value()) {
    Fail(parsed.error(), error);
    error->kind = ErrorKind::kInvalid;
    return {};
  }
  // Digits long enough to be a grain-id prefix name a version by that prefix
  // when no version has that number; a typed number must not.
  if (by_number && version.size() >= grainstore::kMinGrainPrefix) {
    // One probe of the chain History shows, not its whole list.
    auto chain = shared->store->FindChain(shared->ns, parsed->key);
    if (!chain.has_value()) {
      Fail(chain.error(), error);
      return {};
    }
    auto spec = grainstore::ParseVersionSpec(version);
    bool exists = false;
    if (spec.has_value() && spec->number != 0) {
      auto at = shared->store->ChainVersions(chain->id, spec->number - 1, 1);
      if (!at.has_value()) {
        Fail(at.error(), error);
        return {};
      }
      exists = !at->empty() && at->front().seq == spec->number;
    }
    if (!exists) {
      Fail(grainstore::Status::NotFound(parsed->key + " has no version " + std::string(version)),
           error);
      return {};
    }
  }
  auto body = version.empty()
                  ? shared->store->ReadFile(shared->ns, parsed->key)
                  : shared->store->ReadVersion(shared->ns, parsed->key, version);
  if (!body.has_value()) {
    Fail(body.error(), error);
    return {};
  }
  return std::move(body).value();
}

}  // namespace areev_binding
