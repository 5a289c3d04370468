#include "schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <functional>
#include <thread>

namespace grainstore {
namespace {

// Schema v1, the first layout; a new store is created as v1 and then
// migrated, so every store takes the same path to the current version.
// Bodies live apart from grain metadata, deduplicated by content hash and
// reference-counted (a counter instead of two indexes keeps each write to
// few B-tree pages); key_id leaves room for per-chain encryption keys; the
// op-log (never deleted from, so its rowid only grows) is read from a cursor
// (seq); nodes carry stable ids used as inode numbers.
constexpr char kSchemaV1[] = R"sql(
CREATE TABLE namespaces(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  root_id INTEGER NOT NULL DEFAULT 0,
  created_ns INTEGER NOT NULL
) STRICT;
CREATE TABLE bodies(
  id INTEGER PRIMARY KEY,
  hash BLOB NOT NULL UNIQUE,
  size INTEGER NOT NULL,
  refs INTEGER NOT NULL DEFAULT 0,
  data BLOB NOT NULL,
  key_id INTEGER
) STRICT;
CREATE TABLE chains(
  id INTEGER PRIMARY KEY,
  ns_id INTEGER NOT NULL,
  relation TEXT NOT NULL,
  subject TEXT NOT NULL,
  state INTEGER NOT NULL,
  head_grain INTEGER NOT NULL DEFAULT 0,
  head_seq INTEGER NOT NULL DEFAULT 0,
  created_ns INTEGER NOT NULL,
  deleted_ns INTEGER NOT NULL DEFAULT 0,
  revivable INTEGER NOT NULL DEFAULT 0,
  key_id INTEGER
) STRICT;
CREATE UNIQUE INDEX chains_live ON chains(ns_id, relation, subject) WHERE state = 1;
CREATE INDEX chains_by_subject ON chains(ns_id, subject, relation, deleted_ns);
CREATE TABLE grains(
  id INTEGER PRIMARY KEY,
  grain_id BLOB NOT NULL UNIQUE,
  ns_id INTEGER NOT NULL,
  type INTEGER NOT NULL,
  chain_id INTEGER NOT NULL DEFAULT 0,
  seq INTEGER NOT NULL DEFAULT 0,
  subject TEXT NOT NULL,
  relation TEXT NOT NULL,
  object TEXT NOT NULL DEFAULT '',
  body_id INTEGER,
  size INTEGER NOT NULL DEFAULT 0,
  supersedes BLOB,
  derived_from BLOB,
  op TEXT NOT NULL,
  created_ns INTEGER NOT NULL,
  flags INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX grains_by_chain ON grains(chain_id, seq);
CREATE INDEX grains_by_subject ON grains(ns_id, subject, relation, created_ns)
  WHERE relation != 'memory_file';
CREATE TABLE nodes(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  ns_id INTEGER NOT NULL,
  parent_id INTEGER,
  name TEXT NOT NULL,
  key TEXT NOT NULL,
  kind INTEGER NOT NULL,
  mode INTEGER NOT NULL,
  uid INTEGER NOT NULL,
  gid INTEGER NOT NULL,
  size INTEGER NOT NULL,
  atime_ns INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  ctime_ns INTEGER NOT NULL,
  body_id INTEGER,
  chain_id INTEGER NOT NULL DEFAULT 0,
  versioning INTEGER NOT NULL DEFAULT 0,
  symlink TEXT
) STRICT;
CREATE UNIQUE INDEX nodes_by_parent ON nodes(parent_id, name);
CREATE UNIQUE INDEX nodes_by_key ON nodes(ns_id, key);
CREATE TABLE oplog(
  seq INTEGER PRIMARY KEY,
  ns_id INTEGER NOT NULL,
  at_ns INTEGER NOT NULL,
  op TEXT NOT NULL,
  subject TEXT NOT NULL,
  new_subject TEXT NOT NULL DEFAULT '',
  node_id INTEGER NOT NULL DEFAULT 0,
  chain_id INTEGER NOT NULL DEFAULT 0,
  grain_id BLOB,
  origin INTEGER NOT NULL
) STRICT;
)sql";

// v1 -> v2: fewer B-tree pages per edit (see docs/storage-format.md).
//  - grains.grain_id loses its UNIQUE index: ids are content hashes that
//    include the chain position, nothing looks grains up by id alone, and
//    the index cost one random page per version.
//  - chains lose head_grain/head_seq: the head is the chain's last grain in
//    grains_by_chain, so an edit no longer rewrites the chain row.
//  - bodies.refs counts grains, plus nodes without a chain (unversioned
//    files); a versioned file's node reaches its body through its head
//    grain, so an edit no longer touches the previous body's row.
//  - chains keep one index, by subject then state: it answers the live, the
//    latest and the revivable chain at a path; one live chain per subject is
//    kept by the write transactions that create chains (they look first).
constexpr char kMigrateV1ToV2[] = R"sql(
CREATE TABLE grains_v2(
  id INTEGER PRIMARY KEY,
  grain_id BLOB NOT NULL,
  ns_id INTEGER NOT NULL,
  type INTEGER NOT NULL,
  chain_id INTEGER NOT NULL DEFAULT 0,
  seq INTEGER NOT NULL DEFAULT 0,
  subject TEXT NOT NULL,
  relation TEXT NOT NULL,
  object TEXT NOT NULL DEFAULT '',
  body_id INTEGER,
  size INTEGER NOT NULL DEFAULT 0,
  supersedes BLOB,
  derived_from BLOB,
  op TEXT NOT NULL,
  created_ns INTEGER NOT NULL,
  flags INTEGER NOT NULL DEFAULT 0
) STRICT;
INSERT INTO grains_v2(id, grain_id, ns_id, type, chain_id, seq, subject, relation, object,
                      body_id, size, supersedes, derived_from, op, created_ns, flags)
  SELECT id, grain_id, ns_id, type, chain_id, seq, subject, relation, object, body_id, size,
         supersedes, derived_from, op, created_ns, flags FROM grains;
DROP TABLE grains;
ALTER TABLE grains_v2 RENAME TO grains;
CREATE INDEX grains_by_chain ON grains(chain_id, seq);
CREATE INDEX grains_by_subject ON grains(ns_id, subject, relation, created_ns)
  WHERE relation != 'memory_file';
ALTER TABLE chains DROP COLUMN head_grain;
ALTER TABLE chains DROP COLUMN head_seq;
DROP INDEX chains_live;
DROP INDEX chains_by_subject;
CREATE INDEX chains_by_subject ON chains(ns_id, subject, relation, state, deleted_ns);
UPDATE bodies SET refs = 0;
UPDATE bodies SET refs = refs + c.n
  FROM (SELECT body_id, count(*) AS n FROM grains WHERE body_id IS NOT NULL GROUP BY body_id) AS c
  WHERE bodies.id = c.body_id;
UPDATE bodies SET refs = refs + c.n
  FROM (SELECT body_id, count(*) AS n FROM nodes WHERE body_id IS NOT NULL AND chain_id = 0
        GROUP BY body_id) AS c
  WHERE bodies.id = c.body_id;
DELETE FROM bodies WHERE refs <= 0;
)sql";

// v2 -> v3: a create no longer writes sqlite_sequence.
//  - nodes lose AUTOINCREMENT, which rewrote sqlite_sequence on every
//    insert. Node ids (the mount's inode numbers) are still never reused:
//    an insert takes one more than both the largest live id and
//    counters.node_floor, which a delete raises to the id it removes, so it
//    is written on deletes instead of on creates. It starts at the highest
//    id AUTOINCREMENT ever handed out.
//  - counters: named integers kept in the store.
constexpr char kMigrateV2ToV3[] = R"sql(
CREATE TABLE counters(
  name TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
INSERT INTO counters(name, value)
  VALUES('node_floor', coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'nodes'), 0));
