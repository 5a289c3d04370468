// Delta bodies: a file that grows by appends stores each version as the bytes
// appended to an earlier body, and every version still reads back whole.
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

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
        "  UNION ALL SELECT w.start, b.base_id, w.n + 1 FROM walk w "
        "  JOIN bodies b ON b.id = abs(w.id)) "
        "SELECT max(n) FROM walk");
  }

  // Version `v` of kKey read by a fresh Store: no cached head or run.
  Result<std::string> ReadAfresh(const char* v) {
    auto fresh = Store::Open(path_);
    EXPECT_TRUE(fresh.has_value());
    return (*fresh)->ReadVersion(ns_, kKey, v);
  }

  // The body of node `id` read by a fresh Store.
  Result<std::string> ReadAfreshBody(NodeId id) {
    auto fresh = Store::Open(path_);
    EXPECT_TRUE(fresh.has_value());
    return (*fresh)->ReadBody(id);
  }

  // Deletes and purges kKey.
  void PurgeTheFile() {
    ASSERT_TRUE(store_->DeleteKey(ns_, kKey).ok());
    ASSERT_TRUE(store_->Purge(ns_, kKey).ok());
  }

  // Closes the store and checks that none of `secrets` is left in its
  // database file or WAL.
  void ExpectGoneFromTheFiles(std::initializer_list<const char*> secrets) {
    store_.reset();
    for (const char* suffix : {"", "-wal"}) {
      const std::string raw = test::FileBytes(path_ + suffix);
      for (const char* secret : secrets) {
        EXPECT_EQ(raw.find(secret), std::string::npos)
            << secret << ": plaintext left in the store's file" << suffix;
      }
    }
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

// A file the mount keeps unversioned (a log under a temp name, a database's
// -wal) is appended to at every save: each body is a delta too, each earlier
// body goes once no delta is built on it, and removing the file leaves no row.
TEST_F(DeltaBodiesTest, AnUnversionedFileGrowsByDeltasAndLeavesNoRowsBehind) {
  const NodeId root = *store_->RootId(ns_);
  NewNode spec{.kind = NodeKind::kFile, .mode = 0644, .versioning = Versioning::kUnversioned};
  auto node = store_->CreateNode(root, "app.db-wal", spec);
  ASSERT_TRUE(node.has_value()) << node.error().ToString();
  std::string body = base_;
  ASSERT_TRUE(store_->WriteBody(node->id, body).has_value());
  for (int i = 0; i < 200; ++i) {
    body += "frame " + std::to_string(i) + "\n";
    auto written = store_->WriteBody(node->id, body);
    ASSERT_TRUE(written.has_value()) << i << ": " << written.error().ToString();
    ASSERT_FALSE(written->new_version);
  }
  EXPECT_EQ(Read("/memories/app.db-wal"), body);
  auto fresh = Store::Open(path_);
  ASSERT_TRUE(fresh.has_value());
  EXPECT_EQ(*(*fresh)->ReadBody(node->id), body);
  // The file's body row holds its last appends alone (those past its base),
  // and the rows left are the bases under it: a few, where a whole copy was
  // written at every save (200 of a 3 KB file: 800 KB through the WAL).
  EXPECT_LT(RawInt("SELECT length(b.bytes) FROM nodes n JOIN bodies b ON b.id = n.body_id "
                   "WHERE n.id = " + std::to_string(node->id)),
            static_cast<std::int64_t>(body.size() / 20));
  EXPECT_LE(RawInt("SELECT count(*) FROM bodies"), 10);
  EXPECT_LT(RawInt("SELECT sum(length(bytes)) FROM bodies"),
            2 * static_cast<std::int64_t>(body.size()));
  EXPECT_EQ(LongestDeltaChain(), RawInt("SELECT count(*) FROM bodies"));  // all under its body
  EXPECT_EQ(test::BodyRefMismatches(path_), 0);
  ASSERT_TRUE(store_->RemoveNode(root, "app.db-wal", false, Vacate::kVacate).ok());
  EXPECT_EQ(RawInt("SELECT count(*) FROM bodies"), 0);
}

// An unversioned file keeps only its current content: an edit that is no
// append is stored whole, and the bytes it took out go with the old body.
TEST_F(DeltaBodiesTest, AnUnversionedFileKeepsNoBytesAnEditTookOut) {
  const NodeId root = *store_->RootId(ns_);
  NewNode spec{.kind = NodeKind::kFile, .mode = 0644, .versioning = Versioning::kUnversioned};
  auto node = store_->CreateNode(root, "creds.tmp", spec);
  ASSERT_TRUE(node.has_value()) << node.error().ToString();
  const std::string head = base_ + "password: SECRET-UNVERSIONED-1\n";
  ASSERT_TRUE(store_->WriteBody(node->id, head + base_).has_value());
  ASSERT_TRUE(store_->WriteBody(node->id, base_ + "password: redacted\n" + base_).has_value());
  EXPECT_EQ(RawInt("SELECT count(*) FROM bodies"), 1);
  EXPECT_EQ(test::BodyRefMismatches(path_), 0);
  ExpectGoneFromTheFiles({"SECRET-UNVERSIONED-1"});
}

// A versioned file's append run goes on under a temp name (the node keeps
// its id), and a purge of the chain it left frees the run's older bodies:
// the next append finds its base gone and is stored whole, not refused.
TEST_F(DeltaBodiesTest, AnAppendAfterAPurgeFreedItsRunsBaseIsStoredWhole) {
  auto versions = Grow(base_, 5);
  const NodeId root = *store_->RootId(ns_);
  auto moved = store_->RenameNode(root, "log.md", root, "log.md.tmp", RenameMode::kReplace,
                                  Versioning::kUnversioned);
  ASSERT_TRUE(moved.has_value()) << moved.error().ToString();
  ASSERT_TRUE(store_->Purge(ns_, kKey).ok());
  std::string body = versions.back();
  for (int i = 0; i < 6; ++i) {
    body += "after the purge " + std::to_string(i) + "\n";
    auto written = store_->WriteBody(moved->id, body);
    ASSERT_TRUE(written.has_value()) << i << ": " << written.error().ToString();
  }
  EXPECT_EQ(*store_->ReadBody(moved->id), body);
  EXPECT_EQ(*ReadAfreshBody(moved->id), body);
  EXPECT_EQ(test::BodyRefMismatches(path_), 0);
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

// An unversioned file's freed body id is handed out again: another mount's
// truncate and rewrite of the same size leaves the id and size an append
// was made to, with other bytes. The append goes after those bytes.
TEST_F(DeltaBodiesTest, AnAppendToAReusedBodyIdGoesAfterTheBodyNowStored) {
  auto root = *store_->RootId(ns_);
  auto n = store_->CreateNode(root, "f.tmp",
                              NewNode{.kind = NodeKind::kFile, .mode = 0644,
                                      .versioning = Versioning::kUnversioned});
  ASSERT_TRUE(n.has_value());
  // A version of another file keeps the empty body's row, below the next.
  auto keep = store_->CreateNode(root, "keep.md", NewNode{.kind = NodeKind::kFile});
  ASSERT_TRUE(keep.has_value());
  ASSERT_TRUE(store_->WriteBody(keep->id, "").has_value());
  auto first = store_->WriteBody(n->id, "AAAA\n");  // the newest row
  ASSERT_TRUE(first.has_value());
  const BodyBase base = first->base;
  ASSERT_TRUE(store_->WriteBody(n->id, "").has_value());  // frees AAAA's row
  auto rewritten = store_->WriteBody(n->id, "CCCC\n");
  ASSERT_TRUE(rewritten.has_value());
  ASSERT_EQ(rewritten->base.body, base.body) << "the premise: SQLite reused the row id";
  auto appended = store_->WriteBody(n->id, "AAAA\nb\n", std::nullopt, {}, &base);
  ASSERT_TRUE(appended.has_value()) << appended.error().ToString();
  EXPECT_TRUE(appended->rebased);
  EXPECT_EQ(*store_->ReadBody(n->id), "CCCC\nb\n");
  EXPECT_EQ(test::BodyRefMismatches(path_), 0);
}

// A file whose content another file holds already (its body row shared)
// goes on growing by deltas on that row: an append hashes its new bytes only.
// On a shared delta row no run starts, so deltas do not stack across files.
TEST_F(DeltaBodiesTest, AnAppendRunStartsOnABodyAnotherFileStoredWhole) {
  auto root = *store_->RootId(ns_);
  const auto make = [&](const char* name) {
    auto n = store_->CreateNode(root, name, NewNode{.kind = NodeKind::kFile, .mode = 0644});
    EXPECT_TRUE(n.has_value());
    return n->id;
  };
  const NodeId a = make("a.log");
  const NodeId b = make("b.log");
  std::string body = base_;
  ASSERT_TRUE(store_->WriteBody(a, body).has_value());
  auto shared = store_->WriteBody(b, body);
  ASSERT_TRUE(shared.has_value());
  EXPECT_EQ(RawInt("SELECT count(*) FROM bodies"), 1);
  BodyBase base = shared->base;
  std::vector<std::string> versions{body};
  for (int i = 0; i < 4; ++i) {
    const std::string line = "appended line " + std::to_string(i) + "\n";
    body += line;
    const std::uint64_t before = HashedBytes();
    auto written = store_->WriteBody(b, body, std::nullopt, {}, &base);
    ASSERT_TRUE(written.has_value()) << written.error().ToString();
    EXPECT_EQ(HashedBytes() - before, line.size()) << "append " << i;
    base = written->base;
    versions.push_back(body);
  }
  EXPECT_EQ(RawInt("SELECT count(*) FROM bodies WHERE base_id IS NULL"), 1);
  EXPECT_EQ(RawInt("SELECT count(*) FROM bodies WHERE base_id IS NOT NULL"), 4);

  // a.log catches up with b.log's newest body, a delta: a.log starts no run
  // on it, so its next append is no delta on that delta (the whole body is
  // hashed, and the row stays within the splice depth bound).
  auto caught_up = store_->WriteBody(a, body);
  ASSERT_TRUE(caught_up.has_value());
  std::string a_body = body + "only in a\n";
  const std::uint64_t before = HashedBytes();
  ASSERT_TRUE(store_->WriteBody(a, a_body, std::nullopt, {}, &caught_up->base).has_value());
  EXPECT_GE(HashedBytes() - before, a_body.size());
  EXPECT_EQ(RawInt("SELECT count(*) FROM bodies WHERE base_id > 0 AND size = " +
                   std::to_string(a_body.size())),
            0);

  // Every version of both files reads back, and survives a purge of a.log.
  for (std::size_t v = 0; v < versions.size(); ++v) {
    auto read = store_->ReadVersion(ns_, "/memories/b.log", std::to_string(v + 1));
    ASSERT_TRUE(read.has_value());
    EXPECT_EQ(*read, versions[v]) << "version " << v + 1;
  }
  EXPECT_EQ(*ReadAfreshBody(a), a_body);
  ASSERT_TRUE(store_->DeleteKey(ns_, "/memories/a.log").ok());
  ASSERT_TRUE(store_->Purge(ns_, "/memories/a.log").ok());
  auto fresh = Store::Open(path_);
  ASSERT_TRUE(fresh.has_value());
  for (std::size_t v = 0; v < versions.size(); ++v) {
    auto read = (*fresh)->ReadVersion(ns_, "/memories/b.log", std::to_string(v + 1));
    ASSERT_TRUE(read.has_value()) << read.error().ToString();
    EXPECT_EQ(*read, versions[v]) << "version " << v + 1 << " after the purge";
  }
  EXPECT_EQ(test::BodyRefMismatches(path_), 0);
}

// A delta whose rows do not add up to its stored size (a damaged file) is a
// Corruption error, never a body of the wrong bytes.
TEST_F(DeltaBodiesTest, RowsThatDoNotFitTheirBaseAreCorruption) {
  auto versions = Grow(base_, 3);
  ASSERT_EQ(*ReadAfresh("2"), versions[1]);
  ASSERT_TRUE(test::PlainExec(path_, "UPDATE bodies SET size = size + 1 WHERE base_id IS NULL"));
  auto misplaced = ReadAfresh("2");
  ASSERT_FALSE(misplaced.has_value());
  EXPECT_EQ(misplaced.error().code(), StatusCode::kCorruption) << misplaced.error().ToString();
  ASSERT_TRUE(test::PlainExec(path_,
                              "UPDATE bodies SET size = size - 1, bytes = substr(bytes, 2) "
                              "WHERE base_id IS NULL"));
  auto short_base = ReadAfresh("2");
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
  // The first write of each turn (versions 2, 5, 8, 11) starts no run of
  // its own writer's: it is stored as a splice on the head the other left
  // (base_id negated), read back from the store.
  EXPECT_EQ(test::PlainText(path_, "SELECT group_concat(seq) FROM (SELECT g.seq FROM grains g "
                                   "JOIN bodies b ON b.id = g.body_id WHERE b.base_id IS NULL "
                                   "ORDER BY g.seq)"),
            "1");
  EXPECT_EQ(test::PlainText(path_, "SELECT group_concat(seq) FROM (SELECT g.seq FROM grains g "
                                   "JOIN bodies b ON b.id = g.body_id WHERE b.base_id < 0 "
                                   "ORDER BY g.seq)"),
            "2,5,8,11");
  // Every delta is built on an earlier version of the same file.
  EXPECT_EQ(RawInt("SELECT count(*) FROM grains g JOIN bodies b ON b.id = g.body_id "
                   "WHERE b.base_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM grains p "
                   "WHERE p.chain_id = g.chain_id AND p.seq < g.seq "
                   "AND p.body_id = abs(b.base_id))"),
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

// An edit that keeps most of a file (a line changed, inserted or removed
// anywhere) is stored as a splice on the version it was made from: the new
// bytes and where they go. Issue: every such edit stored a whole copy, so a
// file edited in the middle grew its store with the square of its length.
TEST_F(DeltaBodiesTest, EditsInTheMiddleAreStoredAsSplices) {
  std::string text;
  for (int i = 0; i < 600; ++i) text += "line " + std::to_string(i) + " of the notes\n";
  ASSERT_TRUE(store_->PutFile(ns_, kKey, text).has_value());
  std::vector<std::string> versions{text};
  for (int i = 0; i < 60; ++i) {
    auto edited = store_->EditFile(ns_, kKey, [&](std::string_view current, std::string* next) {
      *next = std::string(current);
      const std::size_t at = (static_cast<std::size_t>(i) * 7919) % (next->size() - 40);
      switch (i % 3) {
        case 0: next->insert(at, "inserted " + std::to_string(i) + "\n"); break;
        case 1: next->erase(at, 17); break;
        default: next->replace(at, 5, "EDIT" + std::to_string(i)); break;
      }
      return Status::Ok();
    });
    ASSERT_TRUE(edited.has_value()) << edited.error().ToString();
    versions.push_back(*store_->ReadFile(ns_, kKey));
  }
  ExpectVersions(*store_, versions);
  auto other = Store::Open(path_);  // no cache of this Store's
  ASSERT_TRUE(other.has_value());
  ExpectVersions(**other, versions);
  // A whole body every 17 versions at most: the rest are splices, each a
  // few dozen bytes, on the version before them.
  EXPECT_GE(RawInt("SELECT count(*) FROM bodies WHERE base_id < 0"), 55);
  EXPECT_LE(RawInt("SELECT count(*) FROM bodies WHERE base_id IS NULL"), 4);
  EXPECT_LT(RawInt("SELECT max(length(bytes)) FROM bodies WHERE base_id < 0"), 64);
  EXPECT_LT(RawInt("SELECT sum(length(bytes)) FROM bodies") * 10,
            RawInt("SELECT sum(size) FROM bodies"));
  EXPECT_LE(LongestDeltaChain(), 17);
  EXPECT_EQ(test::BodyRefMismatches(path_), 0);
}

// A body stored whole before the version it follows was at hand (written by
// a Store that did not seal that version) becomes a splice on it once its
// version is appended; then appends build on it as on any body.
TEST_F(DeltaBodiesTest, AWholeBodyWrittenByAnotherStoreBecomesASplice) {
  std::string text(5000, 'a');
  text += "\n";
  ASSERT_TRUE(store_->PutFile(ns_, kKey, text).has_value());
  auto other = Store::Open(path_);
  ASSERT_TRUE(other.has_value());
  std::vector<std::string> versions{text};
  versions.push_back("changed" + text.substr(7));
  ASSERT_TRUE((*other)->PutFile(ns_, kKey, versions.back()).has_value());
  for (int i = 0; i < 3; ++i) {
    versions.push_back(versions.back() + "appended " + std::to_string(i) + "\n");
    ASSERT_TRUE((*other)->PutFile(ns_, kKey, versions.back()).has_value());
  }
  ExpectVersions(*store_, versions);
  EXPECT_EQ(RawInt("SELECT count(*) FROM bodies WHERE base_id IS NULL"), 1);
  EXPECT_EQ(RawInt("SELECT count(*) FROM bodies WHERE base_id < 0"), 1);
  EXPECT_EQ(RawInt("SELECT count(*) FROM bodies WHERE base_id > 0"), 3);
  EXPECT_EQ(test::BodyRefMismatches(path_), 0);
}

// A splice row names its base negated: code that reads base_id as an
// append's base (a build before splices) finds no row there and reports the
// body missing, never a body of the wrong bytes; a cut or oversized splice
// is Corruption too.
TEST_F(DeltaBodiesTest, SpliceRowsThatDoNotFitAreCorruption) {
  std::string text(4000, 's');
  ASSERT_TRUE(store_->PutFile(ns_, kKey, text).has_value());
  text[2000] = 'X';
  ASSERT_TRUE(store_->PutFile(ns_, kKey, text).has_value());
  ASSERT_EQ(RawInt("SELECT count(*) FROM bodies WHERE base_id < 0"), 1);
  EXPECT_EQ(RawInt("SELECT count(*) FROM bodies b WHERE base_id < 0 AND "
                   "EXISTS (SELECT 1 FROM bodies a WHERE a.id = b.base_id)"),
            0);
  ASSERT_EQ(*ReadAfresh("2"), text);
  // The suffix it keeps made larger than its base.
  ASSERT_TRUE(test::PlainExec(
      path_,
      "UPDATE bodies SET bytes = CAST(x'a00f000000000000' || substr(bytes, 9) AS BLOB) "
      "WHERE base_id < 0"));
  auto oversized = ReadAfresh("2");
  ASSERT_FALSE(oversized.has_value());
  EXPECT_EQ(oversized.error().code(), StatusCode::kCorruption) << oversized.error().ToString();
  ASSERT_TRUE(test::PlainExec(path_, "UPDATE bodies SET bytes = x'0102' WHERE base_id < 0"));
  auto cut = ReadAfresh("2");
  ASSERT_FALSE(cut.has_value());
  EXPECT_EQ(cut.error().code(), StatusCode::kCorruption) << cut.error().ToString();
}

TEST_F(DeltaBodiesTest, PurgeErasesEveryRowOfASplicedFile) {
  std::string text = "SECRET-BASE-" + std::string(4000, 'p');
  ASSERT_TRUE(store_->PutFile(ns_, kKey, text).has_value());
  for (int i = 0; i < 20; ++i) {
    text.insert(100 + i, "SECRET-EDIT-" + std::to_string(i));
    ASSERT_TRUE(store_->PutFile(ns_, kKey, text).has_value());
  }
  ASSERT_GE(RawInt("SELECT count(*) FROM bodies WHERE base_id < 0"), 16);
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/keep.md", "kept\n").has_value());
  PurgeTheFile();
  EXPECT_EQ(RawInt("SELECT count(*) FROM bodies"), 1);
  EXPECT_EQ(test::BodyRefMismatches(path_), 0);
  ExpectGoneFromTheFiles({"SECRET-BASE", "SECRET-EDIT-1"});
}

// Issue: a version of the purged file stored as a splice, whose content
// another file had too (stored once), stayed for that file, and kept alive
// the purged version it was built on, bytes its edit removed and all.
TEST_F(DeltaBodiesTest, PurgeLeavesNoVersionOfItsOwnBehindASharedSplice) {
  const std::string kept(6000, 'k');
  const std::string secret = kept.substr(0, 3000) + "PASSWORD: hunter2\n" + kept.substr(3000);
  ASSERT_TRUE(store_->PutFile(ns_, kKey, secret).has_value());
  ASSERT_TRUE(store_->PutFile(ns_, kKey, kept).has_value());  // the line removed: a splice
  ASSERT_EQ(RawInt("SELECT count(*) FROM bodies WHERE base_id < 0"), 1);
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/copy.md", kept).has_value());  // shares it
  PurgeTheFile();
  EXPECT_EQ(Read("/memories/copy.md"), kept);
  EXPECT_EQ(RawInt("SELECT count(*) FROM bodies"), 1);
  EXPECT_EQ(RawInt("SELECT count(*) FROM bodies WHERE base_id IS NOT NULL"), 0);
  EXPECT_EQ(test::BodyRefMismatches(path_), 0);
  ExpectGoneFromTheFiles({"hunter2"});
}

// Issue: purging a deleted copy of one of another file's versions rewrote
// that version, stored as a delta on the other file's own versions, as its
// whole body: each such purge added a whole copy of the file to the store.
TEST_F(DeltaBodiesTest, PurgingACopyOfAVersionLeavesTheFilesDeltasAsTheyWere) {
  std::vector<std::string> versions = Grow(base_, 3);
  std::string text = versions.back();
  text.insert(1000, "an edit in the middle\n");  // a splice
  versions.push_back(text);
  ASSERT_TRUE(store_->PutFile(ns_, kKey, text).has_value());
  const std::int64_t deltas = RawInt("SELECT count(*) FROM bodies WHERE base_id IS NOT NULL");
  const std::int64_t bytes = RawInt("SELECT sum(length(bytes)) FROM bodies");
  ASSERT_EQ(deltas, 4);
  for (std::size_t v = 1; v < versions.size(); ++v) {
    ASSERT_TRUE(store_->PutFile(ns_, "/memories/copy.md", versions[v]).has_value());
    ASSERT_TRUE(store_->DeleteKey(ns_, "/memories/copy.md").ok());
    ASSERT_TRUE(store_->Purge(ns_, "/memories/copy.md").ok());
  }
  EXPECT_EQ(RawInt("SELECT count(*) FROM bodies WHERE base_id IS NOT NULL"), deltas);
  EXPECT_EQ(RawInt("SELECT sum(length(bytes)) FROM bodies"), bytes);
  EXPECT_EQ(test::BodyRefMismatches(path_), 0);
  ExpectVersions(*store_, versions);
}

// The other way round: the purged file's appended version, which a copy
// shares, is stored whole, and the purged versions it was built on go.
TEST_F(DeltaBodiesTest, PurgeStoresWholeASharedAppendOverItsPurgedVersions) {
  std::vector<std::string> versions = Grow("SECRET-BASE-" + base_, 3);
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/copy.md", versions.back()).has_value());
  PurgeTheFile();
  EXPECT_EQ(Read("/memories/copy.md"), versions.back());
  EXPECT_EQ(RawInt("SELECT count(*) FROM bodies"), 1);
  EXPECT_EQ(RawInt("SELECT count(*) FROM bodies WHERE base_id IS NOT NULL"), 0);
  EXPECT_EQ(test::BodyRefMismatches(path_), 0);
}

// A stored base_id with no positive counterpart (damage) is Corruption.
TEST_F(DeltaBodiesTest, ABaseIdOfTheSmallestIntegerIsCorruption) {
  std::string text(4000, 'd');
  ASSERT_TRUE(store_->PutFile(ns_, kKey, text).has_value());
  text[2000] = 'X';
  ASSERT_TRUE(store_->PutFile(ns_, kKey, text).has_value());
  ASSERT_TRUE(
      test::PlainExec(path_, "UPDATE bodies SET base_id = -9223372036854775808 WHERE base_id < 0"));
  auto read = ReadAfresh("2");
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.error().code(), StatusCode::kCorruption) << read.error().ToString();
}

TEST_F(DeltaBodiesTest, PurgeErasesEveryRowOfAnAppendedFile) {
  Grow("SECRET-BASE-" + base_, 10);
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/keep.md", "kept\n").has_value());
  PurgeTheFile();
  EXPECT_EQ(RawInt("SELECT count(*) FROM bodies"), 1);
  EXPECT_EQ(test::BodyRefMismatches(path_), 0);
  EXPECT_EQ(Read("/memories/keep.md"), "kept\n");
  ExpectGoneFromTheFiles({"SECRET-BASE", "appended line 7"});
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
