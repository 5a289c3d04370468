// Delta bodies: a file that grows by appends stores each version as the bytes
// appended to an earlier body, and every version still reads back whole.
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "append_bases.h"
#include "grain_id.h"
#include "grainstore/store.h"
#include "store_fixture.h"
#include "test_util.h"

namespace grainstore {
namespace {

constexpr char kKey[] = "/memories/log.md";

class DeltaBodiesTest : public test::StoreFixture {
 protected:
  std::int64_t RawInt(const std::string& sql) { return test::PlainInt(path_, sql); }

  // Writes `base`, then `appends` lines one by one; returns every version.
  std::vector<std::string> Grow(const std::string& base, int appends, Store* store = nullptr) {
    Store& s = store != nullptr ? *store : *store_;
    std::vector<std::string> versions{base};
    EXPECT_TRUE(s.PutFile(ns_, kKey, base).has_value());
    for (int i = 0; i < appends; ++i) {
      versions.push_back(versions.back() + "appended line " + std::to_string(i) + "\n");
      EXPECT_TRUE(s.PutFile(ns_, kKey, versions.back()).has_value());
    }
    return versions;
  }

  void ExpectVersions(Store& store, const std::vector<std::string>& versions) {
    for (std::size_t i = 0; i < versions.size(); ++i) {
      auto v = store.ReadVersion(ns_, kKey, std::to_string(i + 1));
      ASSERT_TRUE(v.has_value()) << v.error().ToString();
      EXPECT_EQ(*v, versions[i]) << "version " << i + 1;
    }
  }

  // The most rows any body is assembled from.
  std::int64_t LongestDeltaChain() {
    return RawInt(
        "WITH RECURSIVE walk(start, id, n) AS ("
        "  SELECT id, base_id, 1 FROM bodies "
        "  UNION ALL SELECT w.start, b.base_id, w.n + 1 FROM walk w JOIN bodies b ON b.id = w.id) "
        "SELECT max(n) FROM walk");
  }

