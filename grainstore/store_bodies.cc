// Body rows: content stored once per hash, reference-counted, and stored as
// a delta on the body it extends when a file only grew by an append. See
// docs/storage-format.md ("Delta bodies").
#include <optional>
#include <utility>

#include "grain_id.h"
#include "store_impl.h"

namespace grainstore {
namespace {

// An append run is at most this long; the next append starts a new one with
// a whole body. Run index i is stored as a delta on DeltaBase(i), so reading
// any body assembles at most 2 + log2(kMaxRun) rows, and each delta holds the
// bytes appended since its base: on average a few appends' worth, never a
// whole copy.
constexpr std::size_t kMaxRun = 4096;

// The run index that index i >= 1 is stored as a delta on: i with its lowest
// set bit cleared (a skip delta), except that only index 1 builds on the
// run's whole body, index 0, and the other powers of two build on index 1.
// A delta holds a reference on its base, and SQLite rewrites a row whole to
// count one: for a large log, one rewrite of its whole body per run rather
// than one at every power of two.
constexpr std::size_t DeltaBase(std::size_t i) {
  const std::size_t skip = i & (i - 1);
  return skip != 0 || i == 1 ? skip : 1;
}
static_assert(DeltaBase(1) == 0 && DeltaBase(2) == 1 && DeltaBase(4) == 1 && DeltaBase(6) == 4);
// Below this size a file's body is always stored whole: the bytes a delta
// would save are worth less than the extra row a read then assembles.
constexpr std::size_t kMinDeltaBase = 2048;
// Guards BodyData against a cycle in a damaged file; far above any depth a
// build writes.
constexpr std::size_t kMaxAssembledRows = 1024;

}  // namespace

Result<BodyPlan> StoreImpl::PlanBody(const NodeInfo& node, std::string_view body,
                                     const BodyBase* prefix) {
  BodyPlan plan;
  // Only an append to the file's current body as this Store sealed it is
  // stored as a delta (after another writer's change the body is stored
  // whole), and only on a base row that still holds what the run remembers.
  const AppendBases::Entry* last = append_bases.Find(node.id);
  // How many of body's first bytes plan.hasher has taken in: the whole
  // body's hash goes on from there, so no byte is hashed twice.
  std::size_t hashed = 0;
  // (Runs only start at kMinDeltaBase bytes: KeepSealedBody keeps no smaller.)
  if (last != nullptr && !last->run.empty() && last->run.back().body_id == node.body_id &&
      last->run.size() < kMaxRun && body.size() > last->run.back().size) {
    // Whether body begins with the newest body of the run: known when the
    // caller vouches for a prefix with that body's size and hash (the mount's
    // O_APPEND writes), else compared byte for byte when the entry keeps it,
    // else by hash (a file of about AppendBases::kMaxEntryBytes or more,
    // whose hashing costs far less than storing it whole).
    const std::size_t newest = last->run.back().size;
    bool appended = false;
    if (prefix != nullptr && prefix->size == newest && !prefix->hash.empty() &&
        prefix->hash == last->run.back().hash) {
      appended = true;
    } else if (last->HasContent()) {
      appended = body.starts_with(last->content);
    } else {
      plan.hasher.Update(body.substr(0, newest));
      hashed = newest;
      appended = plan.hasher.Digest() == last->run.back().hash;
    }
    if (appended) {
      const std::size_t next = last->run.size();  // the new body's index in the run
      const AppendBases::Version& base = last->run[DeltaBase(next)];
      auto stored = BodyHash(base.body_id);
      if (!stored) return stored.error();
      if (*stored == base.hash) {
        plan.hasher = last->hasher;
        plan.hasher.Update(body.substr(newest));
        plan.hash = plan.hasher.Digest();
        plan.base_id = base.body_id;
        plan.base_size = base.size;
        return plan;
      }
    }
  }
  plan.hasher.Update(body.substr(hashed));
  plan.hash = plan.hasher.Digest();
  return plan;
}

void StoreImpl::KeepSealedBody(const NodeInfo& before, std::int64_t body_id, bool inserted,
                               BodyPlan plan, std::string_view body) {
  if (!inserted) {
    // Content already stored: the head's own body (nothing changed), or a
    // body outside any run this Store knows, which is not built upon.
    if (body_id != before.body_id) append_bases.Forget(before.id);
    return;
  }
  if (body.size() < kMinDeltaBase) {  // never built upon: not worth a copy
    append_bases.Forget(before.id);
    return;
  }
  std::optional<AppendBases::Entry> entry = append_bases.Take(before.id);
  const bool new_run = plan.base_id == 0 || !entry;
  const std::size_t run_size = new_run ? 1 : entry->run.size() + 1;
  // Content is kept only while the entry stays within what AppendBases keeps
  // (an entry past kMaxEntryBytes would be dropped, ending the run).
  const bool keep_content =
      body.size() + run_size * AppendBases::kVersionCost <= AppendBases::kMaxEntryBytes;
  if (new_run) {  // a whole body starts a new run
    entry.emplace();
    if (keep_content) entry->content.assign(body);
  } else if (keep_content && entry->HasContent()) {
    entry->content.append(body.substr(entry->content.size()));
  } else {
    std::string().swap(entry->content);  // the memory goes, not just the bytes
  }
  entry->run.push_back({.body_id = body_id, .size = body.size(), .hash = std::move(plan.hash)});
  entry->hasher = plan.hasher;
  append_bases.Keep(before.id, std::move(*entry));
}

Result<std::int64_t> StoreImpl::InternBody(std::string_view body, std::string* hash_out,
                                           std::int64_t new_refs, bool* inserted,
                                           const BodyPlan* plan) {
  // Insert first: new content is the common case, and a conflict on the hash
  // index (content already stored) falls back to the lookup. No RETURNING:
  // SQLite opens an ephemeral table for it, about a fifth of this statement's
  // time in a profile of mount appends.
  static constexpr char kInsert[] =
      "INSERT INTO bodies(hash, size, bytes, refs, base_id) VALUES(?, ?, ?, ?, ?) "
      "ON CONFLICT(hash) DO NOTHING";
  static constexpr char kFind[] = "SELECT id FROM bodies WHERE hash = ?";
  if (inserted) *inserted = false;
  std::string hash = plan != nullptr ? plan->hash : HashBody(body);
  const std::int64_t base_id = plan != nullptr ? plan->base_id : 0;
  if (hash_out) *hash_out = hash;
  {
    auto st = db.Prepare(kInsert);
    if (!st) return st.error();
    st->BindBlob(1, hash);
    st->BindInt64(2, static_cast<std::int64_t>(body.size()));
    if (base_id != 0) {
      st->BindBlob(3, body.substr(plan->base_size));
      st->BindInt64(5, base_id);
    } else {
      st->BindBlob(3, body);
      st->BindNull(5);
    }
    st->BindInt64(4, new_refs);
    GRAINSTORE_RETURN_IF_ERROR(st->Run());
    if (db.Changes() == 1) {
      const std::int64_t id = db.LastInsertRowid();
      if (inserted) *inserted = true;
      // A delta holds a reference on the body it extends.
      if (base_id != 0) GRAINSTORE_RETURN_IF_ERROR(AdjustRefs(base_id, 1));
      return id;
    }
  }
  auto st = db.Prepare(kFind);
  if (!st) return st.error();
  st->BindBlob(1, hash);
  switch (st->Step()) {
    case StepResult::kRow: return st->ColumnInt64(0);
    case StepResult::kDone: return Status::Corruption("a body vanished while being interned");
    case StepResult::kError: break;
  }
  return st->status();
}

Result<std::string> StoreImpl::BodyData(std::int64_t body_id) {
  if (body_id == 0) return std::string();
  return AssembleBody({}, body_id);
}

Result<std::string> StoreImpl::AssembleBody(std::string_view newest, std::int64_t base_id) {
  // Each row holds the tail of its body: bytes [size - length(bytes), size),
  // on a base whose size is where that tail starts. The body is sized once,
  // from the newest base's size, and each row is copied straight to its
  // place: one copy of each byte, newest row first.
  static constexpr char kSql[] = "SELECT bytes, base_id, size FROM bodies WHERE id = ?";
  std::string out;
  std::size_t end = 0;  // where the next row's bytes end in `out`
  std::int64_t id = base_id;
  for (std::size_t rows = 0;; ++rows) {
    if (rows >= kMaxAssembledRows) {
      return Status::Corruption("a body's chain of deltas does not end");
    }
    auto st = db.Prepare(kSql);
    if (!st) return st.error();
    st->BindInt64(1, id);
    StepResult r = st->Step();
    if (r == StepResult::kDone) return Status::Corruption("a body is missing");
    if (r == StepResult::kError) return st->status();
    const std::int64_t size = st->ColumnInt64(2);
    const std::string_view bytes = st->ColumnBlobView(0);
    if (rows == 0) {
      if (size < 0 || static_cast<std::uint64_t>(size) > Limits::kMaxBodyBytes) {
        return Status::Corruption("a body's size is out of range");
      }
      end = static_cast<std::size_t>(size);
      out.resize(end + newest.size());
      newest.copy(out.data() + end, newest.size());
    }
    if (static_cast<std::uint64_t>(size) != end || bytes.size() > end) {
      return Status::Corruption("a body's delta does not fit the body it extends");
    }
    end -= bytes.size();
    bytes.copy(out.data() + end, bytes.size());
    if (st->ColumnIsNull(1)) {
      if (end != 0) return Status::Corruption("a body's deltas do not add up to its size");
      return out;
    }
    id = st->ColumnInt64(1);
  }
}

Result<std::string> StoreImpl::BodyHash(std::int64_t body_id) {
  static constexpr char kSql[] = "SELECT hash FROM bodies WHERE id = ?";
  if (body_id == 0) return HashBody("");
  auto st = db.Prepare(kSql);
  if (!st) return st.error();
  st->BindInt64(1, body_id);
  StepResult r = st->Step();
  if (r == StepResult::kRow) return st->ColumnBlob(0);
  if (r == StepResult::kDone) return Status::Corruption("a body is missing");
  return st->status();
}

Status StoreImpl::AdjustRefs(std::int64_t body_id, std::int64_t delta) {
  static constexpr char kAdjust[] = "UPDATE bodies SET refs = refs + ? WHERE id = ?";
  static constexpr char kDrop[] =
      "DELETE FROM bodies WHERE id = ? AND refs <= 0 RETURNING base_id";
  // A deleted delta drops its reference on the body it extends, and so on
  // down the chain.
  while (body_id != 0 && delta != 0) {
    {
      auto st = db.Prepare(kAdjust);
      if (!st) return st.error();
      st->BindInt64(1, delta);
      st->BindInt64(2, body_id);
      GRAINSTORE_RETURN_IF_ERROR(st->Run());
    }
    if (delta > 0) return Status::Ok();
    std::int64_t base = 0;
    {
      auto st = db.Prepare(kDrop);
      if (!st) return st.error();
      st->BindInt64(1, body_id);
      for (StepResult r; (r = st->Step()) != StepResult::kDone;) {
        if (r == StepResult::kError) return st->status();
        if (!st->ColumnIsNull(0)) base = st->ColumnInt64(0);
      }
    }
    body_id = base;
    delta = -1;
  }
  return Status::Ok();
}

}  // namespace grainstore
