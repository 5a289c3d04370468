// Finding a version without reading it (Store::FindVersion, FindChainVersion)
// the way ReadVersion reads it; and Store::ReadChainBody, which reads the body
// a node held when last seen (NodeInfo::body_id) after the node was replaced
// by a rename (its chain goes on in the node that replaced it) or deleted.
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

// ChainVersions pages a chain as ReadOps pages the op-log; a version named by
// a grain-id prefix is found by every page's ids, not only the first page's.
TEST_F(VersionLookupTest, ChainVersionsComeInPagesAndPrefixesReachEveryVersion) {
  const std::string key = "/memories/p.md";
  for (int i = 1; i <= 5; ++i) {
    ASSERT_TRUE(store_->PutFile(ns_, key, "v" + std::to_string(i) + "\n").has_value());
  }
  const std::vector<VersionInfo> all = Hist(key);
  ASSERT_EQ(all.size(), 5u);
  const ChainId chain = all[0].chain_id;
  std::vector<std::uint32_t> paged;
  for (std::uint32_t after = 0;;) {
    auto page = store_->ChainVersions(chain, after, 2);
    ASSERT_TRUE(page.has_value());
    for (const VersionInfo& v : *page) {
      paged.push_back(v.seq);
      EXPECT_EQ(v.grain_id, all[v.seq - 1].grain_id);
    }
    if (page->size() < 2) break;
    after = page->back().seq;
  }
  EXPECT_EQ(paged, (std::vector<std::uint32_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(store_->ChainVersions(chain, 5, 2)->size(), 0u);
  EXPECT_EQ(store_->ChainVersions(chain, 0, 0)->size(), 5u);
  EXPECT_EQ(store_->ChainVersions(chain, 3)->size(), 2u);
  std::vector<std::uint32_t> visited;
  ASSERT_TRUE(store_->ForEachVersion(chain, [&](const VersionInfo& v) {
                      visited.push_back(v.seq);
                      return v.seq < 3;  // stops after the third
                    }).ok());
  EXPECT_EQ(visited, (std::vector<std::uint32_t>{1, 2, 3}));
  for (const VersionInfo& v : all) {
    EXPECT_EQ(*store_->ReadVersion(ns_, key, v.grain_id.substr(0, 7)),
              "v" + std::to_string(v.seq) + "\n");
    EXPECT_EQ(store_->FindChainVersion(chain, key, v.grain_id)->seq, v.seq);
  }
}

TEST_F(VersionLookupTest, AReplacedNodeReadsTheBodyItHeldNotTheChainsNewHead) {
  const std::string key = "/memories/t.md";
  ASSERT_TRUE(store_->PutFile(ns_, key, "first\n").has_value());
  ASSERT_TRUE(store_->PutFile(ns_, key, "what the old node held\n").has_value());
  auto old_node = store_->StatKey(ns_, key);
  ASSERT_TRUE(old_node.has_value()) << old_node.error().ToString();
  ASSERT_NE(old_node->body_id, 0);

  // A save through the mount: a temp file renamed over the file.
  auto root = store_->StatKey(ns_, "/memories");
  ASSERT_TRUE(root.has_value());
  auto tmp = store_->CreateNode(root->id, "t.md.tmp.1", NewNode{});
  ASSERT_TRUE(tmp.has_value()) << tmp.error().ToString();
  auto written = store_->WriteBody(tmp->id, "the replacing file, longer than the old one\n");
  ASSERT_TRUE(written.has_value()) << written.error().ToString();
  EXPECT_EQ(written->node.body_id, written->base.body);
  auto moved = store_->RenameNode(root->id, "t.md.tmp.1", root->id, "t.md", RenameMode::kReplace,
                                  Versioning::kVersioned);
  ASSERT_TRUE(moved.has_value()) << moved.error().ToString();
  ASSERT_EQ(moved->chain_id, old_node->chain_id);  // the chain went on in the new node
  EXPECT_TRUE(store_->GetNode(old_node->id).error().IsNotFound());
  EXPECT_EQ(Hist(key).back().size, 44u);

  auto held = store_->ReadChainBody(old_node->chain_id, old_node->body_id);
  ASSERT_TRUE(held.has_value()) << held.error().ToString();
  EXPECT_EQ(*held, "what the old node held\n");
  EXPECT_EQ(*store_->ReadChainBody(old_node->chain_id, 0), "");
}

TEST_F(VersionLookupTest, ABodyNoVersionOfTheChainHoldsIsNotRead) {
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/a.md", "a's body\n").has_value());
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/b.md", "b's body\n").has_value());
  auto a = store_->StatKey(ns_, "/memories/a.md");
  auto b = store_->StatKey(ns_, "/memories/b.md");
  ASSERT_TRUE(a.has_value() && b.has_value());
  EXPECT_TRUE(store_->ReadChainBody(a->chain_id, b->body_id).error().IsNotFound());

  // Purged: the body is gone, and nothing is read in its place.
  ASSERT_TRUE(store_->DeleteKey(ns_, "/memories/a.md").ok());
  ASSERT_TRUE(store_->Purge(ns_, "/memories/a.md").ok());
  EXPECT_TRUE(store_->ReadChainBody(a->chain_id, a->body_id).error().IsNotFound());
}

}  // namespace
}  // namespace grainstore
