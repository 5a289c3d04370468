// Purge: what it leaves of a deleted file. Grain ids are salted (schema v6)
// and purge erases the salt with the body, so the id no longer confirms a
// guess of what was erased.
#include <sqlite3.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "grain_id.h"
#include "grainstore/store.h"
#include "store_fixture.h"
#include "test_util.h"

namespace grainstore {
namespace {

// A grain's row as anyone holding the file reads it.
struct GrainRow {
  bool found = false;
  std::int64_t type = 0;
  std::string subject, relation, object, supersedes, derived_from, grain_id, salt;
  bool salt_null = true;
  std::int64_t seq = 0, created_ns = 0;
};

class PurgeTest : public test::StoreFixture {
 protected:
  // The first version of the file at `key`.
  GrainRow FirstGrain(const std::string& key) {
    GrainRow row;
    auto blob = [](sqlite3_stmt* st, int col) {
      const void* p = sqlite3_column_blob(st, col);
      return std::string(static_cast<const char*>(p), p ? sqlite3_column_bytes(st, col) : 0);
    };
    auto text = [](sqlite3_stmt* st, int col) {
      const unsigned char* t = sqlite3_column_text(st, col);
      return t ? std::string(reinterpret_cast<const char*>(t)) : std::string();
    };
    test::PlainQuery(path_,
                     "SELECT type, subject, relation, object, supersedes, derived_from, seq, "
                     "created_ns, grain_id, salt FROM grains WHERE subject = '" + key +
                         "' ORDER BY seq LIMIT 1",
                     [&](sqlite3_stmt* st) {
                       row.found = true;
                       row.type = sqlite3_column_int64(st, 0);
                       row.subject = text(st, 1);
                       row.relation = text(st, 2);
                       row.object = text(st, 3);
                       row.supersedes = blob(st, 4);
                       row.derived_from = blob(st, 5);
                       row.seq = sqlite3_column_int64(st, 6);
                       row.created_ns = sqlite3_column_int64(st, 7);
                       row.grain_id = blob(st, 8);
                       row.salt_null = sqlite3_column_type(st, 9) == SQLITE_NULL;
                       row.salt = blob(st, 9);
                     });
    return row;
  }

