// Schema migrations and the body reference counts, checked against the raw
// SQLite file.
#include <sqlite3.h>

#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "grainstore/store.h"
#include "schema.h"
#include "store_impl.h"
#include "test_util.h"

namespace grainstore {
namespace {

class SchemaTest : public ::testing::Test {
 protected:
  std::int64_t RawInt(const std::string& sql) { return test::PlainInt(path_, sql); }

  std::int64_t RefMismatches() { return test::BodyRefMismatches(path_); }

  // SQLite's EXPLAIN QUERY PLAN for `sql` on the store, one line per step
  // (empty if it cannot be prepared, with a failure recorded).
  std::string QueryPlan(const char* sql) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    const std::string explain = std::string("EXPLAIN QUERY PLAN ") + sql;
    EXPECT_EQ(sqlite3_prepare_v2(db, explain.c_str(), -1, &st, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db);
    std::string plan;
    while (st != nullptr && sqlite3_step(st) == SQLITE_ROW) {
      plan += reinterpret_cast<const char*>(sqlite3_column_text(st, 3));
      plan += "\n";
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return plan;
  }

  test::ScratchDir dir_{"schema_test"};
  std::string path_ = dir_.File("agent.db");
};

TEST_F(SchemaTest, MigratesAVersion1Store) {
  // Written by the v1 build: prefs.md edited twice, projects/old.md edited
  // then deleted, dup.md (same body as projects/areev.md) renamed into
  // archive/, a file in namespace "other", and two facts about alice.
  std::filesystem::copy_file(GRAINSTORE_TESTDATA "/store-v1.db", path_);
  ASSERT_EQ(RawInt("PRAGMA user_version"), 1);
  const std::int64_t last_node_id = RawInt("SELECT seq FROM sqlite_sequence WHERE name = 'nodes'");
  ASSERT_GT(last_node_id, RawInt("SELECT count(*) FROM nodes"));  // some were deleted
  {
    auto opened = Store::Open(path_);
    ASSERT_TRUE(opened.has_value()) << opened.error().ToString();
    Store& store = **opened;
    auto ns = store.Namespace("default");
    ASSERT_TRUE(ns.has_value());
    auto prefs = store.ReadFile(*ns, "/memories/prefs.md");
    ASSERT_TRUE(prefs.has_value());
    EXPECT_EQ(*prefs, "# Prefs\nVegetarian.\nLikes coffee.\n");
    auto hist = store.History(*ns, "/memories/prefs.md");
    ASSERT_TRUE(hist.has_value());
    ASSERT_EQ(hist->size(), 3u);
    EXPECT_EQ((*hist)[2].supersedes, (*hist)[1].grain_id);
    auto v1 = store.ReadVersion(*ns, "/memories/prefs.md", "1");
    ASSERT_TRUE(v1.has_value());
    EXPECT_EQ(*v1, "Vegetarian.\nLikes tea.\n");

    auto dup = store.History(*ns, "/memories/archive/dup.md");
    ASSERT_TRUE(dup.has_value());
    ASSERT_EQ(dup->size(), 2u);
    EXPECT_EQ((*dup)[1].op, "rename");
    EXPECT_EQ((*dup)[1].derived_from, (*dup)[0].grain_id);

    // The deleted file comes back with its history, then takes a new version
    // whose head is read from the migrated chain.
    EXPECT_EQ(store.ReadFile(*ns, "/memories/projects/old.md").error().code(),
              StatusCode::kNotFound);
    ASSERT_TRUE(store.Restore(*ns, "/memories/projects/old.md").ok());
    auto w = store.PutFile(*ns, "/memories/projects/old.md", "Fresh notes.\n");
    ASSERT_TRUE(w.has_value()) << w.error().ToString();
    EXPECT_EQ(w->seq, 3u);
    EXPECT_EQ(store.History(*ns, "/memories/projects/old.md")->size(), 3u);

    auto other = store.Namespace("other");
    ASSERT_TRUE(other.has_value());
    EXPECT_EQ(*store.ReadFile(*other, "/memories/x.md"), "other agent\n");
    auto facts = store.Recall(*ns, "alice", "prefers", false);
    ASSERT_TRUE(facts.has_value());
    ASSERT_EQ(facts->size(), 1u);
    EXPECT_EQ((*facts)[0].object, "coffee");

    // Node ids go on past every id the v1 store ever handed out.
    ASSERT_TRUE(store.PutFile(*ns, "/memories/new.md", "new\n").has_value());
    EXPECT_GT(store.StatKey(*ns, "/memories/new.md")->id, static_cast<NodeId>(last_node_id));
  }
  EXPECT_EQ(RawInt("PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(RawInt("SELECT value FROM counters WHERE name = 'node_floor'"), last_node_id);
  EXPECT_EQ(RawInt("SELECT count(*) FROM sqlite_sequence WHERE name = 'nodes'"), 0);
  EXPECT_EQ(RawInt("SELECT count(*) FROM pragma_table_info('chains') WHERE name = 'head_grain'"),
            0);
  EXPECT_EQ(RawInt("SELECT count(*) FROM pragma_index_list('grains') WHERE \"unique\" = 1"), 0);
  EXPECT_EQ(RawInt("SELECT count(*) FROM pragma_index_list('nodes') "
                   "WHERE name = 'nodes_by_parent' AND \"unique\" = 1"),
            1);
  EXPECT_EQ(test::PlainText(path_, "SELECT group_concat(name, ',') FROM "
                                   "(SELECT name FROM pragma_index_info('nodes_by_key') ORDER BY seqno)"),
            "ns_id,key,kind,body_id,size");
  // v6: a salt column, NULL on every grain written before it.
  // The two versions written above (old.md's third, new.md's first) have one.
  EXPECT_EQ(RawInt("SELECT count(*) FROM grains WHERE salt IS NOT NULL"), 2);
  EXPECT_EQ(RefMismatches(), 0);
  // The body shared by areev.md and dup.md is stored once, referenced by
  // their three grains (create, create, rename).
  EXPECT_EQ(RawInt("SELECT refs FROM bodies WHERE bytes = CAST('C++ store.' || char(10) AS BLOB)"),
            3);
}

// A snapshot reader (a user who may not write, a full disk) of a store too
// old to read as it is is told the write was an upgrade, with the
// snapshot's reason; the file is left as it was.
TEST_F(SchemaTest, AStoreTooOldToReadUnmigratedSaysWhoCanUpgradeIt) {
  std::filesystem::copy_file(GRAINSTORE_TESTDATA "/store-v1.db", path_);
  Db db;
  ASSERT_TRUE(db.OpenSnapshot(path_, "because of the test").ok());
  Status refused = Migrate(&db);
  EXPECT_EQ(refused.code(), StatusCode::kReadOnly);
  EXPECT_EQ(refused.message(),
            "the store has schema version 1 and needs an upgrade to version " +
                std::to_string(kSchemaVersion) +
                " before it can be read: the store cannot be written: because of the test");
  db.Close();
  EXPECT_EQ(RawInt("PRAGMA user_version"), 1);
}

TEST_F(SchemaTest, MigratesAVersion5StoreToSaltedGrains) {
  // A v5 store: written by this build, then its salts dropped and its stamp
  // set back, as a v5 build leaves the file.
  std::string old_id;
  {
    auto opened = Store::Open(path_);
    ASSERT_TRUE(opened.has_value()) << opened.error().ToString();
    NsId ns = *(*opened)->Namespace("default");
    ASSERT_TRUE((*opened)->PutFile(ns, "/memories/a.md", "before\n").has_value());
    ASSERT_TRUE((*opened)->PutFile(ns, "/memories/gone.md", "SECRET-V5\n").has_value());
    ASSERT_TRUE((*opened)->DeleteKey(ns, "/memories/gone.md").ok());
    old_id = (*(*opened)->History(ns, "/memories/a.md"))[0].grain_id;
  }
  ASSERT_TRUE(
      test::PlainExec(path_, "ALTER TABLE grains DROP COLUMN salt; PRAGMA user_version = 5"));
  ASSERT_EQ(RawInt("PRAGMA user_version"), 5);
  {
    auto opened = Store::Open(path_);
    ASSERT_TRUE(opened.has_value()) << opened.error().ToString();
    Store& store = **opened;
    NsId ns = *store.Namespace("default");
    EXPECT_EQ(*store.ReadFile(ns, "/memories/a.md"), "before\n");
    ASSERT_TRUE(store.PutFile(ns, "/memories/a.md", "after\n").has_value());
    auto hist = store.History(ns, "/memories/a.md");
    ASSERT_TRUE(hist.has_value());
    ASSERT_EQ(hist->size(), 2u);
    EXPECT_EQ((*hist)[0].grain_id, old_id);  // an old id is never recomputed
    EXPECT_EQ((*hist)[1].supersedes, old_id);
    EXPECT_EQ(*store.ReadVersion(ns, "/memories/a.md", "1"), "before\n");
    EXPECT_EQ(*store.ReadVersion(ns, "/memories/gone.md", "1"), "SECRET-V5\n");
    ASSERT_TRUE(store.Purge(ns, "/memories/gone.md").ok());  // an unsalted grain purges too
  }
  EXPECT_EQ(RawInt("PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(RawInt("SELECT count(*) FROM grains WHERE salt IS NULL"), 2);
  EXPECT_EQ(RawInt("SELECT length(salt) FROM grains WHERE subject = '/memories/a.md' AND seq = 2"),
            16);
  EXPECT_EQ(RefMismatches(), 0);
  EXPECT_EQ(test::FileBytes(path_).find("SECRET-V5"), std::string::npos);
}

// Writes a store with a body, an appended (delta) version and a deleted
// file, then runs `sql` on the raw file to set its layout back.
void WriteStoreThenRewind(const std::string& path, const char* sql) {
  {
    auto opened = Store::Open(path);
    ASSERT_TRUE(opened.has_value()) << opened.error().ToString();
    NsId ns = *(*opened)->Namespace("default");
    ASSERT_TRUE((*opened)->PutFile(ns, "/memories/a.md", "first line\n").has_value());
    ASSERT_TRUE((*opened)->PutFile(ns, "/memories/a.md", "first line\nappended\n").has_value());
    ASSERT_TRUE((*opened)->PutFile(ns, "/memories/gone.md", "deleted\n").has_value());
    ASSERT_TRUE((*opened)->DeleteKey(ns, "/memories/gone.md").ok());
  }
  ASSERT_TRUE(test::PlainExec(path, sql));
}

// Reads and writes every kind of body of WriteStoreThenRewind's store.
void ExpectBodiesReadAndWrite(const std::string& path) {
  auto opened = Store::Open(path);
  ASSERT_TRUE(opened.has_value()) << opened.error().ToString();
  Store& store = **opened;
  NsId ns = *store.Namespace("default");
  const auto expect_body = [](const Result<std::string>& got, const std::string& want) {
    ASSERT_TRUE(got.has_value()) << got.error().ToString();
    EXPECT_EQ(*got, want);
  };
  expect_body(store.ReadFile(ns, "/memories/a.md"), "first line\nappended\n");
  expect_body(store.ReadVersion(ns, "/memories/a.md", "1"), "first line\n");
  expect_body(store.ReadVersion(ns, "/memories/gone.md", "1"), "deleted\n");
  auto put = store.PutFile(ns, "/memories/a.md", "first line\nappended\nagain\n");
  ASSERT_TRUE(put.has_value()) << put.error().ToString();
  expect_body(store.ReadFile(ns, "/memories/a.md"), "first line\nappended\nagain\n");
  Status purged = store.Purge(ns, "/memories/gone.md");
  EXPECT_TRUE(purged.ok()) << purged.ToString();
}

// Issue: a store of v4's first builds (bodies.data, stamped 4) was migrated
// to the current version with the old column name kept, after which every
// read or write of a body failed ("no such column: b.bytes").
TEST_F(SchemaTest, MigratesAStoreOfTheFirstVersion4Builds) {
  WriteStoreThenRewind(path_,
                       "ALTER TABLE grains DROP COLUMN salt; "
                       "ALTER TABLE bodies RENAME COLUMN bytes TO data; "
                       "PRAGMA user_version = 4");
  ASSERT_EQ(RawInt("SELECT count(*) FROM pragma_table_info('bodies') WHERE name = 'data'"), 1);
  ExpectBodiesReadAndWrite(path_);
  EXPECT_EQ(RawInt("PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(RawInt("SELECT count(*) FROM pragma_table_info('bodies') WHERE name = 'bytes'"), 1);
  EXPECT_EQ(RefMismatches(), 0);
}

// A store such a migration already stamped current, with the old name kept,
// gets the new name at its next open.
TEST_F(SchemaTest, ACurrentStoreWithTheOldBodiesColumnIsRepaired) {
  WriteStoreThenRewind(path_, "ALTER TABLE bodies RENAME COLUMN bytes TO data");
  ASSERT_EQ(RawInt("PRAGMA user_version"), kSchemaVersion);
  ExpectBodiesReadAndWrite(path_);
  EXPECT_EQ(RawInt("SELECT count(*) FROM pragma_table_info('bodies') WHERE name = 'bytes'"), 1);
  EXPECT_EQ(RefMismatches(), 0);
}

// A reader that may not write cannot repair that name, and says so at its
// open rather than failing each body read with "no such column".
TEST_F(SchemaTest, AReaderThatMayNotWriteSaysTheOldBodiesColumnNeedsARepair) {
  WriteStoreThenRewind(path_, "ALTER TABLE bodies RENAME COLUMN bytes TO data");
  Db db;
  ASSERT_TRUE(db.OpenSnapshot(path_, "because of the test").ok());
  Status refused = Migrate(&db);
  EXPECT_EQ(refused.code(), StatusCode::kReadOnly);
  EXPECT_EQ(refused.message(),
            "the store needs a repair (a column named by the first version 4 builds) before "
            "it can be read, which any open with write access makes: the store cannot be "
            "written: because of the test");
  db.Close();
  EXPECT_EQ(RawInt("SELECT count(*) FROM pragma_table_info('bodies') WHERE name = 'data'"), 1);
  ExpectBodiesReadAndWrite(path_);  // a writer's open then repairs it
}

TEST_F(SchemaTest, AnOlderBuildsBodyReadFailsAfterTheMigration) {
  // A process of an older build that had the file open keeps its prepared
  // statements; after v4 they must fail rather than read a delta's bytes as
  // a whole body.
  std::filesystem::copy_file(GRAINSTORE_TESTDATA "/store-v1.db", path_);
  sqlite3* old = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &old), SQLITE_OK);
  sqlite3_stmt* read = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(old, "SELECT data FROM bodies LIMIT 1", -1, &read, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(read), SQLITE_ROW);
  sqlite3_reset(read);
  {
    auto opened = Store::Open(path_);
    ASSERT_TRUE(opened.has_value()) << opened.error().ToString();
  }
  EXPECT_EQ(sqlite3_step(read), SQLITE_ERROR);
  EXPECT_NE(std::string(sqlite3_errmsg(old)).find("data"), std::string::npos)
      << sqlite3_errmsg(old);
  sqlite3_finalize(read);
  sqlite3_close(old);
}

TEST_F(SchemaTest, AFileIsReadByKeyWithoutItsNodeRow) {
  { ASSERT_TRUE(Store::Open(path_).has_value()); }
  // The plan SQLite picks for ReadFile's query: the key index answers for
  // the node (COVERING), then the body is found by its id.
  const std::string plan = QueryPlan(kKindAndBodyByKeySql);
  EXPECT_NE(plan.find("SEARCH n USING COVERING INDEX nodes_by_key (ns_id=? AND key=?)"),
            std::string::npos)
      << plan;
  EXPECT_NE(plan.find("SEARCH b USING INTEGER PRIMARY KEY (rowid=?)"), std::string::npos) << plan;
}

TEST_F(SchemaTest, MigratesAVersion6StoreToSizedKeyEntries) {
  // A v6 store: written by this build, then its key index set back to v6's
  // columns and its stamp to 6, as a v6 build leaves the file.
  {
    auto opened = Store::Open(path_);
    ASSERT_TRUE(opened.has_value()) << opened.error().ToString();
    NsId ns = *(*opened)->Namespace("default");
    ASSERT_TRUE((*opened)->PutFile(ns, "/memories/d/a.md", "12345\n").has_value());
  }
  ASSERT_TRUE(test::PlainExec(path_,
                              "DROP INDEX nodes_by_key; "
                              "CREATE INDEX nodes_by_key ON nodes(ns_id, key, kind, body_id); "
                              "PRAGMA user_version = 6"));
  {
    auto opened = Store::Open(path_);
    ASSERT_TRUE(opened.has_value()) << opened.error().ToString();
    NsId ns = *(*opened)->Namespace("default");
    auto tree = (*opened)->ListTree(ns, "/memories", 2, [](std::string_view, NodeKind) { return true; });
    ASSERT_TRUE(tree.has_value()) << tree.error().ToString();
    ASSERT_EQ(tree->size(), 2u);
    EXPECT_EQ((*tree)[1].path, "d/a.md");
    EXPECT_EQ((*tree)[1].size, 6u);
  }
  EXPECT_EQ(RawInt("PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(test::PlainText(path_, "SELECT group_concat(name, ',') FROM "
                                   "(SELECT name FROM pragma_index_info('nodes_by_key') ORDER BY seqno)"),
            "ns_id,key,kind,body_id,size");
}

TEST_F(SchemaTest, MigratingAVersion8StoreGivesPurgedFilesTheirDeletionTimesBack) {
  // A v8 build wrote the purge's time over the chain's deletion time: the
  // store is made so by this build, its index of purges dropped, as a v8
  // build leaves the file.
  std::int64_t deleted_ns = 0, purged_ns = 0;
  {
    auto opened = Store::Open(path_);
    ASSERT_TRUE(opened.has_value()) << opened.error().ToString();
    Store& store = **opened;
    NsId ns = *store.Namespace("default");
    ASSERT_TRUE(store.PutFile(ns, "/memories/a.md", "one\n").has_value());
    ASSERT_TRUE(store.DeleteKey(ns, "/memories/a.md").ok());
    ASSERT_TRUE(store.Purge(ns, "/memories/a.md").ok());
    auto chains = store.ChainsAt(ns, "/memories/a.md");
    ASSERT_TRUE(chains.has_value() && chains->size() == 1u);
    deleted_ns = (*chains)[0].deleted_ns;
    purged_ns = (*chains)[0].purged_ns;
    ASSERT_LT(deleted_ns, purged_ns);
  }
  ASSERT_EQ(RawInt("SELECT count(*) FROM oplog WHERE op = 'delete'"), 1);
  ASSERT_TRUE(test::PlainExec(
      path_, fmt::format("DROP INDEX oplog_purges; UPDATE chains SET deleted_ns = {} "
                         "WHERE state = 3; PRAGMA user_version = 8",
                         purged_ns)));
  {
    auto opened = Store::Open(path_);
    ASSERT_TRUE(opened.has_value()) << opened.error().ToString();
    auto chains = (*opened)->ChainsAt(*(*opened)->Namespace("default"), "/memories/a.md");
    ASSERT_TRUE(chains.has_value() && chains->size() == 1u);
    EXPECT_EQ((*chains)[0].state, ChainState::kPurged);
    EXPECT_EQ((*chains)[0].deleted_ns, deleted_ns);
    EXPECT_EQ((*chains)[0].purged_ns, purged_ns);
  }
  EXPECT_EQ(RawInt("PRAGMA user_version"), kSchemaVersion);
  // The purge's time is found through the index that holds purges alone.
  EXPECT_EQ(RawInt("SELECT count(*) FROM pragma_index_list('oplog') WHERE name = 'oplog_purges' "
                   "AND partial = 1"),
            1);
}

TEST_F(SchemaTest, ASubtreeIsListedFromTheKeyIndexAlone) {
  { ASSERT_TRUE(Store::Open(path_).has_value()); }
  const std::string plan = QueryPlan(kTreeSql);
  EXPECT_NE(plan.find("SEARCH nodes USING COVERING INDEX nodes_by_key (ns_id=? AND key>? AND key<?)"),
            std::string::npos)
      << plan;
  EXPECT_EQ(plan.find("TEMP B-TREE"), std::string::npos) << plan;  // key order is the index's
}

TEST_F(SchemaTest, BodyReferencesFollowEveryOperation) {
  auto opened = Store::Open(path_);
  ASSERT_TRUE(opened.has_value()) << opened.error().ToString();
  Store& store = **opened;
  NsId ns = *store.Namespace("default");
  auto ok = [](const auto& r) { return r.has_value(); };
  // Key level: versions, identical bodies in two files, rename, delete,
  // restore, purge.
  ASSERT_TRUE(ok(store.PutFile(ns, "/memories/a.md", "one\n")));
  ASSERT_TRUE(ok(store.PutFile(ns, "/memories/a.md", "two\n")));
  ASSERT_TRUE(ok(store.PutFile(ns, "/memories/b.md", "two\n")));
  ASSERT_TRUE(store.RenameKey(ns, "/memories/b.md", "/memories/d/b.md").ok());
  ASSERT_TRUE(store.DeleteKey(ns, "/memories/a.md").ok());
  ASSERT_TRUE(store.Restore(ns, "/memories/a.md").ok());
  ASSERT_TRUE(store.DeleteKey(ns, "/memories/d").ok());
  ASSERT_TRUE(store.Purge(ns, "/memories/d/b.md").ok());
  EXPECT_EQ(RefMismatches(), 0);

  // Node level, as the mount drives it: an unversioned temp file renamed
  // over a versioned one (sed -i), a versioned file moved to a backup name
  // and back (an editor's save dance), a young file discarded on unlink.
  NodeId root = *store.RootId(ns);
  NewNode file{.kind = NodeKind::kFile, .mode = 0644};
  NewNode temp = file;
  temp.versioning = Versioning::kUnversioned;
  auto target = store.CreateNode(root, "t.md", file);
  ASSERT_TRUE(ok(target));
  ASSERT_TRUE(ok(store.WriteBody(target->id, "v1\n")));
  auto tmp = store.CreateNode(root, "sedXYZ", temp);
  ASSERT_TRUE(ok(tmp));
  ASSERT_TRUE(ok(store.WriteBody(tmp->id, "v2\n")));
  EXPECT_EQ(RefMismatches(), 0);
  ASSERT_TRUE(ok(store.RenameNode(root, "sedXYZ", root, "t.md", RenameMode::kReplace,
                                  Versioning::kVersioned)));
  EXPECT_EQ(RefMismatches(), 0);
  EXPECT_EQ(store.History(ns, "/memories/t.md")->size(), 2u);
  ASSERT_TRUE(ok(store.RenameNode(root, "t.md", root, "t.md~", RenameMode::kReplace,
                                  Versioning::kUnversioned)));
  EXPECT_EQ(RefMismatches(), 0);
  ASSERT_TRUE(ok(store.RenameNode(root, "t.md~", root, "t.md", RenameMode::kReplace,
                                  Versioning::kVersioned)));
  EXPECT_EQ(RefMismatches(), 0);
  auto young = store.CreateNode(root, "young.md", file);
  ASSERT_TRUE(ok(young));
  ASSERT_TRUE(ok(store.WriteBody(young->id, "v2\n")));  // shares t.md's body
  ASSERT_TRUE(store.RemoveNode(root, "young.md", false).ok());
  auto versioned_tmp = store.CreateNode(root, "x.md", file);
  ASSERT_TRUE(ok(versioned_tmp));
  ASSERT_TRUE(ok(store.WriteBody(versioned_tmp->id, "only\n")));
  // A young versioned file renamed over another: its own chain is discarded,
  // its body must survive into the target's chain.
  ASSERT_TRUE(ok(store.RenameNode(root, "x.md", root, "t.md", RenameMode::kReplace,
                                  Versioning::kVersioned)));
  EXPECT_EQ(*store.ReadFile(ns, "/memories/t.md"), "only\n");
  EXPECT_EQ(RefMismatches(), 0);
  // rsync's copy renamed to its new name: its chain goes, the body is sealed
  // anew at the new name.
  auto copy = store.CreateNode(root, ".r.md.Ab12Cd", file);
  ASSERT_TRUE(ok(copy));
  ASSERT_TRUE(ok(store.WriteBody(copy->id, "rsync\n")));
  ASSERT_TRUE(ok(store.RenameNode(root, ".r.md.Ab12Cd", root, "r.md", RenameMode::kReplace,
                                  Versioning::kVersioned, RenameHint::kTempCopy)));
  EXPECT_EQ(RefMismatches(), 0);
  ASSERT_TRUE(store.RemoveNode(root, "r.md", false, Vacate::kDelete).ok());
  ASSERT_TRUE(store.Purge(ns, "/memories/r.md").ok());
  ASSERT_TRUE(store.RemoveNode(root, "t.md", false, Vacate::kDelete).ok());
  ASSERT_TRUE(store.Purge(ns, "/memories/t.md").ok());
  EXPECT_EQ(RefMismatches(), 0);
  // Nothing but a.md's two versions is left.
  EXPECT_EQ(RawInt("SELECT count(*) FROM bodies"), 2);
}

}  // namespace
}  // namespace grainstore