CREATE TABLE nodes_v3(
  id INTEGER PRIMARY KEY,
  ns_id INTEGER NOT NULL,
  parent_id INTEGER,
  name TEXT NOT NULL,
  key TEXT NOT NULL,
  kind INTEGER NOT NULL,
  mode INTEGER NOT NULL,
  uid INTEGER NOT NULL,
  gid INTEGER NOT NULL,
  size INTEGER NOT NULL,
  atime_ns INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  ctime_ns INTEGER NOT NULL,
  body_id INTEGER,
  chain_id INTEGER NOT NULL DEFAULT 0,
  versioning INTEGER NOT NULL DEFAULT 0,
  symlink TEXT
) STRICT;
INSERT INTO nodes_v3(id, ns_id, parent_id, name, key, kind, mode, uid, gid, size, atime_ns,
                     mtime_ns, ctime_ns, body_id, chain_id, versioning, symlink)
  SELECT id, ns_id, parent_id, name, key, kind, mode, uid, gid, size, atime_ns, mtime_ns,
         ctime_ns, body_id, chain_id, versioning, symlink FROM nodes;
DROP TABLE nodes;
ALTER TABLE nodes_v3 RENAME TO nodes;
CREATE UNIQUE INDEX nodes_by_parent ON nodes(parent_id, name);
CREATE UNIQUE INDEX nodes_by_key ON nodes(ns_id, key);
)sql";

