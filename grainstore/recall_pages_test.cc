// Recall read a page at a time (Store::ForEachFact): the order and the
// live filter across page boundaries, stopping early, and the writes that
// come while a visit runs.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "grainstore/store.h"
#include "store_fixture.h"

namespace grainstore {
namespace {

class RecallPagesTest : public test::StoreFixture {
 protected:
  void Add(const std::string& subject, const std::string& relation, const std::string& object,
           GrainType type = GrainType::kFact) {
    FactInput in;
    in.type = type;
    in.subject = subject;
    in.relation = relation;
    in.object = object;
    auto added = store_->AddFact(ns_, in);
    ASSERT_TRUE(added.has_value()) << added.error().ToString();
  }

  std::vector<std::string> Objects(std::string_view relation, bool all) {
    std::vector<std::string> out;
    Status st = store_->ForEachFact(ns_, "alice", relation, all, [&](const Fact& f) {
      out.push_back(f.object);
      return true;
    });
    EXPECT_TRUE(st.ok()) << st.ToString();
    return out;
  }
};

// Two and a half pages of events, and facts whose earlier versions are
// superseded: every page boundary keeps the newest-first order, and the
// superseded rows a page skips still move its cursor.
TEST_F(RecallPagesTest, PagesKeepTheOrderAndTheLiveFilter) {
  const int events = static_cast<int>(Store::kFactPage * 2 + Store::kFactPage / 2);
  std::vector<std::string> expected_all;
  for (int i = 0; i < events; ++i) {
    ASSERT_NO_FATAL_FAILURE(Add("alice", "met", fmt::format("e{}", i), GrainType::kEvent));
    // Every third round a fact, superseded by the next round's.
    if (i % 3 == 0) {
      ASSERT_NO_FATAL_FAILURE(Add("alice", "mood", fmt::format("m{}", i)));
    }
  }
  ASSERT_NO_FATAL_FAILURE(Add("bob", "met", "not alice", GrainType::kEvent));
  auto all = store_->Recall(ns_, "alice", "", true);
  ASSERT_TRUE(all.has_value()) << all.error().ToString();
  const std::size_t moods = static_cast<std::size_t>((events + 2) / 3);
  ASSERT_EQ(all->size(), static_cast<std::size_t>(events) + moods);
  for (std::size_t i = 1; i < all->size(); ++i) {
    ASSERT_GE((*all)[i - 1].created_ns, (*all)[i].created_ns) << i;
  }
  std::vector<std::string> objects;
  for (const Fact& f : *all) objects.push_back(f.object);
  EXPECT_EQ(objects, Objects("", true));
  // The last round's fact came after its event.
  EXPECT_EQ(objects.front(),
            fmt::format((events - 1) % 3 == 0 ? "m{}" : "e{}", events - 1));
  EXPECT_EQ(objects.back(), "e0");

  // Live only: every event, and the newest mood alone.
  const std::vector<std::string> live = Objects("", false);
  ASSERT_EQ(live.size(), static_cast<std::size_t>(events) + 1);
  EXPECT_EQ(std::count(live.begin(), live.end(), fmt::format("m{}", (events - 1) / 3 * 3)), 1);
  // One relation: its own rows, in the same order, across pages too.
  const std::vector<std::string> met = Objects("met", true);
  ASSERT_EQ(met.size(), static_cast<std::size_t>(events));
  EXPECT_EQ(met.front(), fmt::format("e{}", events - 1));
  EXPECT_EQ(met.back(), "e0");
  const std::vector<std::string> mood = Objects("mood", true);
  EXPECT_EQ(mood.size(), moods);
  EXPECT_EQ(Objects("mood", false).size(), 1u);
}

// A visit that returns false ends the walk; one that writes (no lock of the
// Store is held while it runs) neither deadlocks nor sees its own newer facts.
TEST_F(RecallPagesTest, AVisitMayStopAndMayWrite) {
  const int n = static_cast<int>(Store::kFactPage + 10);
  for (int i = 0; i < n; ++i) {
    ASSERT_NO_FATAL_FAILURE(Add("alice", "met", fmt::format("e{}", i), GrainType::kEvent));
  }
  int seen = 0;
  ASSERT_TRUE(store_->ForEachFact(ns_, "alice", "", true, [&](const Fact&) {
    return ++seen < 5;
  }).ok());
  EXPECT_EQ(seen, 5);
  std::vector<std::string> objects;
  ASSERT_TRUE(store_->ForEachFact(ns_, "alice", "", true, [&](const Fact& f) {
    objects.push_back(f.object);
    FactInput in;
    in.type = GrainType::kEvent;
    in.subject = "alice";
    in.relation = "met";
    in.object = "during " + f.object;
    return store_->AddFact(ns_, in).has_value();
  }).ok());
  ASSERT_EQ(objects.size(), static_cast<std::size_t>(n));
  EXPECT_EQ(objects.front(), fmt::format("e{}", n - 1));
  EXPECT_EQ(objects.back(), "e0");
  auto after = store_->Recall(ns_, "alice", "", true);
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->size(), static_cast<std::size_t>(2 * n));
}

}  // namespace
}  // namespace grainstore
