// Store::ListTree: order, depth, the filter, and agreement with a listing
// built one directory at a time from ListChildren.
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "store_fixture.h"

namespace grainstore {
namespace {

using test::StoreFixture;

class StoreTreeTest : public StoreFixture {
 protected:
  void Put(const std::string& key, const std::string& body = "x\n") {
    ASSERT_TRUE(store_->PutFile(ns_, key, body).has_value()) << key;
  }
  std::vector<std::string> Paths(std::string_view dir, int depth,
                                 const Store::TreeFilter& keep = KeepAll) {
    auto tree = store_->ListTree(ns_, dir, depth, keep);
    EXPECT_TRUE(tree.has_value()) << tree.error().ToString();
    std::vector<std::string> paths;
    if (tree.has_value()) {
      for (const TreeEntry& e : *tree) paths.push_back(e.path);
    }
    return paths;
  }
  static bool KeepAll(std::string_view, NodeKind) { return true; }
};

// The memory tool's rule: no hidden names, no node_modules.
bool Listed(std::string_view name, NodeKind) {
  return !name.starts_with('.') && name != "node_modules";
}

TEST_F(StoreTreeTest, EachDirectoryComesBeforeWhatItHoldsAndSiblingsByName) {
  for (const char* key : {"/memories/a/x.md", "/memories/a/y/z.md", "/memories/a/y/deeper/w.md",
                          "/memories/a.txt", "/memories/a-b/q.md", "/memories/b.md",
                          "/memories/a/0.md"}) {
    Put(key);
  }
  // Key order would put "a-b" and "a.txt" ('-' and '.' sort below '/')
  // between "a" and "a/0.md".
  EXPECT_EQ(Paths("/memories", 2),
            (std::vector<std::string>{"a", "a/0.md", "a/x.md", "a/y", "a-b", "a-b/q.md", "a.txt",
                                      "b.md"}));
  EXPECT_EQ(Paths("/memories", 1), (std::vector<std::string>{"a", "a-b", "a.txt", "b.md"}));
  EXPECT_EQ(Paths("/memories", 4).size(), 11u);
  EXPECT_EQ(Paths("/memories/a", 1), (std::vector<std::string>{"0.md", "x.md", "y"}));
  // Nothing below a file or a missing key.
  EXPECT_TRUE(Paths("/memories/b.md", 2).empty());
  EXPECT_TRUE(Paths("/memories/none", 2).empty());
}

TEST_F(StoreTreeTest, ARefusedDirectoryIsLeftOutWithItsSubtreeButNotItsNeighbours) {
  for (const char* key : {"/memories/node_modules/n.js", "/memories/node_modules.json",
                          "/memories/node_modules-old/k.md", "/memories/.git/HEAD",
                          "/memories/.gitignore", "/memories/git/notes.md",
                          "/memories/sub/.hidden/h.md", "/memories/sub/seen.md"}) {
    Put(key);
  }
  EXPECT_EQ(Paths("/memories", 2, Listed),
            (std::vector<std::string>{"git", "git/notes.md", "node_modules-old",
                                      "node_modules-old/k.md", "node_modules.json", "sub",
                                      "sub/seen.md"}));
}

TEST_F(StoreTreeTest, EntriesCarryKindSizeAndIdAndStayInTheirNamespace) {
  Put("/memories/d/f.md", "12345");
  auto other = store_->Namespace("other");
  ASSERT_TRUE(other.has_value());
  ASSERT_TRUE(store_->PutFile(*other, "/memories/d/g.md", "x").has_value());
  auto tree = store_->ListTree(ns_, "/memories", 2, KeepAll);
  ASSERT_TRUE(tree.has_value());
  ASSERT_EQ(tree->size(), 2u);
  EXPECT_EQ((*tree)[0].kind, NodeKind::kDirectory);
  EXPECT_EQ((*tree)[1].kind, NodeKind::kFile);
  EXPECT_EQ((*tree)[1].size, 5u);
  EXPECT_EQ((*tree)[1].id, store_->StatKey(ns_, "/memories/d/f.md")->id);
  // An edit's new size is what the next listing shows.
  ASSERT_TRUE(store_->PutFile(ns_, "/memories/d/f.md", "1234567").has_value());
  EXPECT_EQ((*store_->ListTree(ns_, "/memories", 2, KeepAll))[1].size, 7u);
}

// Random trees of names built from the bytes that sort near '/': ListTree
// gives what a walk of ListChildren, one directory at a time, gives.
TEST_F(StoreTreeTest, AgreesWithAWalkOfListChildren) {
  const std::vector<std::string> names = {"a", "a.b", "a-b", "a b", "a0", "b", "\xc3\xa9",
                                          "A", "_", "~", ".h", "node_modules"};
  std::mt19937 rng(7);
  std::vector<std::string> dirs = {"/memories"};
  for (int i = 0; i < 120; ++i) {
    const std::string parent = dirs[rng() % dirs.size()];
    const std::string key = parent + "/" + names[rng() % names.size()];
    if (store_->StatKey(ns_, key).has_value()) continue;
    if (rng() % 3 == 0) {
      ASSERT_TRUE(store_->MakeDirs(ns_, key).ok()) << key;
      dirs.push_back(key);
    } else {
      Put(key, std::string(rng() % 50, 'x'));
    }
  }
  for (int depth = 1; depth <= 3; ++depth) {
    std::vector<std::string> walked;
    std::function<void(NodeId, const std::string&, int)> walk = [&](NodeId dir,
                                                                   const std::string& rel,
                                                                   int level) {
      auto entries = store_->ListChildren(dir);
      ASSERT_TRUE(entries.has_value());
      for (const NodeInfo& e : *entries) {
        if (!Listed(e.name, e.kind)) continue;
        walked.push_back(rel + e.name);
        if (e.kind == NodeKind::kDirectory && level < depth) walk(e.id, rel + e.name + "/", level + 1);
      }
    };
    walk(*store_->RootId(ns_), "", 1);
    EXPECT_EQ(Paths("/memories", depth, Listed), walked) << "depth " << depth;
  }
}

}  // namespace
}  // namespace grainstore
