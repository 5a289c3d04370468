// The numbered page cache against sqlite3_pcache_methods2's contract, against
// a model over random operations, and under SQLite with a cache far smaller
// than the database.
#include "numbered_pcache.h"

#include <sqlite3.h>

#include <cstring>
#include <iterator>
#include <map>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "sqlite_pcache.h"
#include "test_util.h"

namespace grainstore {
namespace {

constexpr int kPageSize = 4096;
constexpr int kExtra = 72;
constexpr unsigned kLockKey = 0x40000000u / kPageSize + 1;

class NumberedPcacheTest : public ::testing::Test {
 protected:
  void SetUp() override { Make(/*purgeable=*/true, 1000); }
  void TearDown() override {
    if (cache_ != nullptr) m_->xDestroy(cache_);
  }
  void Make(bool purgeable, int pages) {
    if (cache_ != nullptr) m_->xDestroy(cache_);
    cache_ = m_->xCreate(kPageSize, kExtra, purgeable ? 1 : 0);
    ASSERT_NE(cache_, nullptr);
    m_->xCachesize(cache_, pages);
  }
  // A new page for `key`, stamped with it, left pinned.
  sqlite3_pcache_page* Stamped(unsigned key, int create = 1) {
    sqlite3_pcache_page* p = m_->xFetch(cache_, key, create);
    if (p == nullptr) return nullptr;
    std::memcpy(p->pBuf, &key, sizeof key);
    std::memset(static_cast<char*>(p->pBuf) + kPageSize - 1, 0x5a, 1);  // the last byte
    std::memset(p->pExtra, 0x77, kExtra);
    return p;
  }
  unsigned StampOf(const sqlite3_pcache_page* p) {
    unsigned key;
    std::memcpy(&key, p->pBuf, sizeof key);
    return key;
  }
  int Count() { return m_->xPagecount(cache_); }

