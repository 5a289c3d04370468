#include "versioning_policy.h"

#include <gtest/gtest.h>

#include <string>

namespace fusefs {
namespace {

using grainstore::Versioning;

TEST(IsTempNameTest, EditorAndToolDroppings) {
  const char* temps[] = {
      "notes.md.swp", "x.swo", "x.swx", ".notes.md.swp", ".notes.md.swn", ".a.swa",
      "4913", "5036", "4999", "49130", "notes.md~", "~", "#notes.md#", "##",
      ".#notes.md", "notes.md___jb_tmp___", "notes.md___jb_old___",
      ".goutputstream-AB12CD", "sedAb12Cd", "sed000000", "x.tmp", ".tmp",
      "notes.md.tmp.1234.1700000000000", "settings.json.vsctmp",
      ".~lock.report.odt#", "tmpab_3x9zq", "tmp.NbZgMbDQgz", "notes.md.bak", "notes.md.orig",
      ".tmpAbC123", ".tmp5xQz9k", "%tmp%a%b.md.swp",
      "zi1j6wpN", "ziyOFmIa", "f.md.rwJBXZY", "notes.md.oCkteJv", "a.iAb12Cd", "a.p0aZ9yQ",
      "zikxcsdh", "ziplines", "zi123456",
  };
  for (const char* name : temps) EXPECT_TRUE(IsTempName(name)) << name;
}

TEST(IsTempNameTest, RealFilesStayVersioned) {
  const char* real[] = {
      "notes.md", "Cargo.lock", "yarn.lock", "index.lock.md", "swp", ".swp.md",
      "4912", "123", "0001", "20261130", "sed", "sedabc", "sed1234567",
      "tmp", "tmpfile.txt", "tmpABCDEFGH", "tmp.notes.md", "tmp.NbZgMbDQg", "tmp.properties", "tmp.1764680000", "#notes.md", "notes#", "a.tmpl",
      "template", ".~lock.odt", "x.vsctmp.md", "README", ".bashrc", "bak.md", "a.baked",
      ".tmpfiles", ".tmp123456", ".tmpAbC12", ".tmpAbC1234", ".tmpAb-123", "%", "%%",
      "%notes.md", "50%off.md", "a%b%c", "%E2%9C%93 done%.md", "%home%me%notes.md",
      "zip.json", "zi1j6wp", "zi1j6wpNx", "x.install", "a.p123456",
      "a.rAb12C", "a.xAb12Cd", ".rAb12Cd",
  };
  for (const char* name : real) EXPECT_FALSE(IsTempName(name)) << name;
}

// The price of matching GNU sed's mkstemp names by shape: a nine-letter name
// starting with "sed" and no extension is taken for a temp file.
TEST(IsTempNameTest, SedPatternIsByShape) { EXPECT_TRUE(IsTempName("seduction")); }

TEST(IsInsideVcsDirTest, Segments) {
  EXPECT_TRUE(IsInsideVcsDir("/memories/.git"));
  EXPECT_TRUE(IsInsideVcsDir("/memories/repo/.git/refs/heads"));
  EXPECT_TRUE(IsInsideVcsDir("/memories/repo/.hg/store"));
  EXPECT_TRUE(IsInsideVcsDir("/memories/repo/.svn/pristine/ab"));
  EXPECT_TRUE(IsInsideVcsDir("/memories/repo/.bzr/checkout"));
  EXPECT_TRUE(IsInsideVcsDir("/memories/repo/.jj/repo/store"));
  EXPECT_FALSE(IsInsideVcsDir("/memories"));
  EXPECT_FALSE(IsInsideVcsDir("/memories/.github"));
  EXPECT_TRUE(IsInsideVcsDir("/memories/my.git"));  // a bare repository
  EXPECT_TRUE(IsInsideVcsDir("/memories/srv/repo.git/objects/pack"));
  EXPECT_FALSE(IsInsideVcsDir("/memories/my.git.bak"));
  EXPECT_FALSE(IsInsideVcsDir("/memories/my.gitx/y"));
  EXPECT_FALSE(IsInsideVcsDir("/memories/a/.gitignore"));
  EXPECT_FALSE(IsInsideVcsDir("/memories/.gitx/y"));
  EXPECT_FALSE(IsInsideVcsDir("/memories/.hgx/y"));
  EXPECT_FALSE(IsInsideVcsDir("/memories/svn/y"));
}

TEST(IsSuffixedCopyOfTest, AtomicSavesOfTheTarget) {
  EXPECT_TRUE(IsSuffixedCopyOf("notes.md.3482157740", "notes.md"));    // write-file-atomic
  EXPECT_TRUE(IsSuffixedCopyOf("notes.md123456789", "notes.md"));      // Go's CreateTemp
  EXPECT_TRUE(IsSuffixedCopyOf(".notes.md123456789", "notes.md"));     // renameio
  EXPECT_TRUE(IsSuffixedCopyOf("notes.md.oCkteJv", "notes.md"));       // GNU patch
  EXPECT_TRUE(IsSuffixedCopyOf("notes.md20261205-42-1x9abc", "notes.md"));  // Ruby
  EXPECT_TRUE(IsSuffixedCopyOf("notes.md.aBcDeF", "notes.md"));        // Qt's QSaveFile
  EXPECT_TRUE(IsSuffixedCopyOf("..bashrc123", ".bashrc"));
  EXPECT_TRUE(IsSuffixedCopyOf(".bashrc.1", ".bashrc"));
  EXPECT_TRUE(IsSuffixedCopyOf("notes.md.new", "notes.md"));
}

TEST(IsSuffixedCopyOfTest, OtherNamesAreNot) {
  EXPECT_FALSE(IsSuffixedCopyOf("notes.md", "notes.md"));        // no suffix
  EXPECT_FALSE(IsSuffixedCopyOf("notesbook", "notes"));          // letters only
  EXPECT_FALSE(IsSuffixedCopyOf("other.md.1", "notes.md"));
  EXPECT_FALSE(IsSuffixedCopyOf("notes.md 1", "notes.md"));      // a space
  EXPECT_FALSE(IsSuffixedCopyOf("notes.md.\xc3\xa9" "1", "notes.md"));
  EXPECT_FALSE(IsSuffixedCopyOf("notes.md." + std::string(64, '1'), "notes.md"));
  EXPECT_TRUE(IsSuffixedCopyOf("notes.md." + std::string(63, '1'), "notes.md"));
  EXPECT_FALSE(IsSuffixedCopyOf("x.md.1", ""));
  EXPECT_FALSE(IsSuffixedCopyOf("..notes.md1", "notes.md"));      // two dots
  EXPECT_FALSE(IsSuffixedCopyOf("notes", "notes.md"));            // shorter
}

TEST(IsTempCopyOfTest, RsyncsCopyOfTheTargetOnly) {
  EXPECT_TRUE(IsTempCopyOf(".notes.md.Xy3aQ9", "notes.md"));
  EXPECT_TRUE(IsTempCopyOf(".a.abcdef", "a"));
  EXPECT_FALSE(IsTempCopyOf(".notes.md.Xy3aQ9", "other.md"));  // another file's
  EXPECT_FALSE(IsTempCopyOf("notes.md.Xy3aQ9", "notes.md"));   // no leading dot
  EXPECT_FALSE(IsTempCopyOf(".notes.md.Xy3aQ", "notes.md"));   // five characters
  EXPECT_FALSE(IsTempCopyOf(".notes.md.Xy3aQ99", "notes.md"));  // seven
  EXPECT_FALSE(IsTempCopyOf(".notes.md-Xy3aQ9", "notes.md"));
  EXPECT_FALSE(IsTempCopyOf(".notes.md.Xy3a_9", "notes.md"));
  EXPECT_FALSE(IsTempCopyOf("..Xy3aQ9", ""));
}

// Names as rsync 3.2 shortens them (read back from its renameat calls).
TEST(IsTempCopyOfTest, RsyncsShortenedNames) {
  EXPECT_TRUE(IsTempCopyOf(".hidden.2BHsmn", ".hidden"));  // its own dot is dropped
  EXPECT_FALSE(IsTempCopyOf("..hidden.2BHsmn", ".hidden"));
  EXPECT_TRUE(IsTempCopyOf(".trail.CabyXf", "trail."));  // a trailing dot too
  const std::string b246(246, 'b');
  EXPECT_TRUE(IsTempCopyOf("." + b246 + ".RHQ6ry", b246));  // fits whole
  EXPECT_TRUE(IsTempCopyOf("." + b246 + ".RHQ6ry", b246 + "bbbb"));  // cut to 246 bytes
  EXPECT_FALSE(IsTempCopyOf("." + b246 + "bbbb.RHQ6ry", b246 + "bbbb"));
  EXPECT_FALSE(IsTempCopyOf("." + b246 + ".RHQ6ry", "c" + b246));  // another name's
  std::string e_acute;
  for (int i = 0; i < 127; ++i) e_acute += "\xc3\xa9";
  // 'a' then 127 two-byte characters: the cut at 246 falls inside them, and
  // every character byte before it goes too.
  EXPECT_TRUE(IsTempCopyOf(".a.lEVYrZ", "a" + e_acute));
  EXPECT_FALSE(IsTempCopyOf(".a" + e_acute.substr(0, 244) + ".lEVYrZ", "a" + e_acute));
  // Cut before a plain byte: the characters before the cut stay.
  const std::string mixed = "a" + e_acute.substr(0, 244) + std::string(20, 'z');
  EXPECT_TRUE(IsTempCopyOf(".a" + e_acute.substr(0, 244) + "z.lEVYrZ", mixed));
  // A name of characters alone, past 246 bytes: nothing of it stays, and the
  // copy is a dot and the six characters.
  std::string cjk;
  for (int i = 0; i < 84; ++i) cjk += "\xe6\x96\x87";
  EXPECT_TRUE(IsTempCopyOf(".aaweDv", cjk));
  EXPECT_TRUE(IsTempCopyOf(".yFraJL", e_acute));
  EXPECT_FALSE(IsTempCopyOf(".aaweD", cjk));
  EXPECT_FALSE(IsTempCopyOf(".aawe_v", cjk));
  EXPECT_FALSE(IsTempCopyOf(".aaweDv", "short.md"));  // a name that is kept
}

TEST(IsTempCopyMoveTest, ToItsNameOrIntoTheDelayDirBelow) {
  EXPECT_TRUE(IsTempCopyMove("/memories/a", ".f.md.Xy3aQ9", "/memories/a", "f.md"));
  EXPECT_TRUE(IsTempCopyMove("/memories/a", ".f.md.Xy3aQ9", "/memories/a/.~tmp~", "f.md"));
  EXPECT_TRUE(IsTempCopyMove("/memories", ".f.md.Xy3aQ9", "/memories/.~tmp~", "f.md"));
  EXPECT_FALSE(IsTempCopyMove("/memories/a", ".f.md.Xy3aQ9", "/memories/b", "f.md"));
  EXPECT_FALSE(IsTempCopyMove("/memories/a", ".f.md.Xy3aQ9", "/memories/a/x.~tmp~", "f.md"));
  EXPECT_FALSE(IsTempCopyMove("/memories/a", ".f.md.Xy3aQ9", "/memories/a/b/.~tmp~", "f.md"));
  EXPECT_FALSE(IsTempCopyMove("/memories/a", ".f.md.Xy3aQ9", "/memories/a/.~tmp~", "g.md"));
}

TEST(IsTempDirCopyOfTest, TheNameAndSixLettersOrDigitsWithoutALeadingDot) {
  EXPECT_TRUE(IsTempDirCopyOf("notes.md.Xy3aQ9", "notes.md"));
  EXPECT_TRUE(IsTempDirCopyOf(".bashrc.Xy3aQ9", ".bashrc"));
  EXPECT_FALSE(IsTempDirCopyOf(".notes.md.Xy3aQ9", "notes.md"));
  EXPECT_FALSE(IsTempDirCopyOf("notes.md.Xy3aQ", "notes.md"));
  EXPECT_FALSE(IsTempDirCopyOf("notes.md.Xy3-Q9", "notes.md"));
  EXPECT_FALSE(IsTempDirCopyOf("notes.mdXXy3aQ9", "notes.md"));
  EXPECT_FALSE(IsTempDirCopyOf("other.md.Xy3aQ9", "notes.md"));
  EXPECT_FALSE(IsTempDirCopyOf(".Xy3aQ9", ""));
}

TEST(PatchTempBaseTest, NameDotLetterAndSixLettersOrDigits) {
  EXPECT_EQ(PatchTempBase("notes.md.oCkteJv"), "notes.md");
  EXPECT_EQ(PatchTempBase("f.md.rkxcsdh"), "f.md");  // all lower-case: looked beside
  EXPECT_EQ(PatchTempBase("x.indexed"), "x");
  EXPECT_EQ(PatchTempBase("a.p123456"), "a");
  EXPECT_EQ(PatchTempBase(".oAbCdEf"), "");
  EXPECT_EQ(PatchTempBase("a.xAb12Cd"), "");
  EXPECT_EQ(PatchTempBase("a.oAb-2Cd"), "");
  EXPECT_EQ(PatchTempBase("a.oAb12C"), "");
  EXPECT_EQ(PatchTempBase("notes.md"), "");
}

TEST(SqliteSidecarBaseTest, JournalWalAndShm) {
  EXPECT_EQ(SqliteSidecarBase("notes.db-journal"), "notes.db");
  EXPECT_EQ(SqliteSidecarBase("x.sqlite-wal"), "x.sqlite");
  EXPECT_EQ(SqliteSidecarBase("db-shm"), "db");
  EXPECT_EQ(SqliteSidecarBase("-wal"), "");
  EXPECT_EQ(SqliteSidecarBase("journal.md"), "");
  EXPECT_EQ(SqliteSidecarBase("notes.db"), "");
}

TEST(VersioningForTest, Combines) {
  EXPECT_EQ(VersioningFor("/memories", "notes.md"), Versioning::kVersioned);
  EXPECT_EQ(VersioningFor("/memories", "Cargo.lock"), Versioning::kVersioned);
  EXPECT_EQ(VersioningFor("/memories", ".git"), Versioning::kUnversioned);
  EXPECT_EQ(VersioningFor("/memories/.git", "HEAD"), Versioning::kUnversioned);
  EXPECT_EQ(VersioningFor("/memories/.git/objects/ab", "tmp_obj_x"), Versioning::kUnversioned);
  EXPECT_EQ(VersioningFor("/memories/sub", "notes.md.swp"), Versioning::kUnversioned);
  EXPECT_EQ(VersioningFor("/memories/.gitignore.d", "a"), Versioning::kVersioned);
  EXPECT_EQ(VersioningFor("/memories/a/.~tmp~", "f.md"), Versioning::kUnversioned);
  EXPECT_EQ(VersioningFor("/memories/a/x.~tmp~", "f.md"), Versioning::kVersioned);
  EXPECT_EQ(VersioningFor("/memories/r/.hg", "dirstate"), Versioning::kUnversioned);
  EXPECT_EQ(VersioningFor("/memories/r", ".hgignore"), Versioning::kVersioned);
}

}  // namespace
}  // namespace fusefs
