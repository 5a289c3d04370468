// SQLite's memory allocator for this process: page-cache pages come from an
// arena the kernel may back with transparent huge pages (past its first
// 4 MiB, each faulted in ahead of use on another thread); everything else
// goes to malloc. A first view of a file in a large store and every write touch
// dozens of cached pages, and on a virtual machine each 4 KiB page that misses
// the TLB costs a nested page walk; huge pages cut those misses.
#ifndef GRAINSTORE_SQLITE_MEMORY_H_
#define GRAINSTORE_SQLITE_MEMORY_H_

namespace grainstore {

// Sanitizer builds keep SQLite on malloc, which they must see every block of.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizerBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizerBuild = true;
#else
inline constexpr bool kAddressSanitizerBuild = false;
#endif
#else
inline constexpr bool kAddressSanitizerBuild = false;
#endif

// Installs the allocator before SQLite initialises (once per process; later
// calls do nothing). Returns false, changing nothing, when SQLite was already
// initialised by other code in the process (a host's own sqlite3 module), when
// the arena cannot be reserved, or in sanitizer builds (which must see every
// allocation).
bool InstallSqliteMemory();

// True when `p` (from sqlite3_malloc) lies in the arena. For tests.
bool SqliteArenaOwns(const void* p);

// Where the arena stands; all nullptr when it is not installed. For tests.
struct SqliteArenaState {
  char* base = nullptr;         // the arena's first byte
  char* next = nullptr;         // the first byte never handed out
  char* huge_from = nullptr;    // huge pages from here on; 4 KiB pages below
  char* populated_to = nullptr; // faulted in ahead of use up to here
};
SqliteArenaState GetSqliteArenaState();

}  // namespace grainstore

#endif  // GRAINSTORE_SQLITE_MEMORY_H_