  const std::string base_ = std::string(3000, 'b') + "\n";
};

TEST_F(DeltaBodiesTest, AppendsStoreOnlyTheNewBytes) {
  auto versions = Grow(base_, 40);
  ExpectVersions(*store_, versions);
  EXPECT_EQ(Read(kKey), versions.back());
  std::int64_t whole_bytes = 0;
  for (const auto& v : versions) whole_bytes += static_cast<std::int64_t>(v.size());
  EXPECT_EQ(RawInt("SELECT sum(size) FROM bodies"), whole_bytes);
  // Only the first version is whole. Append i is a delta on append i with its
  // lowest set bit cleared, except that the powers of two past 1 build on
  // append 1: a read assembles 1 + popcount(i) rows, one more from i = 2 on,
  // at most 7 up to 40 (i = 31). Only append 1 holds a reference on the whole
  // body, so no other append rewrites that row.
  const auto base = [](int i) { return (i & (i - 1)) != 0 || i == 1 ? i & (i - 1) : 1; };
  EXPECT_EQ(RawInt("SELECT count(*) FROM bodies WHERE base_id IS NULL"), 1);
  EXPECT_EQ(RawInt("SELECT count(*) FROM bodies WHERE base_id IS NOT NULL"), 40);
  EXPECT_EQ(RawInt("SELECT refs FROM bodies WHERE base_id IS NULL"), 2);  // its grain, append 1
  std::int64_t delta_bytes = 0;
  for (int i = 1; i <= 40; ++i) {
    delta_bytes += static_cast<std::int64_t>(versions[i].size() - versions[base(i)].size());
  }
  EXPECT_EQ(RawInt("SELECT sum(length(bytes)) FROM bodies WHERE base_id IS NOT NULL"),
            delta_bytes);
  EXPECT_LT(delta_bytes, whole_bytes / 50);
  EXPECT_EQ(LongestDeltaChain(), 7);
  EXPECT_EQ(test::BodyRefMismatches(path_), 0);
  // A delta's hash, continued from its base's, is the whole body's hash.
  for (std::size_t i = 0; i < versions.size(); ++i) {
    EXPECT_EQ(test::PlainText(path_, "SELECT lower(hex(b.hash)) FROM grains g JOIN bodies b ON "
                                     "b.id = g.body_id WHERE g.seq = " + std::to_string(i + 1)),
              ToHex(HashBody(versions[i])))
        << "version " << i + 1;
  }
}

// A file too large for the Store to keep its content in memory is still
// appended to as deltas: the append is recognised by the hash of its prefix.
// That holds just under the limit too, where the run's own bookkeeping takes
// the kept entry over it. A change inside such a file is stored whole.
TEST_F(DeltaBodiesTest, AFileLargerThanTheKeptContentStillGrowsByDeltas) {
  for (std::size_t size : {AppendBases::kMaxEntryBytes - 200, AppendBases::kMaxEntryBytes}) {
    SCOPED_TRACE(size);
    const std::string key = "/memories/big" + std::to_string(size) + ".log";
    std::vector<std::string> versions{std::string(size, 'x') + "\n"};
    ASSERT_TRUE(store_->PutFile(ns_, key, versions.back()).has_value());
    const std::int64_t whole = RawInt("SELECT count(*) FROM bodies WHERE base_id IS NULL");
    for (int i = 0; i < 8; ++i) {
      versions.push_back(versions.back() + "appended line " + std::to_string(i) + "\n");
      ASSERT_TRUE(store_->PutFile(ns_, key, versions.back()).has_value());
    }
    EXPECT_EQ(RawInt("SELECT count(*) FROM bodies WHERE base_id IS NULL"), whole);
    for (std::size_t v = 0; v < versions.size(); ++v) {
      auto read = store_->ReadVersion(ns_, key, std::to_string(v + 1));
      ASSERT_TRUE(read.has_value());
      EXPECT_EQ(*read, versions[v]) << "version " << v + 1;
    }
    if (size < AppendBases::kMaxEntryBytes) continue;
    std::string changed = versions.back();
    changed[10] = 'y';
    changed += "one more line\n";  // longer, but not an append
    ASSERT_TRUE(store_->PutFile(ns_, key, changed).has_value());
    EXPECT_EQ(RawInt("SELECT count(*) FROM bodies WHERE base_id IS NULL"), whole + 1);
    EXPECT_EQ(Read(key), changed);
    // Its hash goes on from the prefix the append check hashed: still the
    // whole body's hash.
    EXPECT_EQ(test::PlainText(path_, "SELECT lower(hex(hash)) FROM bodies WHERE size = " +
                                         std::to_string(changed.size())),
              ToHex(HashBody(changed)));
    // A longer body that is not an append and shares no prefix is hashed whole too.
    const std::string other = std::string(changed.size() + 5, 'z');
    ASSERT_TRUE(store_->PutFile(ns_, key, other).has_value());
    EXPECT_EQ(test::PlainText(path_, "SELECT lower(hex(hash)) FROM bodies WHERE size = " +
                                         std::to_string(other.size())),
              ToHex(HashBody(other)));
  }
  EXPECT_LT(RawInt("SELECT sum(length(bytes)) FROM bodies WHERE base_id IS NOT NULL"), 1000);
  EXPECT_EQ(test::BodyRefMismatches(path_), 0);
}

// The mount's O_APPEND saves name the body they appended to (`appended_to`,
// with its hash): each is recognised as an append and hashed without the
// bytes before it, so a file past what AppendBases keeps grows at the cost of
// its new lines, not of its size. A base whose hash is not the run's newest
// body's is checked the usual way.
TEST_F(DeltaBodiesTest, AVouchedAppendHashesOnlyTheNewBytes) {
  auto root = *store_->RootId(ns_);
  auto n = store_->CreateNode(root, "big.log", NewNode{.kind = NodeKind::kFile, .mode = 0644});
  ASSERT_TRUE(n.has_value());
  std::string body(AppendBases::kMaxEntryBytes + 4096, 'x');
  auto first = store_->WriteBody(n->id, body);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->base.hash, HashBody(body));
  BodyBase base = first->base;
  std::vector<std::string> versions{body};
  for (int i = 0; i < 6; ++i) {
    const std::string line = "appended line " + std::to_string(i) + "\n";
    body += line;
    const std::uint64_t before = HashedBytes();
    auto written = store_->WriteBody(n->id, body, std::nullopt, {}, &base);
    ASSERT_TRUE(written.has_value()) << written.error().ToString();
    EXPECT_EQ(HashedBytes() - before, line.size()) << "append " << i;
    EXPECT_EQ(written->base.hash, HashBody(body));
    base = written->base;
    versions.push_back(body);
  }
  EXPECT_EQ(RawInt("SELECT count(*) FROM bodies WHERE base_id IS NULL"), 1);
  EXPECT_EQ(RawInt("SELECT count(*) FROM bodies WHERE base_id IS NOT NULL"), 6);
  for (std::size_t v = 0; v < versions.size(); ++v) {
    auto read = store_->ReadVersion(ns_, "/memories/big.log", std::to_string(v + 1));
    ASSERT_TRUE(read.has_value());
    EXPECT_EQ(*read, versions[v]) << "version " << v + 1;
  }

