#include "grain_id.h"

#include <string>

#include <gtest/gtest.h>

namespace grainstore {
namespace {

TEST(BodyHasherTest, FedInPiecesWithDigestsBetweenEqualsTheWholeBodysHash) {
  const std::string whole = std::string(300, 'a') + "appended\n" + std::string(5000, 'z');
  BodyHasher hasher;
  hasher.Update(std::string_view(whole).substr(0, 300));
  EXPECT_EQ(hasher.Digest(), HashBody(whole.substr(0, 300)));
  BodyHasher copy = hasher;  // how a delta continues its base's hash
  copy.Update(std::string_view(whole).substr(300));
  EXPECT_EQ(copy.Digest(), HashBody(whole));
  EXPECT_EQ(hasher.Digest(), HashBody(whole.substr(0, 300)));  // the original is untouched
  EXPECT_EQ(ToHex(HashBody("")),
            "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8");
}

}  // namespace
}  // namespace grainstore
