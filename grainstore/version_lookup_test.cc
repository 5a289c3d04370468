// Finding a version without reading it (Store::FindVersion, FindChainVersion)
// the way ReadVersion reads it.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "grainstore/store.h"
#include "store_fixture.h"

namespace grainstore {
namespace {

using test::StoreFixture;
using VersionLookupTest = StoreFixture;

// A grain id names a version in any chain at the path, as ReadVersion finds
// it; a number counts in the chain History shows; --chain looks in one chain.
TEST_F(VersionLookupTest, FindVersionResolvesAsReadVersionDoes) {
  const std::string key = "/memories/p.md";
  ASSERT_TRUE(store_->PutFile(ns_, key, "old file\n").has_value());
  const VersionInfo old = Hist(key)[0];
  ASSERT_TRUE(store_->DeleteKey(ns_, key).ok());
  ASSERT_TRUE(store_->PutFile(ns_, key, "new\n").has_value());
  const VersionInfo now = Hist(key)[0];
  ASSERT_NE(old.chain_id, now.chain_id);

  const std::string prefix = old.grain_id.substr(0, 10);
  auto found = store_->FindVersion(ns_, key, prefix);
  ASSERT_TRUE(found.has_value()) << found.error().ToString();
  EXPECT_EQ(found->chain_id, old.chain_id);
  EXPECT_EQ(found->seq, 1u);
  EXPECT_EQ(found->grain_id, old.grain_id);
  EXPECT_EQ(*store_->ReadVersion(ns_, key, prefix), "old file\n");

  auto one = store_->FindVersion(ns_, key, "1");
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->grain_id, now.grain_id);

  EXPECT_EQ(store_->FindChainVersion(now.chain_id, key, prefix).error().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(store_->FindChainVersion(old.chain_id, key, prefix)->grain_id, old.grain_id);
  EXPECT_EQ(store_->FindVersion(ns_, key, "2").error().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->FindVersion(ns_, key, "0").error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->ReadVersion(ns_, key, "0").error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->FindVersion(ns_, "/memories/none.md", "1").error().code(),
            StatusCode::kNotFound);
}

}  // namespace
}  // namespace grainstore
