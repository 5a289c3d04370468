// Body rows: content stored once per hash, reference-counted, and stored as
// a delta on the body it extends when a file only grew by an append, or as a
// splice on the body it was edited from. See docs/storage-format.md ("Delta
// bodies").
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

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
// Guards BodyData against a cycle in a damaged file; far above any depth a
// build writes.
constexpr std::size_t kMaxAssembledRows = 1024;
// A splice is stored only on a body read from at most this many rows, so a
// read assembles at most this many plus an append run's.
constexpr std::size_t kMaxSpliceDepth = 16;
// A splice stores at most this many new bytes; a larger change is stored
// whole (AssembleBody holds a chain's deltas in memory while it reads).
constexpr std::size_t kMaxSpliceMiddle = 1u << 20;
// A splice row's bytes start with the length of the base's suffix it keeps,
// 8 bytes little-endian.
constexpr std::size_t kSpliceHeader = 8;

// The length of the longest common prefix of `a` and `b`.
std::size_t CommonPrefix(std::string_view a, std::string_view b) {
  const std::size_t n = std::min(a.size(), b.size());
  constexpr std::size_t kBlock = 256;
  std::size_t i = 0;
  while (i + kBlock <= n && std::memcmp(a.data() + i, b.data() + i, kBlock) == 0) i += kBlock;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

// The length of the longest common suffix of `a` and `b`, at most `limit`.
std::size_t CommonSuffix(std::string_view a, std::string_view b, std::size_t limit) {
  const std::size_t n = std::min({a.size(), b.size(), limit});
  constexpr std::size_t kBlock = 256;
  std::size_t i = 0;
  while (i + kBlock <= n && std::memcmp(a.data() + a.size() - i - kBlock,
                                        b.data() + b.size() - i - kBlock, kBlock) == 0) {
    i += kBlock;
  }
  while (i < n && a[a.size() - 1 - i] == b[b.size() - 1 - i]) ++i;
  return i;
}

void PutLittleEndian64(std::uint64_t v, char* out) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

std::uint64_t GetLittleEndian64(const char* in) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) {
    v |= static_cast<std::uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  }
  return v;
}

// The id of the row a stored base_id names (a splice's is negated); 0, no
// row, for the one value that has no positive counterpart (a damaged row).
std::int64_t BaseRow(std::int64_t stored) {
  return stored == std::numeric_limits<std::int64_t>::min() ? 0 : std::abs(stored);
}

// What a splice row stores for `body`, whose first `head` and last `tail`
// bytes are its base's: the tail's length, then the bytes between.
std::string SpliceBytes(std::string_view body, std::size_t head, std::size_t tail) {
  std::string bytes(kSpliceHeader, '\0');
  PutLittleEndian64(tail, bytes.data());
  bytes.append(body.substr(head, body.size() - head - tail));
  return bytes;
}

// One delta row, read for AssembleBody: the bytes it holds (copied), the
// body's size, and for a splice the base suffix it keeps.
struct DeltaRow {
  std::string piece;
  std::size_t size = 0;
  bool splice = false;
  std::size_t suffix = 0;
};

}  // namespace

