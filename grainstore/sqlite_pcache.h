// SQLite's page cache for this process: the numbered cache
// (numbered_pcache.h), behind a thin layer that skips truncations which
// would remove no page.
//
// Why: every commit ends by truncating the cache to the database's size. When
// a B-tree split reorders its new pages, SQLite parks one page for a moment
// at the locking page's number (1 GiB / page size + 1). A truncation walks
// every key from its limit to the highest the cache has held (pcache1, the
// cache this layer was written over, swept its whole hash table; the
// numbered cache walks each table chunk from the limit up, the parked
// page's among them). The layer keeps its own bound on the keys in use,
// which the parked page leaves alone once it has moved back, and passes a
// truncation on only when a page may lie at or above the limit.
#ifndef GRAINSTORE_SQLITE_PCACHE_H_
#define GRAINSTORE_SQLITE_PCACHE_H_

#include <sqlite3.h>

namespace grainstore {

// Installs the layer over the numbered cache before SQLite
// initialises (once per process; later calls do nothing). Returns false,
// changing nothing, when SQLite was already initialised by other code in the
// process.
bool InstallSqlitePageCache();

// The layer's methods over `inner`, which must outlive them. For tests, which
// observe what reaches `inner`; the process uses InstallSqlitePageCache.
sqlite3_pcache_methods2 SkippingPageCache(const sqlite3_pcache_methods2* inner);

// While one lives on a thread, the caches that thread truncates or destroys
// through the layer are left as they are and their memory is leaked. For
// closing, in a child of fork(), connections the parent opened: closing one
// truncates and frees its cache, which writes to every page it holds, and in
// the child each such write copies a page the two processes still share. A
// cache of a large store (up to 256 MiB) took seconds to close that way,
// and a child's first call with it. Left alone, the pages stay shared and
// cost the child nothing. Only for connections no one uses again.
class ScopedAbandonPageCaches {
 public:
  ScopedAbandonPageCaches();
  ~ScopedAbandonPageCaches();
  ScopedAbandonPageCaches(const ScopedAbandonPageCaches&) = delete;
  ScopedAbandonPageCaches& operator=(const ScopedAbandonPageCaches&) = delete;

 private:
  bool was_;
};

}  // namespace grainstore

#endif  // GRAINSTORE_SQLITE_PCACHE_H_
