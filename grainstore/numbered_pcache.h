// SQLite's page cache for this process's connections: pages found by their
// number in a two-level table, where SQLite's own cache (pcache1) looks them
// up in a hash table.
//
// Why: a first read of a file in a store of 100,000 files fetches two pages
// no CPU cache holds (a leaf of the key index and one of the bodies table).
// pcache1 reaches each through a hash bucket, the page's header at the end
// of its buffer, and the two neighbours it unlinks from its LRU list (13.7%
// of such a read's profile). Here a lookup reads one table entry and the
// page's header, which SQLite's own header for the page (the "extra" bytes)
// follows in the same allocation; a hit sets a bit, and recycling is a
// clock sweep over the cache's pages: 7% fewer misses of the last-level
// cache per such read (docs/performance.md, "A page cache that finds pages
// by number").
//
// The contract is sqlite3_pcache_methods2's: fetch with create flags 0, 1
// and 2; unpin, with discard; rekey over an unpinned page; truncate, which
// drops pinned pages too; shrink; a cache size that recycles unpinned pages
// of purgeable caches only. Memory comes from sqlite3_malloc64, so SQLite's
// allocator (grainstore/sqlite_memory.h) serves it. Each cache is used by
// one connection at a time, as SQLite does without shared cache; the layer
// of sqlite_pcache.h sits above it.
#ifndef GRAINSTORE_NUMBERED_PCACHE_H_
#define GRAINSTORE_NUMBERED_PCACHE_H_

#include <sqlite3.h>

namespace grainstore {

// The cache's methods (static storage; pArg is unused).
const sqlite3_pcache_methods2* NumberedPageCache();

}  // namespace grainstore

#endif  // GRAINSTORE_NUMBERED_PCACHE_H_