// v3 -> v4: delta bodies. A body may be stored as the bytes appended to
// another body (base_id), which holds a reference from it; hash and size
// stay those of the whole body. A file that grows by appends no longer
// stores a whole copy per version. `data` becomes `bytes`, so a process
// still running an older build against the migrated file fails its
// statements on bodies instead of taking a delta's bytes for a whole file.
constexpr char kMigrateV3ToV4[] = R"sql(
ALTER TABLE bodies ADD COLUMN base_id INTEGER;
ALTER TABLE bodies RENAME COLUMN data TO bytes;
)sql";

// v4 -> v5: nodes_by_key also holds each node's kind and body_id, so a read
// of a file by its key goes from the index entry straight to the body's row
// without visiting the node's own row: one B-tree descent fewer, and at
// 100,000 files one cold leaf fewer per first read. An edit rewrites the
// entry (body_id changes). The index is no longer UNIQUE; a key is its
// parent's key plus its name, so nodes_by_parent (parent_id, name) keeps keys
// unique. Older builds that have the file open keep working: none of their
// statements names the index, and SQLite re-plans them after the change.
constexpr char kMigrateV4ToV5[] = R"sql(
DROP INDEX nodes_by_key;
CREATE INDEX nodes_by_key ON nodes(ns_id, key, kind, body_id);
)sql";

// v5 -> v6: grains.salt, 16 random bytes each new grain's id is hashed with
// ("areev-grain-v2"), so that purge, which erases the salt with the body,
// leaves no id that confirms a guessed body. Grains written before keep a
// NULL salt and their v1 ids. An older build that has the file open keeps
// working (its inserts leave the salt NULL, as before); a v5 build refuses
// to open the migrated file.
constexpr char kMigrateV5ToV6[] = R"sql(
ALTER TABLE grains ADD COLUMN salt BLOB;
)sql";

// v6 -> v7: nodes_by_key also holds each node's size, so a listing of a
// subtree reads the index entries in key order and never a node's row
// (Store::ListTree): a 100-entry directory went from 100 row lookups to
// none. An edit already rewrote the entry (its body_id changes), so writes
// touch no more pages. Older builds that have the file open keep working
// (their INDEXED BY names an index that is there again once the migration
// commits, and SQLite re-prepares their statements); a v6 build refuses to
// open the migrated file. A v6 store opened by a reader that may not write
// is read as it is (kOldestReadableVersion).
constexpr char kMigrateV6ToV7[] = R"sql(
DROP INDEX nodes_by_key;
CREATE INDEX nodes_by_key ON nodes(ns_id, key, kind, body_id, size);
)sql";

// v7 -> v8: splice rows in bodies (docs/storage-format.md, "Delta bodies"):
// a body stored as the bytes an edit put between its base's first and last
// bytes, with base_id negated. No table changes, so the migration only
// stamps the version: a v7 build refuses to open the file, and one that
// already had it open finds no row at a negated base_id and reports such a
// body missing (Corruption) rather than read it as an append.

