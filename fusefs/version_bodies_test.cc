#include "version_bodies.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fusefs {
namespace {

TEST(VersionBodiesTest, OpensOfOneVersionShareOneCopy) {
  VersionBodies bodies;
  EXPECT_EQ(bodies.Find("aa"), nullptr);
  VersionBodies::Body first = bodies.Share("aa", "version one");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(*first, "version one");
  VersionBodies::Body second = bodies.Find("aa");
  EXPECT_EQ(second.get(), first.get());  // the same bytes, not a copy
  EXPECT_EQ(bodies.Find("bb"), nullptr);
  EXPECT_EQ(bodies.held(), 1u);
}

TEST(VersionBodiesTest, AnOpenThatRacedAnotherGetsTheCopyKeptFirst) {
  VersionBodies bodies;
  VersionBodies::Body first = bodies.Share("aa", "version one");
  VersionBodies::Body raced = bodies.Share("aa", "read again");
  EXPECT_EQ(raced.get(), first.get());
  EXPECT_EQ(*raced, "version one");
}

TEST(VersionBodiesTest, TheCopyGoesWithTheLastHandle) {
  VersionBodies bodies;
  VersionBodies::Body a = bodies.Share("aa", "one");
  VersionBodies::Body b = bodies.Find("aa");
  a.reset();
  EXPECT_EQ(bodies.held(), 1u);
  std::weak_ptr<const std::string> watch = b;
  b.reset();
  EXPECT_TRUE(watch.expired());  // freed at once, not kept by the registry
  EXPECT_EQ(bodies.held(), 0u);
  EXPECT_EQ(bodies.Find("aa"), nullptr);
  // A later open reads the version again.
  EXPECT_EQ(*bodies.Share("aa", "one again"), "one again");
}

TEST(VersionBodiesTest, VersionsNoHandleHoldsAreForgotten) {
  VersionBodies bodies;
  std::vector<VersionBodies::Body> open;
  for (int i = 0; i < 10000; ++i) {
    VersionBodies::Body b = bodies.Share("v" + std::to_string(i), "body");
    if (i % 1000 == 0) open.push_back(b);  // the other handles are released at once
  }
  EXPECT_EQ(bodies.held(), open.size());
  EXPECT_LE(bodies.remembered(), 128u);  // not one entry per version ever opened
  for (std::size_t k = 0; k < open.size(); ++k) {
    EXPECT_EQ(bodies.Find("v" + std::to_string(k * 1000)).get(), open[k].get());
  }
}

}  // namespace
}  // namespace fusefs
