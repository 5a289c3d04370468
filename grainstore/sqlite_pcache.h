// SQLite's page cache for this process: SQLite's own (pcache1), behind a thin
// layer that skips truncations which would remove no page.
//
// Why: every commit ends by truncating the cache to the database's size. When
// a B-tree split reorders its new pages, SQLite parks one page for a moment
// at the locking page's number (1 GiB / page size + 1). pcache1 remembers
// that number as the largest key it has seen, so the next truncation, which
// names a far smaller limit, sweeps every bucket of the cache's hash table:
// tens of thousands of them once the cache holds a large store. The layer
// keeps its own bound on the keys in use, which the parked page leaves alone
// once it has moved back, and passes a truncation on only when a page may lie
// at or above the limit.
#ifndef GRAINSTORE_SQLITE_PCACHE_H_
#define GRAINSTORE_SQLITE_PCACHE_H_

#include <sqlite3.h>

namespace grainstore {

// Installs the layer over SQLite's default page cache before SQLite
// initialises (once per process; later calls do nothing). Returns false,
// changing nothing, when SQLite was already initialised by other code in the
// process.
bool InstallSqlitePageCache();

// The layer's methods over `inner`, which must outlive them. For tests, which
// observe what reaches `inner`; the process uses InstallSqlitePageCache.
sqlite3_pcache_methods2 SkippingPageCache(const sqlite3_pcache_methods2* inner);

}  // namespace grainstore

#endif  // GRAINSTORE_SQLITE_PCACHE_H_
