#include "history_names.h"

#include <gtest/gtest.h>

namespace fusefs {
namespace {

TEST(ExtensionTest, Cases) {
  EXPECT_EQ(Extension("notes.md"), ".md");
  EXPECT_EQ(Extension("a.tar.gz"), ".gz");
  EXPECT_EQ(Extension(".bashrc"), "");
  EXPECT_EQ(Extension("README"), "");
  EXPECT_EQ(Extension("trailing."), "");
  const std::string longest = "." + std::string(kMaxExtensionBytes - 1, 'x');
  EXPECT_EQ(Extension("a" + longest), longest);
  EXPECT_EQ(Extension("a" + longest + "x"), "");  // a version's name stays under 255 bytes
}

TEST(CompactUtcTest, Formats) {
  // 2026-11-30 08:45:12 UTC
  EXPECT_EQ(CompactUtc(1796028312LL * 1'000'000'000 + 123), "20261130T084512Z");
  EXPECT_EQ(CompactUtc(0), "19700101T000000Z");
}

TEST(VersionFileNameTest, SortsAndKeepsExtension) {
  grainstore::VersionInfo v;
  v.seq = 1;
  v.created_ns = 1796028312LL * 1'000'000'000;
  v.grain_id = "1a2b3c4d5e6f" + std::string(52, '0');
  EXPECT_EQ(VersionFileName(v, "notes.md"), "v000001-20261130T084512Z-1a2b3c4d.md");
  grainstore::VersionInfo w = v;
  w.seq = 12;
  w.created_ns = 0;  // an older clock must not change the order
  EXPECT_LT(VersionFileName(v, "notes.md"), VersionFileName(w, "notes.md"));
  EXPECT_EQ(VersionFileName(v, "Makefile"), "v000001-20261130T084512Z-1a2b3c4d");
}

TEST(VersionSeqOfNameTest, ReadsTheNumberEveryVersionNameStartsWith) {
  grainstore::VersionInfo v;
  v.created_ns = 1796028312LL * 1'000'000'000;
  v.grain_id = std::string(64, 'a');
  for (std::uint32_t seq : {1u, 42u, 999999u, 1000000u, 4294967295u}) {
    v.seq = seq;
    EXPECT_EQ(VersionSeqOfName(VersionFileName(v, "notes.md")), seq);
  }
  for (std::string_view name : {"", "v", "v000001", "v00001-x", "v000000-x", "x000001-x",
                                "v0000a1-x", "v4294967296-x", "V000001-x", "v-000001"}) {
    EXPECT_EQ(VersionSeqOfName(name), std::nullopt) << name;
  }
}

}  // namespace
}  // namespace fusefs
