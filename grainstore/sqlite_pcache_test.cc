// The page-cache layer: it holds exactly the pages SQLite's own cache would,
// and truncations that would remove nothing do not reach the cache below.
#include "sqlite_pcache.h"

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <random>

#include <gtest/gtest.h>

namespace grainstore {
namespace {

constexpr int kPageSize = 4096;
constexpr unsigned kLockKey = 0x40000000u / kPageSize + 1;

// The cache methods SQLite will use, taken before any test starts SQLite.
sqlite3_pcache_methods2 g_below{};

class CaptureFirst : public ::testing::Environment {
 public:
  void SetUp() override {
    installed_ = InstallSqlitePageCache();
    captured_ = sqlite3_config(SQLITE_CONFIG_GETPCACHE2, &g_below) == SQLITE_OK;
  }
  static bool installed() { return installed_; }
  static bool captured() { return captured_; }

 private:
  static inline bool installed_ = false;
  static inline bool captured_ = false;
};
const auto* const kCaptureFirst = ::testing::AddGlobalTestEnvironment(new CaptureFirst);

// g_below with its truncations counted.
int g_truncations = 0;
void CountingTruncate(sqlite3_pcache* p, unsigned limit) {
  ++g_truncations;
  g_below.xTruncate(p, limit);
}

class SqlitePcacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CaptureFirst::captured()) GTEST_SKIP() << "SQLite started before the test environment";
    ASSERT_EQ(sqlite3_initialize(), SQLITE_OK);
    counting_ = g_below;
    counting_.xTruncate = CountingTruncate;
    layer_ = SkippingPageCache(&counting_);
    cache_ = layer_.xCreate(kPageSize, 64, 1);
    ASSERT_NE(cache_, nullptr);
    layer_.xCachesize(cache_, 1000);
    g_truncations = 0;
  }
  void TearDown() override {
    if (cache_ != nullptr) layer_.xDestroy(cache_);
  }

  sqlite3_pcache_page* Make(unsigned key) {
    sqlite3_pcache_page* page = layer_.xFetch(cache_, key, 1);
    EXPECT_NE(page, nullptr) << key;
    return page;
  }
  bool Has(unsigned key) {
    sqlite3_pcache_page* page = layer_.xFetch(cache_, key, 0);
    if (page == nullptr) return false;
    layer_.xUnpin(cache_, page, 0);
    return true;
  }

  sqlite3_pcache_methods2 counting_{};
  sqlite3_pcache_methods2 layer_{};
  sqlite3_pcache* cache_ = nullptr;
};

TEST(SqlitePcacheInstallTest, InstalledBeforeSqliteStarts) {
  EXPECT_TRUE(CaptureFirst::installed());
  EXPECT_TRUE(InstallSqlitePageCache());  // later calls change nothing
}

// A B-tree split swaps two new pages' numbers through the locking page. The
// commit's truncation to the database's size then has nothing to remove.
TEST_F(SqlitePcacheTest, APageParkedAndMovedBackLeavesNothingToTruncate) {
  for (unsigned key = 1; key <= 10; ++key) layer_.xUnpin(cache_, Make(key), 0);
  sqlite3_pcache_page* a = Make(11);
  sqlite3_pcache_page* b = layer_.xFetch(cache_, 5, 0);
  ASSERT_NE(b, nullptr);
  layer_.xRekey(cache_, a, 11, kLockKey);
  layer_.xRekey(cache_, b, 5, 11);
  layer_.xRekey(cache_, a, kLockKey, 5);
  layer_.xUnpin(cache_, a, 0);
  layer_.xUnpin(cache_, b, 0);

  layer_.xTruncate(cache_, 12);
  EXPECT_EQ(g_truncations, 0);
  for (unsigned key = 1; key <= 11; ++key) EXPECT_TRUE(Has(key)) << key;
  EXPECT_FALSE(Has(kLockKey));
  EXPECT_EQ(layer_.xPagecount(cache_), 11);

  layer_.xTruncate(cache_, 8);  // pages 8 to 11 must go
  EXPECT_EQ(g_truncations, 1);
  for (unsigned key = 1; key <= 7; ++key) EXPECT_TRUE(Has(key)) << key;
  for (unsigned key = 8; key <= 11; ++key) EXPECT_FALSE(Has(key)) << key;
  layer_.xTruncate(cache_, 8);  // nothing left to remove
  EXPECT_EQ(g_truncations, 1);
}

