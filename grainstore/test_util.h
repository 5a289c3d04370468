// Helpers for grainstore's tests: a scratch directory per test, and one-value
// queries through SQLite's default VFS (as the sqlite3 shell or another
// program would read the file).
#ifndef GRAINSTORE_TEST_UTIL_H_
#define GRAINSTORE_TEST_UTIL_H_

#include <sqlite3.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

namespace grainstore::test {

// A fresh directory named after the suite prefix, the process and the
// running test, removed when the object goes.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix)
      : path_(std::filesystem::temp_directory_path() /
              (prefix + "_" + std::to_string(getpid()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() { std::filesystem::remove_all(path_); }

  const std::filesystem::path& path() const { return path_; }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// Runs `sql` on the database at `path`, opened read-only through the default
// VFS, and hands the first row (if any) to `read_row`.
template <typename ReadRow>
void PlainQuery(const std::string& path, const std::string& sql, ReadRow read_row) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_busy_timeout(db, 5000);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  if (sqlite3_step(st) == SQLITE_ROW) read_row(st);
  sqlite3_finalize(st);
  sqlite3_close(db);
}

// Runs `sql` (statements that change the file: damage, an older layout) on
// the database at `path` through the default VFS, as another program would.
// False, with the reason reported as a test failure, when it did not run;
// callers ASSERT_TRUE on it.
[[nodiscard]] inline bool PlainExec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  const bool opened = sqlite3_open(path.c_str(), &db) == SQLITE_OK;
  sqlite3_busy_timeout(db, 5000);
  const bool ran = opened && sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK;
  if (!ran) ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
  sqlite3_close(db);
  return ran;
}

// The first column of the first row; -1 when there is no row.
inline std::int64_t PlainInt(const std::string& path, const std::string& sql) {
  std::int64_t v = -1;
  PlainQuery(path, sql, [&](sqlite3_stmt* st) { v = sqlite3_column_int64(st, 0); });
  return v;
}

// The first column of the first row as text; "" when there is no row.
inline std::string PlainText(const std::string& path, const std::string& sql) {
  std::string v;
  PlainQuery(path, sql, [&](sqlite3_stmt* st) {
    if (const unsigned char* t = sqlite3_column_text(st, 0)) v = reinterpret_cast<const char*>(t);
  });
  return v;
}

// Bodies whose refs differ from what references them (grains, chainless
// nodes, delta rows built on them), plus referrers whose body is missing.
// The raw bytes of a file ("" if it is missing): for looking for plaintext.
inline std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline std::int64_t BodyRefMismatches(const std::string& path) {
  return PlainInt(
      path,
      "SELECT (SELECT count(*) FROM bodies b WHERE b.refs != "
      "  (SELECT count(*) FROM grains g WHERE g.body_id = b.id) + "
      "  (SELECT count(*) FROM nodes n WHERE n.body_id = b.id AND n.chain_id = 0) + "
      "  (SELECT count(*) FROM bodies d WHERE abs(d.base_id) = b.id)) + "
      "(SELECT count(*) FROM grains g WHERE g.body_id IS NOT NULL AND "
      "  g.body_id NOT IN (SELECT id FROM bodies)) + "
      "(SELECT count(*) FROM nodes n WHERE n.body_id IS NOT NULL AND "
      "  n.body_id NOT IN (SELECT id FROM bodies)) + "
      "(SELECT count(*) FROM bodies d WHERE d.base_id IS NOT NULL AND "
      "  abs(d.base_id) NOT IN (SELECT id FROM bodies))");
}

}  // namespace grainstore::test

#endif  // GRAINSTORE_TEST_UTIL_H_