// v8 -> v9: facts and events about a subject, of any relation, read newest
// first a page at a time (Store::ForEachFact) through an index in that
// order; memory files, the bulk of the writes, have no entries in it. And a
// purge keeps the chain's deletion time (before v9 it wrote its
// own time over it, so history showed a purged file deleted when it was
// purged); the purge's time is the op-log's, found through a partial index
// that holds purges alone, so no other write touches it. Chains purged
// before get their deletion time back from the op-log's last delete or
// vacate of the chain (none there: the purge time stays).
constexpr char kMigrateV8ToV9[] = R"sql(
CREATE INDEX IF NOT EXISTS oplog_purges ON oplog(chain_id) WHERE op = 'purge';
CREATE INDEX IF NOT EXISTS grains_by_subject_time ON grains(ns_id, subject, created_ns)
  WHERE relation != 'memory_file';
UPDATE chains SET deleted_ns = d.at_ns
  FROM (SELECT chain_id, max(at_ns) AS at_ns FROM oplog
        WHERE op IN ('delete', 'vacate') AND chain_id != 0 GROUP BY chain_id) AS d
  WHERE chains.id = d.chain_id AND chains.state = 3 AND d.at_ns <= chains.deleted_ns;
)sql";

// The builds of v4's first day (2d35c34 to e05a51a) stamped a store 4 but
// kept the column bodies.data, which c1b9c98 renamed to bytes still as v4:
// later builds then failed every statement on bodies ("no such column"), and
// their migrations stamped the store 5, 6 or 7 with the old name kept. Such
// a store gets the new name at its next open by a writer.
constexpr char kOldBodiesColumn[] =
    "SELECT count(*) FROM pragma_table_info('bodies') WHERE name = 'data'";
constexpr char kRenameOldBodiesColumn[] = "ALTER TABLE bodies RENAME COLUMN data TO bytes";

// Whether a store stamped `version` still has bodies.data; before v4 every
// store has it, and the v3 -> v4 step renames it.
Result<bool> HasOldBodiesColumn(Db* db, std::int64_t version) {
  if (version < 4) return false;
  auto found = db->QueryInt(kOldBodiesColumn);
  if (!found.has_value()) return found.error();
  return *found != 0;
}

// Corruption unless a file with this application_id and user_version is
// ours and not newer.
Status CheckHeader(std::int64_t app, std::int64_t version) {
  // Every store is stamped with both in one transaction, so a version without
  // the stamp is another program's, not a store from a newer areev.
  if (app != kApplicationId && (app != 0 || version != 0)) {
    return Status::Corruption("the file is a SQLite database but not an areev store");
  }
  if (version > kSchemaVersion) {
    return Status::Corruption(fmt::format(
        "the store has schema version {}, newer than this build supports ({})", version,
        kSchemaVersion));
  }
  if (version < 0 || (app == kApplicationId && version == 0)) {
    return Status::Corruption(fmt::format(
        "the store's header says schema version {}, which no areev build writes (another "
        "program changed it)",
        version));
  }
  return Status::Ok();
}

// The file's schema version, after checking that it is ours and not newer.
Result<std::int64_t> CheckedVersion(Db* db) {
  auto app = db->QueryInt("PRAGMA application_id");
  if (!app.has_value()) return app.error();
  auto version = db->QueryInt("PRAGMA user_version");
  if (!version.has_value()) return version.error();
  GRAINSTORE_RETURN_IF_ERROR(CheckHeader(*app, *version));
  return *version;
}

}  // namespace

namespace {

// Runs `attempt` until it returns true or fails with something other than
// Busy, pausing 1, 2, 4 ... 20 ms between tries, for at most `timeout_ms`;
// then its last Busy error, or Busy with `why` when it returned false.
Status RetryWhileBusy(int timeout_ms, const char* why,
                      const std::function<Result<bool>()>& attempt) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    auto done = attempt();
    if (done.has_value() && *done) return Status::Ok();
    if (!done.has_value() && done.error().code() != StatusCode::kBusy) return done.error();
    if (std::chrono::steady_clock::now() + pause > deadline) {
      return done.has_value() ? Status::Busy(why) : done.error();
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
}

}  // namespace

