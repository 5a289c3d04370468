#include "numbered_pcache.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

namespace grainstore {
namespace {

// One cached page: this header, then SQLite's extra bytes, then the page's
// bytes, in one allocation.
struct Page {
  sqlite3_pcache_page base;  // first: SQLite hands this pointer back
  unsigned key = 0;
  std::uint32_t index = 0;  // in Cache::pages
  bool pinned = false;
  bool referenced = false;  // fetched since the clock hand last passed
};

// Page numbers map to table entries in chunks of kChunk, allocated when a
// page of theirs is first cached: a store's pages are numbered from 1 up, so
// the table's first level stays small, and the one far page SQLite parks at
// the locking byte's number costs one chunk.
constexpr unsigned kChunkBits = 10;
constexpr unsigned kPendingByte = 0x40000000;  // SQLite's locking byte
constexpr unsigned kChunk = 1u << kChunkBits;
using Chunk = std::array<Page*, kChunk>;

struct Cache {
  std::size_t header_bytes = 0;  // Page plus the extra bytes, rounded up to 8
  std::size_t page_bytes = 0;
  std::size_t extra_bytes = 0;
  bool purgeable = false;
  std::size_t max_pages = 0;
  std::vector<std::unique_ptr<Chunk>> table;
  std::vector<Page*> pages;  // every cached page, in no order
  std::size_t hand = 0;      // the clock's next look, in pages
  std::size_t pinned = 0;
};

Cache* Of(sqlite3_pcache* p) { return reinterpret_cast<Cache*>(p); }
Page* Of(sqlite3_pcache_page* p) { return reinterpret_cast<Page*>(p); }

Page* Find(const Cache& c, unsigned key) {
  const std::size_t hi = key >> kChunkBits;
  if (hi >= c.table.size() || !c.table[hi]) return nullptr;
  return (*c.table[hi])[key & (kChunk - 1)];
}

// The entry for `key`, its chunk made if missing; null when out of memory.
Page** Entry(Cache* c, unsigned key) {
  const std::size_t hi = key >> kChunkBits;
  try {
    if (hi >= c->table.size()) c->table.resize(hi + 1);
    if (!c->table[hi]) c->table[hi] = std::make_unique<Chunk>(Chunk{});
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
  return &(*c->table[hi])[key & (kChunk - 1)];
}

void Unmap(Cache* c, const Page* p) {
  (*c->table[p->key >> kChunkBits])[p->key & (kChunk - 1)] = nullptr;
}

void Unpinned(Cache* c, Page* p) {
  if (!p->pinned) return;
  p->pinned = false;
  --c->pinned;
}

// Takes `p` out of the table and the page list; the caller frees or reuses it.
void Remove(Cache* c, Page* p) {
  Unmap(c, p);
  Unpinned(c, p);
  Page* last = c->pages.back();
  c->pages[p->index] = last;
  last->index = p->index;
  c->pages.pop_back();
}

void Free(Cache* c, Page* p) {
  Remove(c, p);
  sqlite3_free(p);
}

// An unpinned page not fetched since the hand last passed it, removed from
// the cache; null when every page is pinned. Two turns at most: the first
// may only clear the bits.
Page* Recyclable(Cache* c) {
  if (c->pinned >= c->pages.size()) return nullptr;
  for (std::size_t looked = 0; looked < 2 * c->pages.size(); ++looked) {
    if (c->hand >= c->pages.size()) c->hand = 0;
    Page* p = c->pages[c->hand++];
    if (p->pinned) continue;
    if (p->referenced) {
      p->referenced = false;
      continue;
    }
    Remove(c, p);
    return p;
  }
  return nullptr;
}

// Frees unpinned pages of a purgeable cache until it holds at most its size.
void Trim(Cache* c) {
  while (c->purgeable && c->pages.size() > c->max_pages) {
    Page* p = Recyclable(c);
    if (p == nullptr) return;
    sqlite3_free(p);
  }
}

int Init(void*) { return SQLITE_OK; }
void Shutdown(void*) {}

sqlite3_pcache* Create(int page_bytes, int extra_bytes, int purgeable) {
  if (page_bytes <= 0 || extra_bytes < 0) return nullptr;
  auto* c = new (std::nothrow) Cache;
  if (c == nullptr) return nullptr;
  c->page_bytes = static_cast<std::size_t>(page_bytes);
  c->extra_bytes = static_cast<std::size_t>(extra_bytes);
  c->header_bytes = (sizeof(Page) + c->extra_bytes + 7) & ~std::size_t{7};
  c->purgeable = purgeable != 0;
  c->max_pages = 100;
  // The chunk of the locking page's number, where SQLite parks a page while
  // a B-tree split renumbers pages: made now, so that Rekey never allocates
  // for it.
  if (Entry(c, kPendingByte / static_cast<unsigned>(page_bytes) + 1) == nullptr) {
    delete c;
    return nullptr;
  }
  return reinterpret_cast<sqlite3_pcache*>(c);
}

void Cachesize(sqlite3_pcache* p, int pages) {
  Cache* c = Of(p);
  c->max_pages = pages > 0 ? static_cast<std::size_t>(pages) : 0;
  Trim(c);
}

int Pagecount(sqlite3_pcache* p) { return static_cast<int>(Of(p)->pages.size()); }

sqlite3_pcache_page* Fetch(sqlite3_pcache* pc, unsigned key, int create) {
  Cache* c = Of(pc);
  if (Page* p = Find(*c, key); p != nullptr) {
    if (!p->pinned) {
      p->pinned = true;
      ++c->pinned;
    }
    p->referenced = true;
    return &p->base;
  }
  if (create == 0) return nullptr;
  Page** entry = Entry(c, key);
  if (entry == nullptr) return nullptr;
  // A full purgeable cache recycles a page. With create flag 1 a cache with
  // none to spare says so (SQLite then writes dirty pages out and asks
  // again with 2, which must get a page if memory allows).
  Page* p = nullptr;
  if (c->purgeable && c->pages.size() >= c->max_pages) {
    p = Recyclable(c);
    if (p == nullptr && create == 1) return nullptr;
  }
  if (p == nullptr) {
    // Room for the page in the list first, doubling it (reserve(size + 1)
    // would copy the whole list for every new page).
    if (c->pages.size() == c->pages.capacity()) {
      try {
        c->pages.reserve(std::max<std::size_t>(64, 2 * c->pages.capacity()));
      } catch (const std::bad_alloc&) {
        return nullptr;
      }
    }
    p = static_cast<Page*>(sqlite3_malloc64(c->header_bytes + c->page_bytes));
    if (p == nullptr) return nullptr;
    new (p) Page;
  }
  char* bytes = reinterpret_cast<char*>(p);
  p->base.pExtra = bytes + sizeof(Page);
  p->base.pBuf = bytes + c->header_bytes;
  // SQLite reads a zero first field of the extra bytes as a new page.
  std::memset(p->base.pExtra, 0, c->extra_bytes);
  p->key = key;
  p->pinned = true;
  p->referenced = true;
  p->index = static_cast<std::uint32_t>(c->pages.size());
  c->pages.push_back(p);  // reserved above, or freed by the recycling
  ++c->pinned;
  *entry = p;
  return &p->base;
}

void Unpin(sqlite3_pcache* pc, sqlite3_pcache_page* page, int discard) {
  Cache* c = Of(pc);
  Page* p = Of(page);
  Unpinned(c, p);
  if (discard != 0 || (c->purgeable && c->pages.size() > c->max_pages)) Free(c, p);
}

void Rekey(sqlite3_pcache* pc, sqlite3_pcache_page* page, unsigned old_key, unsigned new_key) {
  Cache* c = Of(pc);
  Page* p = Of(page);
  if (old_key == new_key) return;
  // SQLite guarantees a page already at new_key is unpinned; it goes.
  if (Page* there = Find(*c, new_key); there != nullptr) Free(c, there);
  Page** entry = Entry(c, new_key);
  if (entry == nullptr) {
    // The contract has no way to fail, and the page may be pinned (and
    // dirty): losing it would lose a write. Only a page's first move to a
    // number no chunk covers allocates (the locking page's chunk is made
    // with the cache), so this is a process out of memory.
    std::fputs("areev: out of memory renumbering a cached database page\n", stderr);
    std::abort();
  }
  Unmap(c, p);
  p->key = new_key;
  *entry = p;
}

void Truncate(sqlite3_pcache* pc, unsigned limit) {
  Cache* c = Of(pc);
  for (std::size_t hi = limit >> kChunkBits; hi < c->table.size(); ++hi) {
    if (!c->table[hi]) continue;
    const std::size_t first = hi == (limit >> kChunkBits) ? (limit & (kChunk - 1)) : 0;
    for (std::size_t lo = first; lo < kChunk; ++lo) {
      if (Page* p = (*c->table[hi])[lo]; p != nullptr) Free(c, p);
    }
  }
}

void Destroy(sqlite3_pcache* pc) {
  Cache* c = Of(pc);
  for (Page* p : c->pages) sqlite3_free(p);
  delete c;
}

void Shrink(sqlite3_pcache* pc) {
  Cache* c = Of(pc);
  // From the end: Remove moves the last page into the freed place, one
  // already looked at.
  for (std::size_t i = c->pages.size(); i-- > 0;) {
    if (i < c->pages.size() && !c->pages[i]->pinned) Free(c, c->pages[i]);
  }
}

}  // namespace

const sqlite3_pcache_methods2* NumberedPageCache() {
  static const sqlite3_pcache_methods2 methods{
      .iVersion = 1,
      .pArg = nullptr,
      .xInit = Init,
      .xShutdown = Shutdown,
      .xCreate = Create,
      .xCachesize = Cachesize,
      .xPagecount = Pagecount,
      .xFetch = Fetch,
      .xUnpin = Unpin,
      .xRekey = Rekey,
      .xTruncate = Truncate,
      .xDestroy = Destroy,
      .xShrink = Shrink,
  };
  return &methods;
}

}  // namespace grainstore
