// What a -wal file holds, read from its headers alone (SQLite's WAL format:
// a 32-byte header, then frames of a 24-byte header and one page). Used on a
// store no connection has open, to tell whether its -wal adds anything to the
// file: SQLite reads a frame only up to the last one that ends a transaction
// (a commit frame), and only frames of the header's generation (its salts).
#ifndef GRAINSTORE_WAL_COMMITS_H_
#define GRAINSTORE_WAL_COMMITS_H_

#include <string>

namespace grainstore {

enum class WalCommits {
  kNone,     // no -wal, or one no reader takes a page from
  kSome,     // a frame of the header's generation ends a transaction
  kUnknown,  // unreadable, or not a -wal SQLite would recognise
};

// Reads the -wal at `path`. Checksums are not verified: a torn commit frame
// counts as a commit, so kNone is said only where SQLite reads nothing.
WalCommits ReadWalCommits(const std::string& path);

}  // namespace grainstore

#endif  // GRAINSTORE_WAL_COMMITS_H_
