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

// The canonical encodings, as docs/storage-format.md writes them (the values
// were computed apart, with Python's hashlib.blake2b). Without a salt the id
// is the v1 one, so the ids of grains written before schema v6 keep their
// meaning; with one it is the v2 one.
TEST(GrainIdTest, ASaltSelectsTheV2EncodingAndNoSaltKeepsV1) {
  const std::string body_hash = HashBody("tea\n");
  std::string salt;
  for (char c = 0; c < 16; ++c) salt.push_back(c);
  GrainFields fields{.type = GrainType::kFact, .ns = "default", .subject = "/memories/prefs.md",
                     .relation = "memory_file", .object = "", .body_hash = body_hash,
                     .chain_seq = 1, .created_ns = 1700000000000000000};
  EXPECT_EQ(ToHex(ComputeGrainId(fields)),
            "4e3f26cd8f013ff97e4cd6c98858bfce20e9a211563d7445c3924ff1115e9b2e");
  fields.salt = salt;
  EXPECT_EQ(ToHex(ComputeGrainId(fields)),
            "f6271f74d34087b4a81ced5cd8c65f18c69c9a9eeb2d01c7d174bd878fbfba7b");
}

}  // namespace
}  // namespace grainstore