Status ConfigureConnection(Db* db, const Options& options) {
  // Switching a new file to WAL takes its exclusive lock. Two processes
  // creating one store both hold a shared lock when they ask, and SQLite
  // answers one of them Busy at once rather than wait into a deadlock; that
  // one asks again once the other is done. A snapshot of a store this user
  // may not write takes no lock: its Busy says a writer changed the file
  // since it was opened, which no wait mends (Store::Open opens it again).
  // One taken for want of room still waits: there a creator may have opened
  // the file of another whose creation failed, and the wait lets that one
  // remove it first (Store::Open then makes the store again, or says the
  // disk is full).
  const bool reader = db->snapshot() && db->snapshot_errno() != ENOSPC;
  const int wait_ms = reader ? 0 : options.busy_timeout_ms;
  GRAINSTORE_RETURN_IF_ERROR(RetryWhileBusy(wait_ms, "", [&]() -> Result<bool> {
    auto mode = db->QueryInt("PRAGMA journal_mode = WAL");
    if (!mode.has_value()) return mode.error();
    return true;
  }));
  GRAINSTORE_RETURN_IF_ERROR(db->Exec(options.durability == Durability::kFull
                                          ? "PRAGMA synchronous = FULL"
                                          : "PRAGMA synchronous = NORMAL"));
  // Freed pages are zeroed, so purged bodies leave no plaintext behind.
  GRAINSTORE_RETURN_IF_ERROR(db->Exec("PRAGMA secure_delete = ON"));
  GRAINSTORE_RETURN_IF_ERROR(db->Exec("PRAGMA temp_store = MEMORY"));
  // Up to 256 MiB of pages, taken only as pages are read: a store of 100,000
  // files stays cached whole, so a first look at a file costs the same in a
  // large store as in a small one instead of a pread per B-tree level.
  GRAINSTORE_RETURN_IF_ERROR(db->Exec("PRAGMA cache_size = -262144"));
  // No wal_autocheckpoint: the Store's Checkpointer owns checkpoints.
  GRAINSTORE_RETURN_IF_ERROR(db->Exec("PRAGMA journal_size_limit = 67108864"));
  GRAINSTORE_RETURN_IF_ERROR(db->Exec("PRAGMA foreign_keys = OFF"));
  return Status::Ok();
}

Result<bool> HoldsStore(Db* db) {
  // One statement, so one snapshot: a creator committing the schema between
  // two reads would show tables without a version. Not a Transaction: its
  // WAL stamp would map (and so create) a -shm beside a database that is not
  // in WAL mode.
  static constexpr char kSql[] =
      "SELECT (SELECT application_id FROM pragma_application_id), "
      "(SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_schema)";
  auto st = db->Prepare(kSql);
  if (!st) return st.error();
  if (st->Step() != StepResult::kRow) return st->status();
  const std::int64_t version = st->ColumnInt64(1);
  const std::int64_t tables = st->ColumnInt64(2);
  GRAINSTORE_RETURN_IF_ERROR(CheckHeader(st->ColumnInt64(0), version));
  if (version != 0) return true;
  if (tables != 0) {
    return Status::Corruption("the file is a SQLite database but not an areev store");
  }
  return false;
}