  // Writes `secret` to `key` and deletes it, with the Store reopened to wait
  // 200 ms for locks; then, with everything checkpointed into the database
  // file, opens a reader that holds a snapshot (close it with Release).
  sqlite3* DeletedUnderAHeldSnapshot(const std::string& key, const char* secret) {
    store_.reset();
    Options options;
    options.busy_timeout_ms = 200;
    auto reopened = Store::Open(path_, options);
    EXPECT_TRUE(reopened.has_value()) << reopened.error().ToString();
    if (!reopened.has_value()) return nullptr;
    store_ = std::move(*reopened);
    EXPECT_TRUE(store_->PutFile(ns_, key, std::string(secret) + "\n").has_value());
    EXPECT_TRUE(store_->DeleteKey(ns_, key).ok());
    sqlite3* reader = nullptr;
    EXPECT_EQ(sqlite3_open(path_.c_str(), &reader), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(reader, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr),
              SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(reader, "BEGIN; SELECT count(*) FROM grains", nullptr, nullptr,
                           nullptr),
              SQLITE_OK);
    return reader;
  }
  static void Release(sqlite3* reader) {
    EXPECT_EQ(sqlite3_exec(reader, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(reader);
  }
  // Neither the database file nor its WAL holds `secret`.
  void ExpectErased(const char* secret) {
    for (const char* suffix : {"", "-wal"}) {
      const std::string raw = test::FileBytes(path_ + suffix);
      EXPECT_EQ(raw.find(secret), std::string::npos) << "plaintext left in " << suffix;
    }
  }

  // The id the row would have with `body_hash` as its body's hash.
  static GrainFields Fields(const GrainRow& row, const std::string& body_hash) {
    return GrainFields{.type = static_cast<GrainType>(row.type), .ns = "default",
                       .subject = row.subject, .relation = row.relation, .object = row.object,
                       .body_hash = body_hash, .supersedes = row.supersedes,
                       .derived_from = row.derived_from,
                       .chain_seq = static_cast<std::uint64_t>(row.seq),
                       .created_ns = row.created_ns, .salt = row.salt};
  }

  // How many of the 10,000 bodies "PIN: 0000\n" .. "PIN: 9999\n" give the
  // row's id (with the row's salt, or none).
  static int PinsMatching(const GrainRow& row) {
    int matches = 0;
    for (int pin = 0; pin < 10000; ++pin) {
      char body[16];
      std::snprintf(body, sizeof body, "PIN: %04d\n", pin);
      if (ComputeGrainId(Fields(row, HashBody(body))) == row.grain_id) ++matches;
    }
    return matches;
  }
};

TEST_F(PurgeTest, PurgeLeavesNoIdThatConfirmsAGuessedBody) {
  const std::string kKey = "/memories/pin.md";
  const std::string kBody = "PIN: 4821\n";
  ASSERT_TRUE(store_->PutFile(ns_, kKey, kBody).has_value());
  const GrainRow before = FirstGrain(kKey);
  ASSERT_TRUE(before.found);
  ASSERT_FALSE(before.salt_null);
  ASSERT_EQ(before.salt.size(), kGrainSaltBytes);
  // The recipe: the row's fields, the body's hash and the salt give the id.
  EXPECT_EQ(ComputeGrainId(Fields(before, HashBody(kBody))), before.grain_id);
  EXPECT_EQ(PinsMatching(before), 1);  // so the salt must not outlive the body

  ASSERT_TRUE(store_->DeleteKey(ns_, kKey).ok());
  ASSERT_TRUE(store_->Purge(ns_, kKey).ok());
  const GrainRow after = FirstGrain(kKey);
  ASSERT_TRUE(after.found);
  EXPECT_EQ(after.grain_id, before.grain_id);  // ids stay, for audit
  EXPECT_TRUE(after.salt_null);
  // What the file still holds confirms no guess, the right one included:
  // without the salt, the v1 recipe is all that is left to try.
  EXPECT_NE(ComputeGrainId(Fields(after, HashBody(kBody))), after.grain_id);
  EXPECT_EQ(PinsMatching(after), 0);

  // Nor is the salt left in the files' free space or an old page image.
  store_.reset();
  for (const char* suffix : {"", "-wal"}) {
    const std::string raw = test::FileBytes(path_ + suffix);
    EXPECT_EQ(raw.find(before.salt), std::string::npos) << "salt left in " << suffix;
  }
}

// Each grain draws its own salt, so two grains whose other fields are all
// equal still get different ids.
TEST_F(PurgeTest, GrainsWithIdenticalFieldsGetDifferentIds) {
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/a.md", "same\n").has_value());
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/b.md", "same\n").has_value());
  const GrainRow a = FirstGrain("/memories/a.md");
  const GrainRow b = FirstGrain("/memories/b.md");
  ASSERT_EQ(a.salt.size(), kGrainSaltBytes);
  ASSERT_EQ(b.salt.size(), kGrainSaltBytes);
  EXPECT_NE(a.salt, b.salt);
  const std::string body_hash = HashBody("same\n");
  GrainFields fields = Fields(a, body_hash);
  EXPECT_EQ(ComputeGrainId(fields), a.grain_id);
  fields.salt = b.salt;
  EXPECT_NE(ComputeGrainId(fields), a.grain_id);
}

// A reader on an older snapshot keeps purge's checkpoint from copying the
// zeroed pages over the old ones in the database file, so the plaintext stays
// there, not only in the WAL. Purge says so, and erases it when run again
// once the reader is done.
TEST_F(PurgeTest, AReaderOnAnOlderSnapshotLeavesOldPagesUntilPurgeRunsAgain) {
  const std::string kKey = "/memories/s.md";
  sqlite3* reader = DeletedUnderAHeldSnapshot(kKey, "SECRET-PINNED-7");
  ASSERT_NE(reader, nullptr);

  const Status busy = store_->Purge(ns_, kKey);
  EXPECT_EQ(busy.code(), StatusCode::kBusy);
  EXPECT_EQ(busy.message(),
            "/memories/s.md is purged, but another process kept the WAL from being truncated, "
            "so old pages of it may remain in the store's files (the database or its WAL): "
            "run purge again once readers finish");
  EXPECT_NE(test::FileBytes(path_).find("SECRET-PINNED-7"), std::string::npos);
  EXPECT_EQ(store_->ReadVersion(ns_, kKey, "1").error().code(), StatusCode::kNotFound);

  Release(reader);
  EXPECT_TRUE(store_->Purge(ns_, kKey).ok());
  ExpectErased("SECRET-PINNED-7");
}

// The retry purge's Busy asks for may find a new file written at the path
// meanwhile. The purged chains are still there to finish: the retry
// truncates the WAL as it would with no file there, and does not refuse it
// as a purge of the live file.
TEST_F(PurgeTest, RetryFinishesTheTruncationWhenANewFileIsLiveAtThePath) {
  const std::string kKey = "/memories/s.md";
  sqlite3* reader = DeletedUnderAHeldSnapshot(kKey, "SECRET-PINNED-8");
  ASSERT_NE(reader, nullptr);
  ASSERT_EQ(store_->Purge(ns_, kKey).code(), StatusCode::kBusy);
  Release(reader);

  ASSERT_TRUE(store_->PutFile(ns_, kKey, "new\n").has_value());
  const Status retried = store_->Purge(ns_, kKey);
  EXPECT_TRUE(retried.ok()) << retried.ToString();
  EXPECT_EQ(*store_->ReadFile(ns_, kKey), "new\n");  // the new file is left alone
  ExpectErased("SECRET-PINNED-8");
}

// Only a live file at the path, nothing deleted or purged there: a conflict,
// as it has always been.
TEST_F(PurgeTest, ALiveFileWithNothingDeletedAtItsPathIsAConflict) {
  const std::string kKey = "/memories/live.md";
  ASSERT_TRUE(store_->PutFile(ns_, kKey, "keep\n").has_value());
  const Status purged = store_->Purge(ns_, kKey);
  EXPECT_EQ(purged.code(), StatusCode::kConflict);
  EXPECT_EQ(purged.message(), "/memories/live.md is live; delete it before purging");
}

}  // namespace
}  // namespace grainstore
