#include "sqlite_memory.h"

#include <malloc.h>
#include <sqlite3.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "memory_populator.h"

namespace grainstore {
namespace {

// Blocks from kMinArenaBlock to kMaxArenaBlock bytes (page-cache pages of 2 to
// 64 KiB plus SQLite's per-page header) come from the arena, rounded up to a
// multiple of kSizeClass; each size class keeps its own free list, so a freed
// page is reused by the next page of that size.
constexpr std::size_t kMinArenaBlock = 2048;
constexpr std::size_t kMaxArenaBlock = (64 << 10) + 1024;
constexpr std::size_t kSizeClass = 64;
constexpr std::size_t kClasses = (kMaxArenaBlock - kMinArenaBlock) / kSizeClass + 1;
constexpr std::size_t kArenaBytes = std::size_t{4} << 30;  // address space only
constexpr std::size_t kHugePage = std::size_t{2} << 20;
// The arena's first bytes stay in 4 KiB pages: a short-lived process (one CLI
// call) touches a few hundred KiB of cache and should not wait for a whole
// huge page to be zeroed. Past them, huge pages, each faulted in by the
// populator (memory_populator.h) about one huge page before the arena
// reaches it.
constexpr std::size_t kSmallPagesBytes = std::size_t{4} << 20;
constexpr std::size_t kPopulateAhead = kHugePage;
// Each block is preceded by its (rounded) size, so Size and Free need no lookup.
constexpr std::size_t kHeader = 16;

struct Arena {
  std::mutex mu;
  char* base = nullptr;
  char* end = nullptr;
  char* next = nullptr;  // first byte never handed out
  MemoryPopulator* populator = nullptr;
  std::vector<std::vector<void*>> free = std::vector<std::vector<void*>>(kClasses);
};

Arena* g_arena = nullptr;  // leaked on purpose: SQLite may free at exit

bool InArena(const void* p) {
  const char* c = static_cast<const char*>(p);
  return g_arena != nullptr && c >= g_arena->base && c < g_arena->end;
}

std::size_t HeaderSize(const void* p) {
  std::size_t size;
  std::memcpy(&size, static_cast<const char*>(p) - kHeader, sizeof size);
  return size;
}

std::size_t RoundToClass(std::size_t size) { return (size + kSizeClass - 1) & ~(kSizeClass - 1); }

std::vector<void*>& FreeList(std::size_t rounded) {
  return g_arena->free[(rounded - kMinArenaBlock) / kSizeClass];
}

char* RoundUpToHugePage(char* p) {
  auto a = reinterpret_cast<std::uintptr_t>(p);
  return reinterpret_cast<char*>((a + kHugePage - 1) & ~(kHugePage - 1));
}

// With the arena's lock held, after `next` moved: what the populator should
// have faulted in (the rest of the huge page `next` is in, and
// kPopulateAhead beyond). Asking again for what it was asked already, or for
// the arena's 4 KiB pages below where it starts, returns at once.
char* PopulateTarget(const Arena* arena) {
  return std::min(RoundUpToHugePage(arena->next) + kPopulateAhead, arena->end);
}

void* ArenaAlloc(std::size_t size) {
  const std::size_t rounded = RoundToClass(size);
  char* block;
  char* populate_to;
  {
    std::lock_guard lock(g_arena->mu);
    std::vector<void*>& list = FreeList(rounded);
    if (!list.empty()) {
      void* p = list.back();
      list.pop_back();
      return p;
    }
    const std::size_t step = kHeader + rounded;
    if (static_cast<std::size_t>(g_arena->end - g_arena->next) < step) return nullptr;
    block = g_arena->next + kHeader;
    std::memcpy(block - kHeader, &rounded, sizeof rounded);
    g_arena->next += step;
    populate_to = PopulateTarget(g_arena);
  }
  g_arena->populator->Request(populate_to);
  return block;
}

void ArenaFree(void* p) {
  const std::size_t rounded = HeaderSize(p);
  std::lock_guard lock(g_arena->mu);
  FreeList(rounded).push_back(p);
}

bool ForArena(int n) {
  return n >= static_cast<int>(kMinArenaBlock) && n <= static_cast<int>(kMaxArenaBlock);
}

void* Malloc(int n) {
  if (ForArena(n)) {
    if (void* p = ArenaAlloc(static_cast<std::size_t>(n))) return p;
  }
  return std::malloc(static_cast<std::size_t>(n));
}

int Size(void* p) {
  if (InArena(p)) return static_cast<int>(HeaderSize(p));
  return static_cast<int>(malloc_usable_size(p));
}

void Free(void* p) {
  if (InArena(p)) return ArenaFree(p);
  std::free(p);
}

void* Realloc(void* p, int n) {
  if (!InArena(p) && !ForArena(n)) return std::realloc(p, static_cast<std::size_t>(n));
  void* fresh = Malloc(n);
  if (fresh == nullptr) return nullptr;
  std::memcpy(fresh, p, static_cast<std::size_t>(std::min(Size(p), n)));
  Free(p);
  return fresh;
}

int Roundup(int n) { return (n + 7) & ~7; }
int Init(void*) { return SQLITE_OK; }
void Shutdown(void*) {}

bool Install() {
  if (kAddressSanitizerBuild) return false;
  void* mem = mmap(nullptr, kArenaBytes + kHugePage, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mem == MAP_FAILED) return false;
  char* base = RoundUpToHugePage(static_cast<char*>(mem));
  // Hints; without them the arena works the same in whichever pages it gets.
  (void)madvise(base, kSmallPagesBytes, MADV_NOHUGEPAGE);
  (void)madvise(base + kSmallPagesBytes, kArenaBytes - kSmallPagesBytes, MADV_HUGEPAGE);
  static const sqlite3_mem_methods kMethods = {Malloc, Free,     Realloc, Size,
                                               Roundup, Init,    Shutdown, nullptr};
  auto* arena = new Arena;
  arena->base = base;
  arena->end = base + kArenaBytes;
  arena->next = base;
  // Below base + kSmallPagesBytes, pages fault cheaply: the populator starts there.
  arena->populator = new MemoryPopulator(base + kSmallPagesBytes);  // leaked with the arena
  g_arena = arena;
  if (sqlite3_config(SQLITE_CONFIG_MALLOC, &kMethods) != SQLITE_OK) {
    g_arena = nullptr;  // SQLite is already running on its own allocator
    delete arena->populator;
    delete arena;
    munmap(mem, kArenaBytes + kHugePage);
    return false;
  }
  (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);  // no global counter lock per call
  return true;
}

}  // namespace

bool InstallSqliteMemory() {
  static const bool installed = Install();
  return installed;
}

bool SqliteArenaOwns(const void* p) { return InArena(p); }

SqliteArenaState GetSqliteArenaState() {
  if (g_arena == nullptr) return {};
  std::lock_guard lock(g_arena->mu);
  return {g_arena->base, g_arena->next, g_arena->base + kSmallPagesBytes, g_arena->populator->done()};
}

}  // namespace grainstore
