#include "inode_table.h"

#include <gtest/gtest.h>

namespace fusefs {
namespace {

grainstore::NodeInfo Node(grainstore::NodeId id, std::int64_t ctime_ns, std::uint64_t size) {
  grainstore::NodeInfo n;
  n.id = id;
  n.ctime_ns = ctime_ns;
  n.size = size;
  return n;
}

// An unloaded body gives its memory back: the daemon's memory stays within
// the kept bodies' bounds however many large files the kernel keeps inodes of.
TEST(InodeTableTest, UnloadFreesTheBody) {
  Inode inode(Node(7, 1, 4 << 20));
  inode.data.assign(std::size_t{4} << 20, 'x');
  inode.loaded = true;
  inode.Unload();
  EXPECT_FALSE(inode.loaded);
  EXPECT_TRUE(inode.data.empty());
  EXPECT_LT(inode.data.capacity(), 64u);
}

TEST(InodeTableTest, LookupCountsAndForget) {
  InodeTable table;
  table.Remember(Node(7, 1, 0));
  table.Remember(Node(7, 1, 0));
  ASSERT_NE(table.Find(7), nullptr);
  table.Forget(7, 1);
  EXPECT_NE(table.Find(7), nullptr);
  table.Forget(7, 1);
  EXPECT_EQ(table.Find(7), nullptr);
}

TEST(InodeTableTest, OpenHandleKeepsInodeAfterForget) {
  InodeTable table;
  auto inode = table.Remember(Node(3, 1, 0));
  {
    std::lock_guard<std::mutex> lock(inode->mu);
    inode->handles = 1;
  }
  table.Forget(3, 1);
  EXPECT_NE(table.Find(3), nullptr);
  {
    std::lock_guard<std::mutex> lock(inode->mu);
    inode->handles = 0;
  }
  table.MaybeErase(3);
  EXPECT_EQ(table.Find(3), nullptr);
}

TEST(InodeTableTest, PinnedRootSurvivesForget) {
  InodeTable table;
  table.Pin(Node(1, 1, 0));
  table.Forget(1, 1000);
  EXPECT_NE(table.Find(1), nullptr);
}

TEST(InodeTableTest, RefreshNeverStepsBackOrOverDirtyDraft) {
  InodeTable table;
  auto inode = table.Remember(Node(5, 10, 4));
  table.Remember(Node(5, 5, 99));  // an older snapshot
  EXPECT_EQ(inode->info.size, 4u);
  table.Remember(Node(5, 20, 8));  // newer
  EXPECT_EQ(inode->info.size, 8u);
  inode->dirty = true;
  table.Remember(Node(5, 30, 1));
  EXPECT_EQ(inode->info.size, 8u);
}

TEST(InodeTableTest, DraftHandlesAndOwedErrors) {
  Inode inode(Node(5, 1, 0));
  inode.NoteChange(4);
  inode.NoteChange(9);
  inode.NoteChange(4);
  inode.NoteChange(0);  // a path truncate: no handle
  EXPECT_EQ(inode.draft_handles, (std::vector<std::uint64_t>{4, 9}));
  inode.owed_errors = {{4, 28}, {9, 5}};
  EXPECT_EQ(inode.TakeOwedError(4), 28);
  EXPECT_EQ(inode.TakeOwedError(4), 0);  // once
  inode.ForgetHandle(9);
  EXPECT_EQ(inode.TakeOwedError(9), 0);
  EXPECT_EQ(inode.draft_handles, (std::vector<std::uint64_t>{4}));
}

TEST(InodeTableTest, ADraftIsOneHandlesOwnOnlyWhileItHoldsThatHandlesChangesAlone) {
  Inode inode(Node(5, 1, 0));
  EXPECT_FALSE(inode.DraftIsOwnedBy(4));  // nothing written: a close saves nobody's change
  inode.NoteChange(4);
  EXPECT_TRUE(inode.DraftIsOwnedBy(4));
  EXPECT_FALSE(inode.DraftIsOwnedBy(9));  // 9 closing saves 4's change
  EXPECT_FALSE(inode.DraftIsOwnedBy(0));
  inode.NoteChange(9);
  EXPECT_FALSE(inode.DraftIsOwnedBy(4));
  EXPECT_FALSE(inode.DraftIsOwnedBy(9));
  inode.ClearDraftHandles();  // sealed
  inode.NoteChange(9);
  EXPECT_TRUE(inode.DraftIsOwnedBy(9));
  inode.NoteChange(0);  // a path truncate
  EXPECT_FALSE(inode.DraftIsOwnedBy(9));
  inode.ClearDraftHandles();
  inode.NoteChange(4);
  inode.NoteChange(9);
  inode.ForgetHandle(4);  // released with its change unsealed: still in the draft
  EXPECT_FALSE(inode.DraftIsOwnedBy(9));
}

}  // namespace
}  // namespace fusefs
