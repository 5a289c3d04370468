// The SQLite allocator: page-sized blocks from the huge-page arena, the rest
// from malloc, every block usable to its full size and reusable once freed.
#include "sqlite_memory.h"

#include <sqlite3.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "grainstore/store.h"
#include "store_fixture.h"

namespace grainstore {
namespace {

constexpr bool kExpectArena = !kAddressSanitizerBuild;

// Installs the allocator before any test touches SQLite, whatever the order,
// as Db::Open does before a process's first connection.
class InstallFirst : public ::testing::Environment {
 public:
  void SetUp() override { installed_ = InstallSqliteMemory(); }
  static bool installed() { return installed_; }

 private:
  static inline bool installed_ = false;
};
const auto* const kInstallFirst = ::testing::AddGlobalTestEnvironment(new InstallFirst);

TEST(SqliteMemoryTest, InstalledBeforeSqliteStartsExceptUnderSanitizers) {
  EXPECT_EQ(InstallFirst::installed(), kExpectArena);
  EXPECT_EQ(InstallSqliteMemory(), kExpectArena);  // later calls change nothing
}

TEST(SqliteMemoryTest, PageSizedBlocksComeFromTheArenaAndAreReused) {
  if (!InstallSqliteMemory()) GTEST_SKIP() << "arena not installed in this build";
  ASSERT_EQ(sqlite3_initialize(), SQLITE_OK);
  void* page = sqlite3_malloc(4096 + 272);
  ASSERT_NE(page, nullptr);
  EXPECT_TRUE(SqliteArenaOwns(page));
  EXPECT_GE(sqlite3_msize(page), sqlite3_uint64{4096 + 272});
  std::memset(page, 0xab, 4096 + 272);
  void* small = sqlite3_malloc(100);
  ASSERT_NE(small, nullptr);
  EXPECT_FALSE(SqliteArenaOwns(small));
  sqlite3_free(small);
  sqlite3_free(page);
  void* again = sqlite3_malloc(4096 + 272);
  EXPECT_EQ(again, page);  // the freed block of that size
  sqlite3_free(again);
}

// Stores made with 2 KiB pages get arena pages too; sizes round up to a
// 64-byte class, and a freed block serves any request of its class.
TEST(SqliteMemoryTest, SmallPagesShareASizeClass) {
  if (!InstallSqliteMemory()) GTEST_SKIP() << "arena not installed in this build";
  ASSERT_EQ(sqlite3_initialize(), SQLITE_OK);
  void* page = sqlite3_malloc(2048 + 250);
  ASSERT_NE(page, nullptr);
  EXPECT_TRUE(SqliteArenaOwns(page));
  EXPECT_EQ(sqlite3_msize(page), sqlite3_uint64{2304});  // 2298 rounded up to 64
  std::memset(page, 0xcd, 2304);
  sqlite3_free(page);
  void* same_class = sqlite3_malloc(2290);
  EXPECT_EQ(same_class, page);
  void* next_class = sqlite3_malloc(2305);
  ASSERT_NE(next_class, nullptr);
  EXPECT_NE(next_class, page);
  EXPECT_TRUE(SqliteArenaOwns(next_class));
  void* below = sqlite3_malloc(2047);
  ASSERT_NE(below, nullptr);
  EXPECT_FALSE(SqliteArenaOwns(below));
  sqlite3_free(below);
  sqlite3_free(next_class);
  sqlite3_free(same_class);
}

TEST(SqliteMemoryTest, ReallocAcrossTheArenaKeepsTheBytes) {
  if (!InstallSqliteMemory()) GTEST_SKIP() << "arena not installed in this build";
  ASSERT_EQ(sqlite3_initialize(), SQLITE_OK);
  auto* p = static_cast<char*>(sqlite3_malloc(64));
  ASSERT_NE(p, nullptr);
  std::memcpy(p, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde", 64);
  auto* big = static_cast<char*>(sqlite3_realloc(p, 5000));  // into the arena
  ASSERT_NE(big, nullptr);
  EXPECT_TRUE(SqliteArenaOwns(big));
  EXPECT_EQ(std::string(big, 64), std::string("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde", 64));
  big[4999] = 'z';
  auto* back = static_cast<char*>(sqlite3_realloc(big, 32));  // out again
  ASSERT_NE(back, nullptr);
  EXPECT_FALSE(SqliteArenaOwns(back));
  EXPECT_EQ(std::string(back, 32), "0123456789abcdef0123456789abcdef");
  sqlite3_free(back);
}

constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;

char* RoundUp(char* p, std::uintptr_t to) {
  return reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(p) + to - 1) & ~(to - 1));
}

// Takes blocks of the largest class until the arena's next byte is at or past
// `until`; the blocks stay taken (returned for freeing).
std::vector<void*> GrowArenaTo(char* until) {
  std::vector<void*> blocks;
  while (GetSqliteArenaState().next < until) {
    void* p = sqlite3_malloc(65536 + 1024);
    if (p == nullptr || !SqliteArenaOwns(p)) break;
    blocks.push_back(p);
  }
  return blocks;
}

// Waits up to 10 s for the populator to reach `to`.
bool PopulatedTo(char* to) {
  for (int i = 0; i < 1000; ++i) {
    if (GetSqliteArenaState().populated_to >= to) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Whether every 4 KiB page of [from, to) is in memory, none of it touched here.
bool Resident(char* from, char* to) {
  from = RoundUp(from, 4096);
  std::vector<unsigned char> pages(static_cast<std::size_t>(to - from) / 4096);
  if (mincore(from, static_cast<std::size_t>(to - from), pages.data()) != 0) return false;
  for (unsigned char page : pages) {
    if ((page & 1) == 0) return false;
  }
  return true;
}

// Past its first 4 MiB the arena faults each huge page in before SQLite
// reaches it: the huge page after the one in use is resident untouched.
TEST(SqliteMemoryTest, HugePagesAreFaultedInAheadOfUse) {
  if (!InstallSqliteMemory()) GTEST_SKIP() << "arena not installed in this build";
  ASSERT_EQ(sqlite3_initialize(), SQLITE_OK);
  SqliteArenaState start = GetSqliteArenaState();
  ASSERT_EQ(start.huge_from, start.base + (4 << 20));
  std::vector<void*> blocks = GrowArenaTo(start.huge_from + 1);
  SqliteArenaState grown = GetSqliteArenaState();
  ASSERT_GT(grown.next, grown.huge_from);
  char* expected = RoundUp(grown.next, kHuge) + kHuge;
  ASSERT_TRUE(PopulatedTo(expected)) << "populated only to +"
                                     << (GetSqliteArenaState().populated_to - grown.base);
  EXPECT_TRUE(Resident(grown.next, expected));
  for (void* p : blocks) sqlite3_free(p);
}

// A child of fork() has no populator thread of its parent's; its arena starts
// one of its own when it grows into the next huge page.
TEST(SqliteMemoryTest, AForkedChildPopulatesAheadToo) {
  if (!InstallSqliteMemory()) GTEST_SKIP() << "arena not installed in this build";
  ASSERT_EQ(sqlite3_initialize(), SQLITE_OK);
  SqliteArenaState start = GetSqliteArenaState();
  char* boundary = std::max(RoundUp(start.next, kHuge), start.huge_from) + 1;
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::vector<void*> blocks = GrowArenaTo(boundary);
    char* expected = RoundUp(GetSqliteArenaState().next, kHuge) + kHuge;
    bool ok = PopulatedTo(expected) && Resident(GetSqliteArenaState().next, expected);
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// A store works on top of it: pages cycle through the arena as the cache
// fills and the data reads back.
class SqliteMemoryStoreTest : public test::StoreFixture {};

TEST_F(SqliteMemoryStoreTest, AStoreReadsBackThroughTheArena) {
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE(store_->PutFile(ns_, "/memories/f" + std::to_string(i) + ".md",
                                std::string(3000, static_cast<char>('a' + i % 26)))
                    .has_value());
  }
  for (int i = 0; i < 300; i += 37) {
    auto body = store_->ReadFile(ns_, "/memories/f" + std::to_string(i) + ".md");
    ASSERT_TRUE(body.has_value());
    EXPECT_EQ(*body, std::string(3000, static_cast<char>('a' + i % 26)));
  }
}

}  // namespace
}  // namespace grainstore