  const sqlite3_pcache_methods2* m_ = NumberedPageCache();
  sqlite3_pcache* cache_ = nullptr;
};

TEST_F(NumberedPcacheTest, FetchFindsWhatItMadeAndNothingElse) {
  EXPECT_EQ(m_->xFetch(cache_, 7, 0), nullptr);
  sqlite3_pcache_page* p = Stamped(7);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(Count(), 1);
  m_->xUnpin(cache_, p, 0);
  sqlite3_pcache_page* again = m_->xFetch(cache_, 7, 0);
  EXPECT_EQ(again, p);
  EXPECT_EQ(StampOf(again), 7u);
  EXPECT_EQ(m_->xFetch(cache_, 8, 0), nullptr);
  EXPECT_EQ(m_->xFetch(cache_, 7 + 1024, 0), nullptr);  // the same place in the next chunk
  m_->xUnpin(cache_, again, 0);
}

TEST_F(NumberedPcacheTest, ANewPageStartsWithZeroedExtraBytes) {
  // SQLite takes a zero first field of the extra bytes for a page it has
  // not set up, also for a recycled page.
  Make(true, 1);
  sqlite3_pcache_page* a = Stamped(1);
  m_->xUnpin(cache_, a, 0);
  sqlite3_pcache_page* b = m_->xFetch(cache_, 2, 1);  // recycles page 1
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(Count(), 1);
  EXPECT_EQ(m_->xFetch(cache_, 1, 0), nullptr);
  for (int i = 0; i < kExtra; ++i) ASSERT_EQ(static_cast<char*>(b->pExtra)[i], 0) << i;
  m_->xUnpin(cache_, b, 0);
}

TEST_F(NumberedPcacheTest, AFullCacheRecyclesOnlyUnpinnedPages) {
  Make(true, 3);
  sqlite3_pcache_page* pinned[3];
  for (unsigned k = 1; k <= 3; ++k) pinned[k - 1] = Stamped(k);
  // Every page pinned: flag 1 is refused, flag 2 must get a page.
  EXPECT_EQ(m_->xFetch(cache_, 4, 1), nullptr);
  sqlite3_pcache_page* extra = Stamped(4, 2);
  ASSERT_NE(extra, nullptr);
  EXPECT_EQ(Count(), 4);
  // An unpin over the size frees the page at once.
  m_->xUnpin(cache_, extra, 0);
  EXPECT_EQ(Count(), 3);
  EXPECT_EQ(m_->xFetch(cache_, 4, 0), nullptr);
  // With one page unpinned, a new page takes its place; the pinned stay.
  m_->xUnpin(cache_, pinned[1], 0);
  sqlite3_pcache_page* five = Stamped(5);
  ASSERT_NE(five, nullptr);
  EXPECT_EQ(m_->xFetch(cache_, 2, 0), nullptr);
  EXPECT_EQ(StampOf(m_->xFetch(cache_, 1, 0)), 1u);
  EXPECT_EQ(StampOf(m_->xFetch(cache_, 3, 0)), 3u);
  EXPECT_EQ(Count(), 3);
}

TEST_F(NumberedPcacheTest, ANonPurgeableCacheKeepsEveryPage) {
  Make(false, 2);
  for (unsigned k = 1; k <= 10; ++k) m_->xUnpin(cache_, Stamped(k), 0);
  EXPECT_EQ(Count(), 10);
  for (unsigned k = 1; k <= 10; ++k) {
    sqlite3_pcache_page* p = m_->xFetch(cache_, k, 0);
    ASSERT_NE(p, nullptr) << k;
    EXPECT_EQ(StampOf(p), k);
    m_->xUnpin(cache_, p, 0);
  }
}

TEST_F(NumberedPcacheTest, UnpinWithDiscardDropsThePage) {
  sqlite3_pcache_page* p = Stamped(3);
  m_->xUnpin(cache_, p, 1);
  EXPECT_EQ(m_->xFetch(cache_, 3, 0), nullptr);
  EXPECT_EQ(Count(), 0);
}

TEST_F(NumberedPcacheTest, RekeyMovesThePageAndDropsWhatLayAtTheNewKey) {
  sqlite3_pcache_page* five = Stamped(5);
  m_->xUnpin(cache_, Stamped(9), 0);
  m_->xRekey(cache_, five, 5, 9);  // over the unpinned page 9
  EXPECT_EQ(Count(), 1);
  EXPECT_EQ(m_->xFetch(cache_, 5, 0), nullptr);
  EXPECT_EQ(m_->xFetch(cache_, 9, 0), five);
  EXPECT_EQ(StampOf(five), 5u);  // its bytes moved with it
  // Parked at the locking page's number and back, as a B-tree split does.
  m_->xRekey(cache_, five, 9, kLockKey);
  EXPECT_EQ(m_->xFetch(cache_, kLockKey, 0), five);
  EXPECT_EQ(m_->xFetch(cache_, 9, 0), nullptr);
  m_->xRekey(cache_, five, kLockKey, 3000);  // into a chunk not made yet
  EXPECT_EQ(m_->xFetch(cache_, 3000, 0), five);
  EXPECT_EQ(m_->xFetch(cache_, kLockKey, 0), nullptr);
  m_->xUnpin(cache_, five, 0);
}

TEST_F(NumberedPcacheTest, TruncateDropsEveryPageAtOrAboveTheLimitPinnedOrNot) {
  for (unsigned k : {1u, 1023u, 1024u, 1500u, 2047u, 2048u, 5000u}) {
    m_->xUnpin(cache_, Stamped(k), 0);
  }
  sqlite3_pcache_page* pinned = Stamped(4000);
  sqlite3_pcache_page* parked = Stamped(7);
  m_->xRekey(cache_, parked, 7, kLockKey);
  m_->xTruncate(cache_, 1500);
  for (unsigned k : {1u, 1023u, 1024u}) {
    sqlite3_pcache_page* p = m_->xFetch(cache_, k, 0);
    ASSERT_NE(p, nullptr) << k;
    m_->xUnpin(cache_, p, 0);
  }
  for (unsigned k : {1500u, 2047u, 2048u, 4000u, 5000u, kLockKey}) {
    EXPECT_EQ(m_->xFetch(cache_, k, 0), nullptr) << k;
  }
  EXPECT_EQ(Count(), 3);
  (void)pinned;  // dropped by the truncation: no unpin follows, as in SQLite
  m_->xTruncate(cache_, 0);
  EXPECT_EQ(Count(), 0);
}

TEST_F(NumberedPcacheTest, ShrinkFreesTheUnpinnedPagesOnly) {
  sqlite3_pcache_page* kept = Stamped(2);
  for (unsigned k = 10; k < 20; ++k) m_->xUnpin(cache_, Stamped(k), 0);
  m_->xShrink(cache_);
  EXPECT_EQ(Count(), 1);
  EXPECT_EQ(m_->xFetch(cache_, 2, 0), kept);
  EXPECT_EQ(StampOf(kept), 2u);
}

TEST_F(NumberedPcacheTest, ASmallerCacheSizeFreesUnpinnedPages) {
  for (unsigned k = 1; k <= 50; ++k) m_->xUnpin(cache_, Stamped(k), 0);
  sqlite3_pcache_page* kept = m_->xFetch(cache_, 25, 0);
  m_->xCachesize(cache_, 5);
  EXPECT_EQ(Count(), 5);
  EXPECT_EQ(m_->xFetch(cache_, 25, 0), kept);
}

// Random operations against a model of which keys are cached and pinned:
// a page the cache still holds always has the bytes it was given, the cache
// never holds more unpinned pages than its size allows, and a pinned page
// is never recycled.
TEST_F(NumberedPcacheTest, RandomOperationsKeepEveryHeldPageIntact) {
  constexpr int kSize = 40;
  Make(true, kSize);
  std::mt19937 rng(20261207);
  std::map<unsigned, sqlite3_pcache_page*> pinned;  // key -> page
  auto key_of = [&]() -> unsigned {
    const unsigned r = rng() % 10;
    if (r == 0) return kLockKey;
    if (r < 3) return 1024 + rng() % 2048;
    return 1 + rng() % 200;
  };
  for (int step = 0; step < 200000; ++step) {
    const unsigned key = key_of();
    switch (rng() % 8) {
      case 0:
      case 1:
      case 2: {  // fetch, making it if missing
        const bool was_pinned = pinned.count(key) > 0;
        sqlite3_pcache_page* p = m_->xFetch(cache_, key, 0);
        if (p != nullptr) {
          ASSERT_EQ(StampOf(p), key) << step;
        } else {
          ASSERT_FALSE(was_pinned) << step;
          p = Stamped(key, pinned.size() >= kSize ? 2 : 1 + static_cast<int>(rng() % 2));
          if (p == nullptr) break;
        }
        pinned[key] = p;
        break;
      }
      case 3:
      case 4: {  // unpin a pinned page, discarding one time in four
        if (pinned.empty()) break;
        auto it = pinned.begin();
        std::advance(it, static_cast<long>(rng() % pinned.size()));
        m_->xUnpin(cache_, it->second, rng() % 4 == 0 ? 1 : 0);
        pinned.erase(it);
        break;
      }
      case 5: {  // move a pinned page to a key with no pinned page
        if (pinned.empty() || pinned.count(key) > 0) break;
        auto it = pinned.begin();
        std::advance(it, static_cast<long>(rng() % pinned.size()));
        sqlite3_pcache_page* p = it->second;
        m_->xRekey(cache_, p, it->first, key);
        std::memcpy(p->pBuf, &key, sizeof key);  // the model's stamp follows the key
        pinned.erase(it);
        pinned[key] = p;
        break;
      }
      case 6: {  // truncate, rarely low
        const unsigned limit = rng() % 50 == 0 ? 1 + rng() % 100 : 150 + rng() % 3000;
        m_->xTruncate(cache_, limit);
        for (auto it = pinned.begin(); it != pinned.end();) {
          it = it->first >= limit ? pinned.erase(it) : std::next(it);
        }
        break;
      }
      case 7:
        if (rng() % 100 == 0) m_->xShrink(cache_);
        break;
    }
    const int unpinned = Count() - static_cast<int>(pinned.size());
    ASSERT_GE(unpinned, 0) << step;
    ASSERT_LE(unpinned, kSize) << step;
  }
  for (const auto& [key, page] : pinned) {
    ASSERT_EQ(m_->xFetch(cache_, key, 0), page) << key;
    ASSERT_EQ(StampOf(page), key);
  }
}

// SQLite itself over the cache, with room for 16 of the database's
// thousands of pages: every row reads back as written, and the database is
// whole.
TEST(NumberedPcacheUnderSqlite, ATinyCacheServesALargeDatabase) {
  // Installed before SQLite started (sqlite_pcache_test's environment, or
  // this call in a run of this test alone).
  ASSERT_TRUE(InstallSqlitePageCache());
  test::ScratchDir dir("numbered_pcache");
  const std::string path = dir.File("tiny.db");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  auto exec = [&](const std::string& sql) {
    char* err = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
    std::string why = err != nullptr ? err : "";
    sqlite3_free(err);
    return rc == SQLITE_OK ? std::string() : why.empty() ? "error" : why;
  };
  ASSERT_EQ(exec("PRAGMA journal_mode = WAL; PRAGMA cache_size = 16; "
                 "CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB); CREATE INDEX t_v ON t(v);"),
            "");
  std::mt19937 rng(7);
  std::map<int, std::string> model;
  for (int round = 0; round < 40; ++round) {
    const std::map<int, std::string> before = model;
    ASSERT_EQ(exec("BEGIN"), "");
    for (int i = 0; i < 250; ++i) {
      const int k = static_cast<int>(rng() % 3000);
      if (rng() % 5 == 0) {
        ASSERT_EQ(exec("DELETE FROM t WHERE k = " + std::to_string(k)), "");
        model.erase(k);
      } else {
        std::string v(200 + rng() % 1500, static_cast<char>('a' + rng() % 26));
        ASSERT_EQ(exec("INSERT OR REPLACE INTO t VALUES(" + std::to_string(k) + ", '" + v + "')"),
                  "");
        model[k] = v;
      }
    }
    // One round in seven is rolled back: the cache must give back the
    // pages as they were before it.
    const bool rollback = round % 7 == 6;
    ASSERT_EQ(exec(rollback ? "ROLLBACK" : "COMMIT"), "");
    if (rollback) model = before;
  }
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT k, v FROM t ORDER BY k", -1, &st, nullptr), SQLITE_OK);
  auto it = model.begin();
  while (sqlite3_step(st) == SQLITE_ROW) {
    ASSERT_NE(it, model.end());
    EXPECT_EQ(sqlite3_column_int(st, 0), it->first);
    EXPECT_EQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 1)), it->second);
    ++it;
  }
  EXPECT_EQ(it, model.end());
  sqlite3_finalize(st);
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "ok");
  sqlite3_finalize(st);
  sqlite3_close(db);
}

}  // namespace
}  // namespace grainstore
