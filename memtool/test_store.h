// Test support shared by memtool's test files: a Store in a fresh temp
// directory and a MemoryTool fixture on one of its namespaces.
#ifndef MEMTOOL_TEST_STORE_H_
#define MEMTOOL_TEST_STORE_H_

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>

#include "grainstore/store.h"
#include "memtool/memtool.h"

namespace memtool {

// A Store in a fresh temp directory, removed on destruction.
class TempStore {
 public:
  TempStore() {
    char tmpl[] = "/tmp/memtool_test_XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
      ADD_FAILURE() << "mkdtemp failed";
      return;
    }
    dir_ = tmpl;
    auto opened = grainstore::Store::Open(dir_ + "/store.db");
    if (!opened.has_value()) {
      ADD_FAILURE() << "Store::Open: " << opened.error().message();
      return;
    }
    store_ = std::move(opened).value();
  }
  ~TempStore() {
    store_.reset();
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  grainstore::Store* store() { return store_.get(); }
  grainstore::NsId Ns(const std::string& name) {
    if (store_ == nullptr) return 0;
    auto ns = store_->Namespace(name);
    EXPECT_TRUE(ns.has_value()) << ns.error().message();
    return ns.has_value() ? *ns : 0;
  }

 private:
  std::string dir_;
  std::unique_ptr<grainstore::Store> store_;
};

// A MemoryTool on namespace "t" of a fresh store.
class MemoryToolTest : public ::testing::Test {
 protected:
  MemoryToolTest() : ns_(temp_.Ns("t")), tool_(temp_.store(), ns_) {}

  ToolResult Run(const nlohmann::json& command) { return tool_.Execute(command.dump()); }
  std::string ViewRoot() { return Run({{"command", "view"}, {"path", "/memories"}}).content; }

  TempStore temp_;
  grainstore::NsId ns_;
  MemoryTool tool_;
};

inline constexpr char kEmptyRoot[] =
    "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items "
    "and node_modules:\n4K\t/memories";

}  // namespace memtool

#endif  // MEMTOOL_TEST_STORE_H_