TEST_F(SqlitePcacheTest, APageStillParkedIsTruncated) {
  for (unsigned key = 1; key <= 4; ++key) layer_.xUnpin(cache_, Make(key), 0);
  sqlite3_pcache_page* page = layer_.xFetch(cache_, 3, 0);
  ASSERT_NE(page, nullptr);
  layer_.xRekey(cache_, page, 3, kLockKey);
  layer_.xUnpin(cache_, page, 0);
  ASSERT_TRUE(Has(kLockKey));

  layer_.xTruncate(cache_, 5);
  EXPECT_EQ(g_truncations, 1);
  EXPECT_FALSE(Has(kLockKey));
  EXPECT_TRUE(Has(4));
  layer_.xTruncate(cache_, 5);
  EXPECT_EQ(g_truncations, 1);
}

TEST_F(SqlitePcacheTest, AnAbandonedCacheIsNeitherTruncatedNorDestroyed) {
  for (unsigned key = 1; key <= 4; ++key) layer_.xUnpin(cache_, Make(key), 0);
  {
    const ScopedAbandonPageCaches abandon;
    layer_.xTruncate(cache_, 1);
    EXPECT_EQ(g_truncations, 0);
    EXPECT_TRUE(Has(4));
    const auto destroy = counting_.xDestroy;
    counting_.xDestroy = [](sqlite3_pcache*) { FAIL() << "an abandoned cache reached xDestroy"; };
    layer_.xDestroy(cache_);  // leaves every page where it was
    counting_.xDestroy = destroy;
  }
  cache_ = nullptr;
  // Outside the scope the layer truncates again.
  sqlite3_pcache* other = layer_.xCreate(kPageSize, 64, 1);
  ASSERT_NE(other, nullptr);
  layer_.xCachesize(other, 1000);
  sqlite3_pcache_page* page = layer_.xFetch(other, 3, 1);
  ASSERT_NE(page, nullptr);
  layer_.xUnpin(other, page, 0);
  layer_.xTruncate(other, 1);
  EXPECT_EQ(g_truncations, 1);
  layer_.xDestroy(other);
}

TEST_F(SqlitePcacheTest, APageFetchedAtTheLockingPageIsTruncated) {
  layer_.xUnpin(cache_, Make(2), 0);
  layer_.xUnpin(cache_, Make(kLockKey), 0);
  layer_.xTruncate(cache_, 3);
  EXPECT_EQ(g_truncations, 1);
  EXPECT_FALSE(Has(kLockKey));
  EXPECT_TRUE(Has(2));
}

// Random fetches, moves and truncations against a model of the pages held.
TEST_F(SqlitePcacheTest, HoldsWhatAModelHolds) {
  std::mt19937 rng(7);
  std::map<unsigned, sqlite3_pcache_page*> model;  // key -> page (unpinned)
  auto pick_key = [&rng]() -> unsigned {
    std::uint32_t r = rng() % 100;
    return r < 5 ? kLockKey : 1 + r % 60;
  };
  for (int step = 0; step < 5000; ++step) {
    switch (rng() % 4) {
      case 0:
      case 1: {
        const unsigned key = pick_key();
        sqlite3_pcache_page* page = Make(key);
        layer_.xUnpin(cache_, page, 0);
        model[key] = page;
        break;
      }
      case 2: {
        if (model.empty()) break;
        auto it = model.begin();
        std::advance(it, static_cast<long>(rng() % model.size()));
        const unsigned from = it->first;
        const unsigned to = pick_key();
        if (to == from) break;
        sqlite3_pcache_page* page = layer_.xFetch(cache_, from, 0);
        ASSERT_EQ(page, it->second);
        model.erase(it);
        if (model.erase(to) == 1) {  // as SQLite does: drop the page at `to` first
          layer_.xUnpin(cache_, layer_.xFetch(cache_, to, 0), 1);
        }
        layer_.xRekey(cache_, page, from, to);
        layer_.xUnpin(cache_, page, 0);
        model[to] = page;
        break;
      }
      case 3: {
        const unsigned limit = rng() % 8 == 0 ? 1 + rng() % 30 : 40 + rng() % 30;
        layer_.xTruncate(cache_, limit);
        model.erase(model.lower_bound(limit), model.end());
        break;
      }
    }
    ASSERT_EQ(layer_.xPagecount(cache_), static_cast<int>(model.size())) << "step " << step;
  }
  for (unsigned key = 1; key <= 60; ++key) EXPECT_EQ(Has(key), model.count(key) == 1) << key;
  EXPECT_EQ(Has(kLockKey), model.count(kLockKey) == 1);
}

}  // namespace
}  // namespace grainstore