Status Migrate(Db* db) {
  {
    // Nearly every open finds the schema current, which a read says without
    // the write lock: a read-only command need not wait for a writer.
    Transaction read(db);
    GRAINSTORE_RETURN_IF_ERROR(read.Begin(Transaction::Kind::kRead));
    auto version = CheckedVersion(db);
    if (!version.has_value()) return version.error();
    auto old_column = HasOldBodiesColumn(db, *version);
    if (!old_column.has_value()) return old_column.error();
    GRAINSTORE_RETURN_IF_ERROR(read.Commit());
    if (*version == kSchemaVersion && !*old_column) return Status::Ok();
    // A reader that may not write reads a store an index behind as it is,
    // until a writer migrates it; the old column name it cannot read.
    if (db->read_only() && *version >= kOldestReadableVersion && !*old_column) {
      return Status::Ok();
    }
  }
  Transaction txn(db);
  if (Status begun = txn.Begin(); !begun.ok()) {
    // A reader that may not write (a snapshot) of a store too old to read as
    // it is: the refusal alone ("cannot be written") would puzzle a command
    // that only reads, so it says what the write was for; code and reason
    // (read-only, or a full disk) stay the refusal's.
    if (!db->read_only()) return begun;
    auto version = CheckedVersion(db);
    if (!version.has_value() || *version == 0) return begun;
    std::string message =
        *version == kSchemaVersion
            ? fmt::format(
                  "the store needs a repair (a column named by the first version 4 builds) "
                  "before it can be read, which any open with write access makes: {}",
                  begun.message())
            : fmt::format(
                  "the store has schema version {} and needs an upgrade to version {} before "
                  "it can be read: {}",
                  *version, kSchemaVersion, begun.message());
    return std::move(begun).WithMessage(std::move(message));
  }
  auto version = CheckedVersion(db);  // again: another process may have migrated it
  if (!version.has_value()) return version.error();
  auto old_column = HasOldBodiesColumn(db, *version);
  if (!old_column.has_value()) return old_column.error();
  if (*old_column) GRAINSTORE_RETURN_IF_ERROR(db->Exec(kRenameOldBodiesColumn));
  if (*version == kSchemaVersion) return txn.Commit();
  auto tables = db->QueryInt("SELECT count(*) FROM sqlite_schema");
  if (!tables.has_value()) return tables.error();
  if (*version == 0 && *tables != 0) {
    return Status::Corruption("the file is a SQLite database but not an areev store");
  }
  if (*version == 0) GRAINSTORE_RETURN_IF_ERROR(db->Exec(kSchemaV1));
  // A step that fails leaves the file as it was (the transaction rolls back)
  // and says which migration it was: a header changed by another program
  // names a version whose tables the file does not have.
  const auto step = [&](std::int64_t from, const char* sql) -> Status {
    if (*version > from) return Status::Ok();
    Status ran = db->Exec(sql);
    if (ran.ok()) return ran;
    std::string message = fmt::format("migrating the store from schema version {} to {} failed "
                                      "(the file is left as it was): {}",
                                      *version, kSchemaVersion, ran.message());
    return std::move(ran).WithMessage(std::move(message));
  };
  GRAINSTORE_RETURN_IF_ERROR(step(1, kMigrateV1ToV2));
  GRAINSTORE_RETURN_IF_ERROR(step(2, kMigrateV2ToV3));
  GRAINSTORE_RETURN_IF_ERROR(step(3, kMigrateV3ToV4));
  GRAINSTORE_RETURN_IF_ERROR(step(4, kMigrateV4ToV5));
  GRAINSTORE_RETURN_IF_ERROR(step(5, kMigrateV5ToV6));
  GRAINSTORE_RETURN_IF_ERROR(step(6, kMigrateV6ToV7));
  // v7 -> v8 changes no table (above): the stamp below is the migration.
  GRAINSTORE_RETURN_IF_ERROR(step(8, kMigrateV8ToV9));
  std::string stamp = fmt::format("PRAGMA application_id = {}", kApplicationId);
  GRAINSTORE_RETURN_IF_ERROR(db->Exec(stamp.c_str()));
  std::string ver = fmt::format("PRAGMA user_version = {}", kSchemaVersion);
  GRAINSTORE_RETURN_IF_ERROR(db->Exec(ver.c_str()));
  return txn.Commit();
}

Status CheckpointTruncate(Db* db, int timeout_ms) {
  GRAINSTORE_RETURN_IF_ERROR(db->CheckSidecars());  // it would copy the wrong frames
  return RetryWhileBusy(timeout_ms, "another process kept the WAL from being truncated",
                        [&]() -> Result<bool> {
                          // The first column is 1 when the checkpoint could not finish.
                          auto r = db->QueryInt("PRAGMA wal_checkpoint(TRUNCATE)");
                          if (!r.has_value()) return r.error();
                          return *r == 0;
                        });
}

Status SyncToDisk(Db* db) {
  GRAINSTORE_RETURN_IF_ERROR(db->CheckSidecars());  // it would copy the wrong frames
  auto r = db->QueryInt("PRAGMA wal_checkpoint(FULL)");
  if (!r.has_value()) return r.error();
  return Status::Ok();
}

Result<std::int64_t> DataVersion(Db* db) {
  // Polled by the mount on every lookup and open: a cached statement.
  static constexpr char kSql[] = "PRAGMA data_version";
  auto st = db->Prepare(kSql);
  if (!st) return st.error();
  switch (st->Step()) {
    case StepResult::kRow: return st->ColumnInt64(0);
    case StepResult::kDone: return Status::Corruption("PRAGMA data_version returned no row");
    case StepResult::kError: break;
  }
  return st->status();
}

}  // namespace grainstore
