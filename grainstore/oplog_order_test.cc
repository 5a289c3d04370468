// The op-log order of a directory delete: a valid replay order.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "grainstore/store.h"
#include "store_fixture.h"

namespace grainstore {
namespace {

using OplogOrderTest = test::StoreFixture;

// Deleting a directory logs everything under each directory before that
// directory's rmdir, so replaying the log never removes a non-empty one.
TEST_F(OplogOrderTest, DirectoryDeleteLogsInReplayOrder) {
  for (const char* key : {"/memories/a/x.md", "/memories/a/b/y.md", "/memories/a/b/c/z.md",
                          "/memories/a/b/w.md", "/memories/a/v.md"}) {
    ASSERT_TRUE(store_->PutFile(ns_, key, "x\n").has_value()) << key;
  }
  auto before = store_->ReadOps(ns_, 0, 1000);
  ASSERT_TRUE(before.has_value());
  ASSERT_TRUE(store_->DeleteKey(ns_, "/memories/a").ok());
  auto ops = store_->ReadOps(ns_, before->back().seq, 1000);
  ASSERT_TRUE(ops.has_value());
  ASSERT_EQ(ops->size(), 8u);  // five deletes, three rmdirs
  std::vector<std::string> rmdirs;
  for (std::size_t i = 0; i < ops->size(); ++i) {
    const OpRecord& op = (*ops)[i];
    if (op.op != "rmdir") continue;
    rmdirs.push_back(op.subject);
    for (std::size_t j = i + 1; j < ops->size(); ++j) {
      EXPECT_FALSE((*ops)[j].subject.starts_with(op.subject + "/"))
          << (*ops)[j].op << " " << (*ops)[j].subject << " after rmdir " << op.subject;
    }
  }
  std::sort(rmdirs.begin(), rmdirs.end());
  EXPECT_EQ(rmdirs, (std::vector<std::string>{"/memories/a", "/memories/a/b",
                                              "/memories/a/b/c"}));
  EXPECT_EQ(ops->back().op, "rmdir");
  EXPECT_EQ(ops->back().subject, "/memories/a");
}

}  // namespace
}  // namespace grainstore
