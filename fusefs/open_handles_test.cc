#include "open_handles.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace fusefs {
namespace {

// Counts live instances, so a test can see which were freed.
struct Counted {
  explicit Counted(int* live) : live(live) { ++*live; }
  ~Counted() { --*live; }
  int* live;
};

TEST(OpenHandlesTest, AHandleGivesBackItsObjectUntilRemoved) {
  int live = 0;
  OpenHandles handles;
  const std::uint64_t a = handles.Add(std::make_unique<std::string>("version body"));
  const std::uint64_t b = handles.Add(std::make_unique<Counted>(&live));
  EXPECT_EQ(*OpenHandles::Get<std::string>(a), "version body");
  EXPECT_EQ(OpenHandles::Get<Counted>(b)->live, &live);
  EXPECT_EQ(handles.size(), 2u);
  EXPECT_EQ(live, 1);
  handles.Remove(b);
  EXPECT_EQ(live, 0);
  EXPECT_EQ(handles.size(), 1u);
  handles.Remove(b);  // a second release of one handle frees nothing more
  EXPECT_EQ(handles.size(), 1u);
}

TEST(OpenHandlesTest, HandlesNeverReleasedAreFreedWithTheRegistry) {
  int live = 0;
  {
    OpenHandles handles;
    handles.Add(std::make_unique<Counted>(&live));
    handles.Add(std::make_unique<Counted>(&live));
    EXPECT_EQ(live, 2);
  }
  EXPECT_EQ(live, 0);
}

}  // namespace
}  // namespace fusefs
