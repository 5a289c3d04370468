// Connection setup (the only place PRAGMAs are issued) and schema migrations.
// See docs/storage-format.md.
#ifndef GRAINSTORE_SCHEMA_H_
#define GRAINSTORE_SCHEMA_H_

#include "db.h"
#include "grainstore/options.h"

namespace grainstore {

inline constexpr int kSchemaVersion = 5;
// PRAGMA application_id: "arev".
inline constexpr int kApplicationId = 0x61726576;

// WAL, synchronous per durability, busy timeout, secure_delete, caches.
Status ConfigureConnection(Db* db, const Options& options);

// Creates or upgrades the schema to kSchemaVersion. Corruption if the file is
// not an areev store or was written by a newer version.
Status Migrate(Db* db);

// Truncates the WAL after a checkpoint (used after purges).
Status CheckpointTruncate(Db* db);

// Forces everything committed so far to disk.
Status SyncToDisk(Db* db);

// PRAGMA data_version of this connection.
Result<std::int64_t> DataVersion(Db* db);

}  // namespace grainstore

#endif  // GRAINSTORE_SCHEMA_H_
