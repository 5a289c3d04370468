// A Store opened on a fresh file in a scratch directory, for tests of the
// Store's behaviour.
#ifndef GRAINSTORE_STORE_FIXTURE_H_
#define GRAINSTORE_STORE_FIXTURE_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "grainstore/store.h"
#include "test_util.h"

namespace grainstore::test {

class StoreFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = Store::Open(path_);
    ASSERT_TRUE(s.has_value()) << s.error().ToString();
    store_ = std::move(*s);
    auto ns = store_->Namespace("default");
    ASSERT_TRUE(ns.has_value()) << ns.error().ToString();
    ns_ = *ns;
  }

  std::string Read(std::string_view key, NodeInfo* info = nullptr) {
    auto r = store_->ReadFile(ns_, key, info);
    return r.has_value() ? *r : "<" + r.error().ToString() + ">";
  }
  std::vector<VersionInfo> Hist(std::string_view key) {
    auto h = store_->History(ns_, key);
    EXPECT_TRUE(h.has_value()) << h.error().ToString();
    return h.has_value() ? *h : std::vector<VersionInfo>{};
  }
  // The keys of the directory's children, in listing order.
  std::vector<std::string> ChildKeys(std::string_view dir_key) {
    auto dir = store_->StatKey(ns_, dir_key);
    EXPECT_TRUE(dir.has_value()) << dir.error().ToString();
    if (!dir.has_value()) return {};
    auto kids = store_->ListChildren(dir->id);
    EXPECT_TRUE(kids.has_value()) << kids.error().ToString();
    std::vector<std::string> keys;
    if (kids.has_value()) {
      for (const NodeInfo& kid : *kids) keys.push_back(kid.key);
    }
    return keys;
  }

  ScratchDir dir_{"grainstore_test"};  // first: outlives the store
  std::string path_ = dir_.File("agent.db");
  std::unique_ptr<Store> store_;
  NsId ns_ = 0;
};

}  // namespace grainstore::test

#endif  // GRAINSTORE_STORE_FIXTURE_H_