  // A reader's base carries the same hash as the writer's.
  BodyBase read_base;
  ASSERT_TRUE(store_->ReadBody(n->id, nullptr, &read_base).has_value());
  EXPECT_EQ(read_base.body, base.body);
  EXPECT_EQ(read_base.hash, base.hash);

  // A base that does not match the run's newest body (here: a wrong hash) is
  // not trusted: the prefix is hashed, and a body that is no append of it is
  // stored whole with its own hash.
  BodyBase wrong = base;
  wrong.hash = HashBody("something else");
  std::string changed = body;
  changed[0] = 'y';
  changed += "one more line\n";
  const std::uint64_t before = HashedBytes();
  auto stored = store_->WriteBody(n->id, changed, std::nullopt, {}, &wrong);
  ASSERT_TRUE(stored.has_value());
  EXPECT_GE(HashedBytes() - before, changed.size());
  EXPECT_EQ(RawInt("SELECT count(*) FROM bodies WHERE base_id IS NULL"), 2);
  EXPECT_EQ(*store_->ReadBody(n->id), changed);
  EXPECT_EQ(test::PlainText(path_, "SELECT lower(hex(hash)) FROM bodies WHERE size = " +
                                       std::to_string(changed.size())),
            ToHex(HashBody(changed)));
  EXPECT_EQ(test::BodyRefMismatches(path_), 0);
}

// A delta whose rows do not add up to its stored size (a damaged file) is a
// Corruption error, never a body of the wrong bytes.
TEST_F(DeltaBodiesTest, RowsThatDoNotFitTheirBaseAreCorruption) {
  auto versions = Grow(base_, 3);
  auto damage = [&](const char* sql) {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
    sqlite3_busy_timeout(raw, 5000);
    ASSERT_EQ(sqlite3_exec(raw, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sql;
    sqlite3_close(raw);
  };
  auto read_v2 = [&]() {  // a fresh Store: no cached head or run
    auto other = Store::Open(path_);
    EXPECT_TRUE(other.has_value());
    return (*other)->ReadVersion(ns_, kKey, "2");
  };
  ASSERT_EQ(*read_v2(), versions[1]);
  damage("UPDATE bodies SET size = size + 1 WHERE base_id IS NULL");
  auto misplaced = read_v2();
  ASSERT_FALSE(misplaced.has_value());
  EXPECT_EQ(misplaced.error().code(), StatusCode::kCorruption) << misplaced.error().ToString();
  damage("UPDATE bodies SET size = size - 1, bytes = substr(bytes, 2) WHERE base_id IS NULL");
  auto short_base = read_v2();
  ASSERT_FALSE(short_base.has_value());
  EXPECT_EQ(short_base.error().code(), StatusCode::kCorruption) << short_base.error().ToString();
}

TEST_F(DeltaBodiesTest, AnotherConnectionReadsTheAssembledBodies) {
  auto versions = Grow(base_, 12);
  auto other = Store::Open(path_);
  ASSERT_TRUE(other.has_value()) << other.error().ToString();
  ExpectVersions(**other, versions);
  auto head = (*other)->ReadFile(ns_, kKey);
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(*head, versions.back());
}

TEST_F(DeltaBodiesTest, WritersTakingTurnsBuildOnlyOnTheHead) {
  // Each Store only knows the bodies it sealed itself; after the other's
  // writes it stores a whole body rather than a delta on its own older one.
  auto other = Store::Open(path_);
  ASSERT_TRUE(other.has_value()) << other.error().ToString();
  std::vector<std::string> versions{base_};
  ASSERT_TRUE(store_->PutFile(ns_, kKey, base_).has_value());
  for (int i = 0; i < 12; ++i) {
    Store& writer = (i / 3) % 2 == 0 ? **other : *store_;
    versions.push_back(versions.back() + "line " + std::to_string(i) + "\n");
    ASSERT_TRUE(writer.PutFile(ns_, kKey, versions.back()).has_value());
  }
  ExpectVersions(*store_, versions);
  ExpectVersions(**other, versions);
  // The first write of each turn (versions 2, 5, 8, 11) starts a new run.
  EXPECT_EQ(test::PlainText(path_, "SELECT group_concat(seq) FROM (SELECT g.seq FROM grains g "
                                   "JOIN bodies b ON b.id = g.body_id WHERE b.base_id IS NULL "
                                   "ORDER BY g.seq)"),
            "1,2,5,8,11");
  // Every delta is built on an earlier version of the same file.
  EXPECT_EQ(RawInt("SELECT count(*) FROM grains g JOIN bodies b ON b.id = g.body_id "
                   "WHERE b.base_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM grains p "
                   "WHERE p.chain_id = g.chain_id AND p.seq < g.seq AND p.body_id = b.base_id)"),
            0);
  EXPECT_EQ(test::BodyRefMismatches(path_), 0);
}

TEST_F(DeltaBodiesTest, EditsThatAreNotAppendsAndSmallFilesAreStoredWhole) {
  ASSERT_TRUE(store_->PutFile(ns_, kKey, base_).has_value());
  std::string edited = base_;
  edited[10] = 'X';
  edited += "tail\n";
  ASSERT_TRUE(store_->PutFile(ns_, kKey, edited).has_value());
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/small.md", "short\n").has_value());
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/small.md", "short\nand more\n").has_value());
  EXPECT_EQ(RawInt("SELECT count(*) FROM bodies WHERE base_id IS NOT NULL"), 0);
  EXPECT_EQ(Read(kKey), edited);
  EXPECT_EQ(Read("/memories/small.md"), "short\nand more\n");
}

TEST_F(DeltaBodiesTest, PurgeErasesEveryRowOfAnAppendedFile) {
  Grow("SECRET-BASE-" + base_, 10);
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/keep.md", "kept\n").has_value());
  ASSERT_TRUE(store_->DeleteKey(ns_, kKey).ok());
  ASSERT_TRUE(store_->Purge(ns_, kKey).ok());
  EXPECT_EQ(RawInt("SELECT count(*) FROM bodies"), 1);
  EXPECT_EQ(test::BodyRefMismatches(path_), 0);
  EXPECT_EQ(Read("/memories/keep.md"), "kept\n");
  store_.reset();
  for (const char* suffix : {"", "-wal"}) {
    const std::string raw = test::FileBytes(path_ + suffix);
    EXPECT_EQ(raw.find("SECRET-BASE"), std::string::npos) << "plaintext left in " << suffix;
    EXPECT_EQ(raw.find("appended line 7"), std::string::npos) << "plaintext left in " << suffix;
  }
}

TEST_F(DeltaBodiesTest, RenameDeleteAndRestoreKeepAppendedVersionsWhole) {
  auto versions = Grow(base_, 6);
  ASSERT_TRUE(store_->RenameKey(ns_, kKey, "/memories/moved.md").ok());
  versions.push_back(versions.back() + "after the move\n");
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/moved.md", versions.back()).has_value());
  ASSERT_TRUE(store_->DeleteKey(ns_, "/memories/moved.md").ok());
  ASSERT_TRUE(store_->Restore(ns_, "/memories/moved.md").ok());
  EXPECT_EQ(Read("/memories/moved.md"), versions.back());
  // The move added a provenance version with the same content as the one
  // before it; every other version reads back as written.
  auto history = Hist("/memories/moved.md");
  ASSERT_EQ(history.size(), versions.size() + 1);
  std::vector<std::string> read;
  for (std::size_t i = 1; i <= history.size(); ++i) {
    auto v = store_->ReadVersion(ns_, "/memories/moved.md", std::to_string(i));
    ASSERT_TRUE(v.has_value()) << v.error().ToString();
    read.push_back(*v);
  }
  read.erase(read.begin() + 7);  // the rename's version repeats version 7
  EXPECT_EQ(read, versions);
  EXPECT_EQ(test::BodyRefMismatches(path_), 0);
}

TEST_F(DeltaBodiesTest, ContentSharedWithAFactReadsWholeFromBoth) {
  auto versions = Grow(base_, 3);
  FactInput fact{.subject = "log", .relation = "snapshot", .object = "", .context = versions[2]};
  ASSERT_TRUE(store_->AddFact(ns_, fact).has_value());
  EXPECT_EQ(RawInt("SELECT count(*) FROM bodies"), 4);  // the fact shares a delta row
  auto recalled = store_->Recall(ns_, "log", "snapshot", false);
  ASSERT_TRUE(recalled.has_value()) << recalled.error().ToString();
  ASSERT_EQ(recalled->size(), 1u);
  EXPECT_EQ((*recalled)[0].context, versions[2]);
  // Purging the file keeps the rows the fact still needs.
  ASSERT_TRUE(store_->DeleteKey(ns_, kKey).ok());
  ASSERT_TRUE(store_->Purge(ns_, kKey).ok());
  recalled = store_->Recall(ns_, "log", "snapshot", false);
  ASSERT_TRUE(recalled.has_value()) << recalled.error().ToString();
  EXPECT_EQ((*recalled)[0].context, versions[2]);
  EXPECT_EQ(test::BodyRefMismatches(path_), 0);
}

}  // namespace
}  // namespace grainstore
