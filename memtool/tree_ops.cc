// `create` (C12 and project decision 1), `delete` (C17) and `rename` (C18-C20).
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "commands.h"
#include "grainstore/path.h"

namespace memtool::internal {
namespace {

using grainstore::NodeKind;
using grainstore::StatusCode;

std::string Join(std::string_view a, std::string_view b, std::string_view c = {}) {
  std::string s;
  s.reserve(a.size() + b.size() + c.size());
  s.append(a).append(b).append(c);
  return s;
}

enum class Presence { kAbsent, kPresent, kFailed };

// Whether something a memory-tool command can see (a file or directory) lives
// at `key`. Symlinks, which only the mount can create, count as absent.
Presence Probe(const Target& t, std::string_view key, grainstore::Status* failure) {
  grainstore::Result<grainstore::NodeInfo> node = t.store->StatKey(t.ns, key);
  if (node.has_value()) {
    return node->kind == NodeKind::kSymlink ? Presence::kAbsent : Presence::kPresent;
  }
  const StatusCode code = node.error().code();
  if (code == StatusCode::kNotFound || code == StatusCode::kNotADirectory) return Presence::kAbsent;
  *failure = node.error();
  return Presence::kFailed;
}

// Whether a file or symlink takes the name of `key` or one of its ancestors
// where a directory would have to be (the store's kNotADirectory for a path
// below `key`). kFailed with `failure` set when the store could not say.
Presence ParentIsAFile(const Target& t, std::string_view key, grainstore::Status* failure) {
  grainstore::Result<std::optional<grainstore::NodeInfo>> in_the_way =
      t.store->FileInTheWay(t.ns, key);
  if (!in_the_way.has_value()) {
    *failure = in_the_way.error();
    return Presence::kFailed;
  }
  return in_the_way->has_value() ? Presence::kPresent : Presence::kAbsent;
}

// The answer to a write that would make `p`, a path past the store's length
// limits (beyond the contract), once the contract's own checks passed: a
// parent that is a file comes first (C12, C19 step 5). Such a path's key
// holds the segments before the first one past a limit: all lie above it.
ToolResult TooLong(const Target& t, const PathArg& p) {
  grainstore::Status failure;
  const Presence parent_file = ParentIsAFile(t, p.path.key, &failure);
  if (parent_file == Presence::kFailed) return StorageFailure(p.raw, failure);
  if (parent_file == Presence::kPresent) {
    return Failure(Join("A parent of ", p.raw, " is a file, not a directory"));
  }
  return Failure(grainstore::TooLongPathMessage(p.raw));
}

}  // namespace

ToolResult Create(const Target& t, const PathArg& p, std::string_view file_text) {
  const std::string exists = Join("File ", p.raw, " already exists");
  if (p.path.is_root()) return Failure(exists);
  if (p.path.too_long) return TooLong(t, p);
  grainstore::Result<grainstore::WriteResult> written =
      t.store->PutFile(t.ns, p.path.key, file_text);
  if (written.has_value()) return Success(Join("File created successfully at: ", p.raw));
  switch (written.error().code()) {
    case StatusCode::kNotADirectory:
      return Failure(Join("A parent of ", p.raw, " is a file, not a directory"));
    case StatusCode::kIsADirectory:
    case StatusCode::kAlreadyExists:
      return Failure(exists);
    case StatusCode::kTooLarge:
      return Failure(TooLargeMessage(p.raw));
    default:
      return StorageFailure(p.raw, written.error());
  }
}

ToolResult Delete(const Target& t, const PathArg& p) {
  if (p.path.is_root()) return Failure("Cannot delete the /memories directory itself");
  const std::string not_exist = Join("The path ", p.raw, " does not exist");
  if (p.path.too_long) return Failure(not_exist);
  grainstore::Status failure;
  const Presence presence = Probe(t, p.path.key, &failure);
  if (presence == Presence::kFailed) return StorageFailure(p.raw, failure);
  if (presence == Presence::kAbsent) return Failure(not_exist);
  const grainstore::Status deleted = t.store->DeleteKey(t.ns, p.path.key);
  if (deleted.ok()) return Success(Join("Successfully deleted ", p.raw));
  if (deleted.code() == StatusCode::kNotFound) return Failure(not_exist);
  return StorageFailure(p.raw, deleted);
}

ToolResult Rename(const Target& t, const PathArg& from, const PathArg& to) {
  // C19, in order.
  if (from.path.is_root()) return Failure("Cannot rename the /memories directory itself");
  const std::string dest_exists = Join("The destination ", to.raw, " already exists");
  grainstore::Status failure;
  const Presence dest = to.path.is_root()   ? Presence::kPresent
                        : to.path.too_long ? Presence::kAbsent
                                           : Probe(t, to.path.key, &failure);
  if (dest == Presence::kFailed) return StorageFailure(to.raw, failure);
  if (dest == Presence::kPresent) return Failure(dest_exists);
  const std::string not_exist = Join("The path ", from.raw, " does not exist");
  const Presence source =
      from.path.too_long ? Presence::kAbsent : Probe(t, from.path.key, &failure);
  if (source == Presence::kFailed) return StorageFailure(from.raw, failure);
  if (source == Presence::kAbsent) return Failure(not_exist);
  const std::string into_self =
      Join(Join("Cannot rename ", from.raw, " to a subdirectory of itself, "), to.raw);
  // A destination past the limits lies strictly below its key (TooLong).
  if (grainstore::IsStrictlyInside(to.path.key, from.path.key) ||
      (to.path.too_long && to.path.key == from.path.key)) {
    return Failure(into_self);
  }
  const std::string parent_is_file = Join("A parent of ", to.raw, " is a file, not a directory");
  // Beyond the contract: the destination passes the store's length limits.
  if (to.path.too_long) return TooLong(t, to);

  const grainstore::Status renamed = t.store->RenameKey(t.ns, from.path.key, to.path.key);
  if (renamed.ok()) return Success(Join(Join("Successfully renamed ", from.raw, " to "), to.raw));
  // The checks above ran outside the store's transaction; a concurrent writer
  // can still make RenameKey fail, with the code of the rule that now applies.
  switch (renamed.code()) {
    case StatusCode::kAlreadyExists:
      return Failure(dest_exists);
    case StatusCode::kNotFound:
      return Failure(not_exist);
    case StatusCode::kNotADirectory:
      return Failure(parent_is_file);
    case StatusCode::kInvalidArgument:
      return Failure(into_self);
    case StatusCode::kNameTooLong:
      // The destination fits, but a path under the moved directory would not.
      return Failure(grainstore::TooLongPathMessage(to.raw));
    default:
      return StorageFailure(from.raw, renamed);
  }
}

}  // namespace memtool::internal
