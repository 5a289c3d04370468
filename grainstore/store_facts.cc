// Plain fact and event grains (`areev add`, `areev recall`).
#include <limits>

#include <fmt/format.h>

#include "grain_id.h"
#include "grainstore/display_text.h"
#include "grainstore/path.h"
#include "grainstore/store.h"
#include "store_impl.h"

namespace grainstore {

Status Store::CheckFact(const FactInput& in) {
  // A name no table or query can show.
  if (IsBlankText(in.subject) || IsBlankText(in.relation)) {
    return Status::InvalidArgument("a fact needs a subject and a relation (not blank)");
  }
  // Names are text: JSON output (history --json, the bindings) could not
  // give back bytes that are not UTF-8, so the fact could not be asked for.
  if (!IsValidUtf8(in.subject) || !IsValidUtf8(in.relation) || !IsValidUtf8(in.object)) {
    return Status::InvalidArgument("a fact's subject, relation and object must be UTF-8 text");
  }
  if (in.relation == kMemoryFileRelation) {
    return Status::InvalidArgument("memory_file grains are written through the memory tool");
  }
  return CheckBodySize(in.context.size());
}

Result<Fact> Store::AddFact(NsId ns, const FactInput& in) {
  GRAINSTORE_RETURN_IF_ERROR(CheckFact(in));
  std::lock_guard lock(impl_->mu);
  StoreImpl& s = *impl_;
  Transaction txn(&s.db);
  GRAINSTORE_RETURN_IF_ERROR(txn.Begin());
  std::int64_t now = NowNs();
  std::string hash;
  std::int64_t body_id = 0;
  if (!in.context.empty()) {
    auto b = s.InternBody(in.context, &hash);
    if (!b) return b.error();
    body_id = *b;
  }
  GrainSpec spec{.type = in.type, .ns = ns, .subject = in.subject, .relation = in.relation,
                 .object = in.object, .body_id = body_id, .body_hash = hash,
                 .size = in.context.size(), .op = "add", .derived_from = ""};
  Fact fact;
  fact.type = in.type;
  fact.subject = in.subject;
  fact.relation = in.relation;
  fact.object = in.object;
  fact.context = in.context;
  fact.created_ns = now;
  const char* op = "add";
  GrainRef ref;
  if (in.type == GrainType::kFact) {
    auto live = s.LiveChain(ns, in.subject, in.relation);
    if (!live) return live.error();
    ChainRow chain;
    if (live->has_value()) {
      chain = std::move(**live);
      spec.op = "supersede";
      op = "supersede";
    } else {
      auto c = s.NewChain(ns, in.subject, in.relation, now);
      if (!c) return c.error();
      chain = std::move(*c);
    }
    auto g = s.AppendGrain(&chain, spec, now);
    if (!g) return g.error();
    ref = std::move(*g);
    fact.chain_id = chain.id;
  } else {
    auto g = s.AppendGrain(nullptr, spec, now);
    if (!g) return g.error();
    ref = std::move(*g);
  }
  fact.seq = ref.seq;
  fact.grain_id = ToHex(ref.id);
  GRAINSTORE_RETURN_IF_ERROR(s.LogOp(ns, op, in.subject, "", 0, fact.chain_id, ref.id, now));
  GRAINSTORE_RETURN_IF_ERROR(txn.Commit());
  return fact;
}

namespace {

// One page of the facts and events about a subject, newest first: the rows
// after the cursor (created_ns, id), live or not (the caller filters, so the
// cursor moves past superseded rows too). Two statements, so each has its
// index: any relation reads grains_by_subject_time, one relation
// grains_by_subject; both end in created_ns, then the rowid.
#define GS_FACT_COLUMNS                                                                        \
  "SELECT g.grain_id, g.type, g.subject, g.relation, g.object, b.bytes, g.created_ns, "      \
  "g.chain_id, g.seq, (g.chain_id = 0 OR (c.state = 1 AND g.seq = "                          \
  "(SELECT max(h.seq) FROM grains AS h WHERE h.chain_id = g.chain_id))), b.base_id, "         \
  "g.body_id, b.id, b.size, g.id "                                                           \
  "FROM grains g LEFT JOIN chains c ON c.id = g.chain_id "                                   \
  "LEFT JOIN bodies b ON b.id = g.body_id "                                                  \
  "WHERE g.ns_id = ?1 AND g.subject = ?2 AND g.relation != 'memory_file' "
#define GS_FACT_PAGE \
  "AND (g.created_ns, g.id) < (?4, ?5) ORDER BY g.created_ns DESC, g.id DESC LIMIT ?6"
constexpr char kFactsAnyRelation[] = GS_FACT_COLUMNS GS_FACT_PAGE;  // no ?3
constexpr char kFactsOfRelation[] = GS_FACT_COLUMNS "AND g.relation = ?3 " GS_FACT_PAGE;
#undef GS_FACT_PAGE
#undef GS_FACT_COLUMNS

}  // namespace

Result<std::vector<Fact>> Store::Recall(NsId ns, std::string_view subject,
                                        std::string_view relation, bool include_history) {
  std::vector<Fact> out;
  GRAINSTORE_RETURN_IF_ERROR(ForEachFact(ns, subject, relation, include_history,
                                         [&](const Fact& f) {
                                           out.push_back(f);
                                           return true;
                                         }));
  return out;
}

Status Store::ForEachFact(NsId ns, std::string_view subject, std::string_view relation,
                          bool include_history, const FactVisitor& visit) {
  constexpr std::int64_t kNewest = std::numeric_limits<std::int64_t>::max();
  std::int64_t after_ns = kNewest, after_id = kNewest;
  for (;;) {
    std::vector<Fact> page;
    std::size_t read = 0;
    {
      std::lock_guard lock(impl_->mu);
      StoreImpl& s = *impl_;
      auto done = s.InRead([&]() -> Result<bool> {
        auto st = s.db.Prepare(relation.empty() ? kFactsAnyRelation : kFactsOfRelation);
        if (!st) return st.error();
        st->BindInt64(1, ns);
        st->BindText(2, subject);
        if (!relation.empty()) st->BindText(3, relation);
        st->BindInt64(4, after_ns);
        st->BindInt64(5, after_id);
        st->BindInt64(6, static_cast<std::int64_t>(kFactPage));
        for (;;) {
          StepResult r = st->Step();
          if (r == StepResult::kDone) return true;
          if (r == StepResult::kError) return st->status();
          ++read;
          after_ns = st->ColumnInt64(6);
          after_id = st->ColumnInt64(14);
          Fact f;
          f.live = st->ColumnInt64(9) != 0;
          if (!f.live && !include_history) continue;
          f.grain_id = ToHex(st->ColumnBlobView(0));
          f.type = static_cast<GrainType>(st->ColumnInt64(1));
          f.subject = st->ColumnText(2);
          f.relation = st->ColumnText(3);
          f.object = st->ColumnText(4);
          if (st->ColumnInt64(11) != 0 && st->ColumnIsNull(12)) {
            return Status::Corruption(
                fmt::format("the context of fact {} is missing", f.grain_id));
          }
          if (!st->ColumnIsNull(10)) {  // stored as a delta: assemble it
            auto context = s.AssembleBody({.bytes = st->ColumnBlobView(5),
                                           .base_id = st->ColumnInt64(10),
                                           .size = st->ColumnInt64(13)});
            if (!context) return context.error();
            f.context = std::move(*context);
          } else if (!st->ColumnIsNull(5)) {
            f.context = st->ColumnBlob(5);
          }
          f.created_ns = after_ns;
          f.chain_id = static_cast<ChainId>(st->ColumnInt64(7));
          f.seq = static_cast<std::uint32_t>(st->ColumnInt64(8));
          page.push_back(std::move(f));
        }
      });
      if (!done) return done.error();
    }
    for (const Fact& f : page) {
      if (!visit(f)) return Status::Ok();
    }
    if (read < kFactPage) return Status::Ok();
  }
}

}  // namespace grainstore
