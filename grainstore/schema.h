// Connection setup (the connection's PRAGMAs, but for the busy timeout that
// Store::Open sets) and schema migrations, with the PRAGMAs they read and
// write (user_version, application_id, data_version, wal_checkpoint).
// See docs/storage-format.md.
#ifndef GRAINSTORE_SCHEMA_H_
#define GRAINSTORE_SCHEMA_H_

#include "db.h"
#include "grainstore/options.h"

namespace grainstore {

inline constexpr int kSchemaVersion = 9;
// The oldest schema this build reads as it is when it cannot migrate (a
// reader without write access): v6 differs from v7 in an index only, which
// the queries use when it is there and do without when it is not, v7 from
// v8 in the splice rows v8 builds may write, which v7 stores hold none of,
// and v8 from v9 in an index of purges and in the deletion times of chains
// purged before it (a v8 store shows their purge times instead).
inline constexpr int kOldestReadableVersion = 6;
// PRAGMA application_id: "arev".
inline constexpr int kApplicationId = 0x61726576;

// WAL, synchronous per durability, secure_delete, caches. The caller sets
// the busy timeout first (switching to WAL needs a lock another process may
// hold) and checks the file with HoldsStore.
Status ConfigureConnection(Db* db, const Options& options);

// Creates or upgrades the schema to kSchemaVersion. Corruption if the file is
// not an areev store or was written by a newer version. A read-only
// connection is left at kOldestReadableVersion or later as it is.
Status Migrate(Db* db);

// Whether the file already holds an areev store (of any schema version);
// false for an empty file or a SQLite database without tables, Corruption
// for another program's database or a newer schema. Writes nothing, so it
// runs before ConfigureConnection sets what the file keeps (journal_mode).
Result<bool> HoldsStore(Db* db);

// Checkpoints the whole WAL and truncates it to zero bytes (used after
// purges). SQLite answers busy at once while another connection runs a
// checkpoint, and a reader on an older snapshot holds the truncation back;
// both pass, so this retries until `timeout_ms` has passed, then answers Busy.
Status CheckpointTruncate(Db* db, int timeout_ms);

// Forces everything committed so far to disk.
Status SyncToDisk(Db* db);

// PRAGMA data_version of this connection.
Result<std::int64_t> DataVersion(Db* db);

}  // namespace grainstore

#endif  // GRAINSTORE_SCHEMA_H_