Result<BodyPlan> StoreImpl::PlanBody(const NodeInfo& node, std::string_view body,
                                     const BodyBase* prefix, const KnownBody* known) {
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
      // The row may be gone, or hold other bytes under its id: a purge of
      // the chain an unversioned file left frees the bodies under its own.
      auto holds = HoldsHash(base.body_id, base.hash);
      if (!holds) return holds.error();
      if (*holds) {
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
  // An unversioned file keeps only its current content: a splice's base
  // would keep the bytes its edit took out (an append's holds none the new
  // content lacks).
  if (node.versioning == Versioning::kUnversioned) return plan;
  // Not an append: a splice on the file's current body, when its content is
  // at hand (the caller's, or this Store's from the last seal, if the row
  // still holds it) and most of it is kept.
  KnownBody current;
  if (known != nullptr) {
    current = *known;
  } else if (last != nullptr && last->HasContent() && last->run.back().body_id == node.body_id) {
    // The row may be gone: a young file's chain discarded as it is renamed
    // over another (RenameNode), its body with it, before this seal.
    auto holds = HoldsHash(node.body_id, last->run.back().hash);
    if (!holds) return holds.error();
    if (*holds) current = {node.body_id, last->content};
  }
  if (current.id <= 0) return plan;
  plan.splice_tried = true;
  auto splice = PlanSplice(body, current);
  if (!splice) return splice.error();
  if (!*splice) return plan;
  plan.base_id = current.id;
  plan.base_size = (*splice)->head;
  plan.splice = true;
  plan.suffix = (*splice)->tail;
  return plan;
}

Result<std::optional<Splice>> StoreImpl::PlanSplice(std::string_view body, const KnownBody& base) {
  using Planned = std::optional<Splice>;
  if (body.size() < kMinDeltaBase || base.content.size() < kMinDeltaBase) return Planned();
  const std::size_t head = CommonPrefix(body, base.content);
  const std::size_t tail =
      CommonSuffix(body, base.content, std::min(body.size(), base.content.size()) - head);
  // Worth a row to assemble only when it keeps at least half of the body;
  // and a read holds every delta of a chain at once, so none is large.
  if (head + tail < std::max<std::size_t>(body.size() / 2, kMinDeltaBase / 2)) return Planned();
  if (body.size() - head - tail > kMaxSpliceMiddle) return Planned();
  auto depth = BodyDepth(base.id);
  if (!depth) return depth.error();
  if (*depth + 1 > kMaxSpliceDepth) return Planned();
  return Planned(Splice{.head = head, .tail = tail});
}

Status StoreImpl::MaybeStoreAsSplice(std::int64_t body_id, std::string_view body,
                                     const KnownBody& base) {
  static constexpr char kRow[] = "SELECT refs, base_id FROM bodies WHERE id = ?";
  static constexpr char kRewrite[] = "UPDATE bodies SET bytes = ?, base_id = ? WHERE id = ?";
  if (body_id <= 0 || base.id <= 0 || body_id == base.id) return Status::Ok();
  if (body.size() < kMinDeltaBase || base.content.size() < kMinDeltaBase) return Status::Ok();
  {
    // Only a whole row that this one version holds: no delta is built on it
    // (so `base` cannot be one of its own), no other file shares it.
    auto st = db.Prepare(kRow);
    if (!st) return st.error();
    st->BindInt64(1, body_id);
    StepResult r = st->Step();
    if (r == StepResult::kError) return st->status();
    if (r == StepResult::kDone) return Status::Corruption("a body is missing");
    if (st->ColumnInt64(0) != 1 || !st->ColumnIsNull(1)) return Status::Ok();
  }
  auto splice = PlanSplice(body, base);
  if (!splice) return splice.error();
  if (!*splice) return Status::Ok();
  auto st = db.Prepare(kRewrite);
  if (!st) return st.error();
  const std::string bytes = SpliceBytes(body, (*splice)->head, (*splice)->tail);
  st->BindBlob(1, bytes);
  st->BindInt64(2, -base.id);
  st->BindInt64(3, body_id);
  GRAINSTORE_RETURN_IF_ERROR(st->Run());
  return AdjustRefs(base.id, 1);
}

bool StoreImpl::WorthSplicing(const NodeInfo& node, std::size_t size) const {
  return node.kind == NodeKind::kFile && node.versioning == Versioning::kVersioned &&
         node.body_id > 0 && node.size >= kMinDeltaBase && size >= kMinDeltaBase;
}

Status StoreImpl::StoreWhole(std::int64_t body_id) {
  static constexpr char kBase[] = "SELECT base_id FROM bodies WHERE id = ?";
  static constexpr char kRewrite[] = "UPDATE bodies SET bytes = ?, base_id = NULL WHERE id = ?";
  std::int64_t base = 0;
  {
    auto st = db.Prepare(kBase);
    if (!st) return st.error();
    st->BindInt64(1, body_id);
    StepResult r = st->Step();
    if (r == StepResult::kError) return st->status();
    if (r == StepResult::kDone || st->ColumnIsNull(0)) return Status::Ok();  // gone, or whole
    base = BaseRow(st->ColumnInt64(0));
  }
  auto content = BodyData(body_id);
  if (!content) return content.error();
  auto st = db.Prepare(kRewrite);
  if (!st) return st.error();
  st->BindBlob(1, *content);
  st->BindInt64(2, body_id);
  GRAINSTORE_RETURN_IF_ERROR(st->Run());
  return AdjustRefs(base, -1);
}

Status StoreImpl::StoreWholeOverPurged(const std::vector<std::int64_t>& bodies) {
  static constexpr char kRow[] = "SELECT refs, base_id FROM bodies WHERE id = ?";
  struct Row {
    std::int64_t refs = 0;
    std::int64_t base = 0;            // 0: stored whole
    std::int64_t held_by_deltas = 0;  // references from other rows of `bodies`
  };
  std::unordered_map<std::int64_t, Row> rows;  // the rows of `bodies` that remain
  std::vector<std::int64_t> order;
  for (std::int64_t b : bodies) {
    if (b == 0 || rows.contains(b)) continue;
    auto st = db.Prepare(kRow);
    if (!st) return st.error();
    st->BindInt64(1, b);
    const StepResult r = st->Step();
    if (r == StepResult::kError) return st->status();
    if (r == StepResult::kDone) continue;  // gone with the purge
    rows.emplace(b, Row{.refs = st->ColumnInt64(0),
                        .base = st->ColumnIsNull(1) ? 0 : BaseRow(st->ColumnInt64(1))});
    order.push_back(b);
  }
  for (const auto& [id, row] : rows) {
    if (auto base = rows.find(row.base); row.base != 0 && base != rows.end()) {
      ++base->second.held_by_deltas;
    }
  }
  // A purged version's content that no version or fact holds any more, kept
  // only as the base of these rows.
  auto purged_content = [](const Row& row) { return row.refs <= row.held_by_deltas; };
  for (std::int64_t b : order) {  // oldest version first: bases before their deltas
    Row& row = rows.at(b);
    if (row.base == 0 || purged_content(row)) continue;
    bool over_purged = false;
    std::size_t depth = 0;
    for (std::int64_t x = row.base; x != 0 && depth < kMaxAssembledRows; ++depth) {
      auto it = rows.find(x);
      if (it == rows.end()) break;  // a row the purged file never held
      if (purged_content(it->second)) {
        over_purged = true;
        break;
      }
      x = it->second.base;
    }
    if (!over_purged) continue;
    GRAINSTORE_RETURN_IF_ERROR(StoreWhole(b));
    row.base = 0;
  }
  return Status::Ok();
}

Result<std::size_t> StoreImpl::BodyDepth(std::int64_t body_id) {
  static constexpr char kSql[] = "SELECT base_id FROM bodies WHERE id = ?";
  std::size_t depth = 0;
  for (std::int64_t id = body_id;; ++depth) {
    if (depth >= kMaxAssembledRows) {
      return Status::Corruption("a body's chain of deltas does not end");
    }
    auto st = db.Prepare(kSql);
    if (!st) return st.error();
    st->BindInt64(1, id);
    StepResult r = st->Step();
    if (r == StepResult::kDone) return Status::Corruption("a body is missing");
    if (r == StepResult::kError) return st->status();
    if (st->ColumnIsNull(0)) return depth;
    id = BaseRow(st->ColumnInt64(0));
  }
}

void StoreImpl::KeepSealedBody(const NodeInfo& before, std::int64_t body_id, bool inserted,
                               BodyPlan plan, std::string_view body) {
  if (!inserted && body_id == before.body_id) return;  // the head's own body: nothing changed
  if (body.size() < kMinDeltaBase) {  // never built upon: not worth a copy
    append_bases.Forget(before.id);
    return;
  }
  if (!inserted) {
    // Content stored already (another file's, an earlier version's): appends
    // build on it as on a body stored whole, if it is one, so each of them
    // hashes only its new bytes. Not on a delta row: runs would then stack
    // deltas on deltas from file to file, and reads would assemble more rows.
    auto depth = BodyDepth(body_id);
    if (!depth || *depth != 0) {
      append_bases.Forget(before.id);
      return;
    }
    plan.base_id = 0;  // a new run
  }
  std::optional<AppendBases::Entry> entry = append_bases.Take(before.id);
  // A whole body or a splice starts a new run: appends build on it.
  const bool new_run = plan.base_id == 0 || plan.splice || !entry;
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
    std::string splice;  // a splice row's bytes
    if (base_id != 0 && plan->splice) {
      splice = SpliceBytes(body, plan->base_size, plan->suffix);
      st->BindBlob(3, splice);
      // Negated: a build before splices reads base_id as an append's base;
      // it finds no row there and reports the body missing, never a wrong one.
      st->BindInt64(5, -base_id);
    } else if (base_id != 0) {
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
      // A delta holds a reference on the body it is stored on.
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
  // A statement of its own (the cache is keyed by this array's address):
  // it holds `top` while AssembleBody runs its own.
  static constexpr char kSql[] = "SELECT bytes, base_id, size FROM bodies WHERE id = ?";
  if (body_id == 0) return std::string();
  auto st = db.Prepare(kSql);
  if (!st) return st.error();
  st->BindInt64(1, body_id);
  StepResult r = st->Step();
  if (r == StepResult::kDone) return Status::Corruption("a body is missing");
  if (r == StepResult::kError) return st->status();
  return AssembleBody({.bytes = st->ColumnBlobView(0),
                       .base_id = st->ColumnIsNull(1) ? 0 : st->ColumnInt64(1),
                       .size = st->ColumnInt64(2)});
}

Result<std::string> StoreImpl::AssembleBody(const BodyRowView& top) {
  // A row holds its body whole (base_id NULL); or the bytes appended to its
  // base, the body's last length(bytes) bytes (base_id > 0); or a splice on
  // the body -base_id: its bytes are an 8-byte suffix length, then the
  // middle that lies between the base's first size - length(middle) -
  // suffix bytes and its last suffix bytes. The rows are read newest first,
  // their deltas kept, and applied to the whole body at the bottom.
  static constexpr char kSql[] = "SELECT bytes, base_id, size FROM bodies WHERE id = ?";
  std::vector<DeltaRow> deltas;
  std::size_t largest = 0;
  BodyRowView row = top;
  std::optional<Statement> holding;  // the statement whose row `row` views
  for (std::size_t rows = 0;; ++rows) {
    if (rows >= kMaxAssembledRows) {
      return Status::Corruption("a body's chain of deltas does not end");
    }
    if (row.size < 0 || static_cast<std::uint64_t>(row.size) > Limits::kMaxBodyBytes) {
      return Status::Corruption("a body's size is out of range");
    }
    const auto size = static_cast<std::size_t>(row.size);
    largest = std::max(largest, size);
    if (row.base_id == 0) {
      if (row.bytes.size() != size) {
        return Status::Corruption("a body's deltas do not add up to its size");
      }
      std::string out;
      out.reserve(largest);
      out.assign(row.bytes);
      for (auto d = deltas.rbegin(); d != deltas.rend(); ++d) {
        const std::size_t base_size = out.size();
        const std::size_t kept_head = d->size - d->piece.size() - d->suffix;
        const bool fits = d->splice ? kept_head + d->suffix <= base_size : kept_head == base_size;
        if (!fits) return Status::Corruption("a body's delta does not fit the body it extends");
        out.replace(kept_head, base_size - d->suffix - kept_head, d->piece);
      }
      return out;
    }
    DeltaRow delta{.size = size, .splice = row.base_id < 0};
    std::string_view piece = row.bytes;
    std::uint64_t suffix = 0;  // an append keeps none of its base's end
    if (delta.splice) {
      if (piece.size() < kSpliceHeader) return Status::Corruption("a body's splice is cut short");
      suffix = GetLittleEndian64(piece.data());
      piece.remove_prefix(kSpliceHeader);
    }
    if (piece.size() > size || suffix > size - piece.size()) {
      return Status::Corruption("a body's delta does not fit the body it extends");
    }
    delta.suffix = static_cast<std::size_t>(suffix);
    delta.piece.assign(piece);
    deltas.push_back(std::move(delta));
    const std::int64_t base = BaseRow(row.base_id);
    // `row` was read by `holding` (or the caller): copied above, let go now.
    holding.reset();
    auto st = db.Prepare(kSql);
    if (!st) return st.error();
    holding.emplace(std::move(*st));
    holding->BindInt64(1, base);
    StepResult r = holding->Step();
    if (r == StepResult::kDone) return Status::Corruption("a body is missing");
    if (r == StepResult::kError) return holding->status();
    row = {.bytes = holding->ColumnBlobView(0),
           .base_id = holding->ColumnIsNull(1) ? 0 : holding->ColumnInt64(1),
           .size = holding->ColumnInt64(2)};
  }
}

Result<bool> StoreImpl::HoldsHash(std::int64_t body_id, std::string_view hash) {
  static constexpr char kSql[] = "SELECT hash = ? FROM bodies WHERE id = ?";
  auto st = db.Prepare(kSql);
  if (!st) return st.error();
  st->BindBlob(1, hash);
  st->BindInt64(2, body_id);
  StepResult r = st->Step();
  if (r == StepResult::kError) return st->status();
  return r == StepResult::kRow && st->ColumnInt64(0) == 1;
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
        if (!st->ColumnIsNull(0)) base = BaseRow(st->ColumnInt64(0));  // a splice's, negated
      }
    }
    body_id = base;
    delta = -1;
  }
  return Status::Ok();
}

}  // namespace grainstore
