#include "sqlite_pcache.h"

#include <algorithm>
#include <mutex>
#include <new>
#include <vector>

#include "numbered_pcache.h"

namespace grainstore {
namespace {

// SQLite's locking byte: the page holding it is never a database page, and
// is where a B-tree split parks a page while it renumbers its new pages.
constexpr unsigned kPendingByte = 0x40000000;

// One cache: the inner cache plus a bound on the keys it holds.
struct Cache {
  sqlite3_pcache* inner = nullptr;
  const sqlite3_pcache_methods2* methods = nullptr;
  unsigned lock_key = 0;     // the locking page's number at this page size
  unsigned max_key = 0;      // no page above this, except at lock_key
  unsigned parked = 0;       // pages moved to lock_key and not moved away since
};

Cache* Of(sqlite3_pcache* p) { return reinterpret_cast<Cache*>(p); }

// Set by ScopedAbandonPageCaches.
thread_local bool t_abandon = false;

// Caches left alone by ScopedAbandonPageCaches, kept reachable so that leak
// checkers do not report them.
void KeepAbandoned(Cache* c) {
  static auto* mu = new std::mutex;
  static auto* kept = new std::vector<Cache*>;
  std::lock_guard lock(*mu);
  kept->push_back(c);
}

// The inner methods for caches that the installed layer creates, and for
// caches made through SkippingPageCache (tests). xCreate is the one method
// that receives no cache, so each source gets its own xCreate.
const sqlite3_pcache_methods2* g_process_inner = nullptr;
const sqlite3_pcache_methods2* g_test_inner = nullptr;

template <const sqlite3_pcache_methods2** kInner>
sqlite3_pcache* Create(int page_size, int extra, int purgeable) {
  const sqlite3_pcache_methods2* methods = *kInner;
  auto* cache = new (std::nothrow) Cache;
  if (cache == nullptr) return nullptr;
  cache->inner = methods->xCreate(page_size, extra, purgeable);
  if (cache->inner == nullptr) {
    delete cache;
    return nullptr;
  }
  cache->methods = methods;
  cache->lock_key = page_size > 0 ? kPendingByte / static_cast<unsigned>(page_size) + 1 : 0;
  return reinterpret_cast<sqlite3_pcache*>(cache);
}

int Init(void* arg) {
  const auto* inner = static_cast<const sqlite3_pcache_methods2*>(arg);
  return inner->xInit != nullptr ? inner->xInit(inner->pArg) : SQLITE_OK;
}

void Shutdown(void* arg) {
  const auto* inner = static_cast<const sqlite3_pcache_methods2*>(arg);
  if (inner->xShutdown != nullptr) inner->xShutdown(inner->pArg);
}

void Cachesize(sqlite3_pcache* p, int pages) { Of(p)->methods->xCachesize(Of(p)->inner, pages); }

int Pagecount(sqlite3_pcache* p) { return Of(p)->methods->xPagecount(Of(p)->inner); }

sqlite3_pcache_page* Fetch(sqlite3_pcache* p, unsigned key, int create) {
  Cache* c = Of(p);
  if (create != 0) c->max_key = std::max(c->max_key, key);
  return c->methods->xFetch(c->inner, key, create);
}

void Unpin(sqlite3_pcache* p, sqlite3_pcache_page* page, int discard) {
  Of(p)->methods->xUnpin(Of(p)->inner, page, discard);
}

void Rekey(sqlite3_pcache* p, sqlite3_pcache_page* page, unsigned old_key, unsigned new_key) {
  Cache* c = Of(p);
  if (old_key == c->lock_key && c->parked > 0) --c->parked;
  if (new_key == c->lock_key) {
    ++c->parked;
  } else {
    c->max_key = std::max(c->max_key, new_key);
  }
  c->methods->xRekey(c->inner, page, old_key, new_key);
}

void Truncate(sqlite3_pcache* p, unsigned limit) {
  if (t_abandon) return;
  Cache* c = Of(p);
  const bool parked_above = c->parked > 0 && limit <= c->lock_key;
  if (limit > c->max_key && !parked_above) return;  // no page at or above limit
  c->methods->xTruncate(c->inner, limit);
  c->max_key = std::min(c->max_key, limit == 0 ? 0 : limit - 1);
  if (parked_above) c->parked = 0;
}

void Destroy(sqlite3_pcache* p) {
  Cache* c = Of(p);
  if (t_abandon) {
    KeepAbandoned(c);
    return;
  }
  c->methods->xDestroy(c->inner);
  delete c;
}

void Shrink(sqlite3_pcache* p) { Of(p)->methods->xShrink(Of(p)->inner); }

template <const sqlite3_pcache_methods2** kInner>
sqlite3_pcache_methods2 Methods() {
  return sqlite3_pcache_methods2{
      .iVersion = 1,
      .pArg = const_cast<sqlite3_pcache_methods2*>(*kInner),
      .xInit = Init,
      .xShutdown = Shutdown,
      .xCreate = Create<kInner>,
      .xCachesize = Cachesize,
      .xPagecount = Pagecount,
      .xFetch = Fetch,
      .xUnpin = Unpin,
      .xRekey = Rekey,
      .xTruncate = Truncate,
      .xDestroy = Destroy,
      .xShrink = Shrink,
  };
}

bool Install() {
  // Both tables live for the process: SQLite keeps a copy of the layer's, and
  // the layer calls through the numbered cache's until exit.
  g_process_inner = NumberedPageCache();
  static sqlite3_pcache_methods2 layer = Methods<&g_process_inner>();
  if (sqlite3_config(SQLITE_CONFIG_PCACHE2, &layer) != SQLITE_OK) {
    g_process_inner = nullptr;
    return false;
  }
  return true;
}

}  // namespace

ScopedAbandonPageCaches::ScopedAbandonPageCaches() : was_(t_abandon) { t_abandon = true; }
ScopedAbandonPageCaches::~ScopedAbandonPageCaches() { t_abandon = was_; }

bool InstallSqlitePageCache() {
  static const bool installed = Install();
  return installed;
}

sqlite3_pcache_methods2 SkippingPageCache(const sqlite3_pcache_methods2* inner) {
  g_test_inner = inner;
  return Methods<&g_test_inner>();
}

}  // namespace grainstore
