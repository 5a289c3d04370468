// Store::ReadChainBody: the body a node held when last seen, read after the
// node is replaced by a rename (its chain goes on in the node that replaced
// it) or deleted, and NodeInfo::body_id, which names that body.
#include <string>

#include <gtest/gtest.h>

#include "grainstore/store.h"
#include "store_fixture.h"

namespace grainstore {
namespace {

using test::StoreFixture;
using ChainBodyTest = StoreFixture;

TEST_F(ChainBodyTest, AReplacedNodeReadsTheBodyItHeldNotTheChainsNewHead) {
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

TEST_F(ChainBodyTest, ABodyNoVersionOfTheChainHoldsIsNotRead) {
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
