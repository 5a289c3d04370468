#include "grain_id.h"

#include <sys/wait.h>
#include <unistd.h>

#include <set>
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


// Salts never repeat: not within a source, not between two sources, and not
// between a parent and the child it forks (each draws its own key).
TEST(SaltSourceTest, SaltsDoNotRepeatAcrossSourcesOrAFork) {
  SaltSource a, b;
  std::set<std::string> seen;
  auto next = [](SaltSource& s) {
    unsigned char salt[kGrainSaltBytes];
    s.Next(salt);
    return std::string(reinterpret_cast<const char*>(salt), sizeof salt);
  };
  for (int i = 0; i < 1000; ++i) {
    EXPECT_TRUE(seen.insert(next(a)).second);
    EXPECT_TRUE(seen.insert(next(b)).second);
  }
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string child = next(a);
    _exit(write(fds[1], child.data(), child.size()) == static_cast<ssize_t>(child.size()) ? 0 : 1);
  }
  close(fds[1]);
  std::string child(kGrainSaltBytes, '\0');
  ASSERT_EQ(read(fds[0], child.data(), child.size()), static_cast<ssize_t>(child.size()));
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(seen.insert(child).second);
  EXPECT_TRUE(seen.insert(next(a)).second);  // the parent's next one
}

}  // namespace
}  // namespace grainstore
