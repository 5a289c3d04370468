#include "sent_back.h"

#include <gtest/gtest.h>

namespace fusefs {
namespace {

TEST(SentBackTest, EachThreadIsSentBackOnceAndItsRetryLetIn) {
  SentBack sent(1000);
  EXPECT_FALSE(sent.Admit(7, 0));    // sent back
  EXPECT_FALSE(sent.Admit(8, 10));   // another thread, in flight at once: sent back too
  EXPECT_TRUE(sent.Admit(7, 20));    // 7's retry, whichever file it reaches
  EXPECT_FALSE(sent.Admit(7, 30));   // used up: a later open is sent back again
  EXPECT_TRUE(sent.Admit(8, 40));
}

TEST(SentBackTest, ARetryThatEndsElsewhereUsesThePassUp) {
  SentBack sent(1000);
  EXPECT_FALSE(sent.Admit(7, 0));
  sent.UseUp(7);                     // its retry opened a file nobody changed
  EXPECT_FALSE(sent.Admit(7, 10));   // a later open by a stale name is sent back
  sent.UseUp(9);                     // no pass: nothing happens
  EXPECT_TRUE(sent.Admit(7, 20));
}

TEST(SentBackTest, ARetryThatFindsNothingSetsThePassAside) {
  SentBack sent(1000);
  EXPECT_FALSE(sent.Admit(7, 0));
  sent.Looked(7, 1, "dir", true);    // the retry's walk finds the directory...
  sent.Looked(7, 5, "f.md", false);  // ...and no f.md: ENOENT
  sent.Looked(7, 1, "g.md", true);   // the thread looks up another name
  EXPECT_FALSE(sent.Admit(7, 10));   // an open by some other stale name: sent back
}

TEST(SentBackTest, TheSameNameFoundAgainRestoresThePass) {
  SentBack sent(1000);
  EXPECT_FALSE(sent.Admit(7, 0));
  sent.Looked(7, 5, "f.md", false);  // revalidation finds nothing; the kernel drops
  sent.Looked(7, 5, "f.md", true);   // the name, looks it up again and finds a file
  EXPECT_TRUE(sent.Admit(7, 10));
}

TEST(SentBackTest, ARetryThatMakesTheNameItFoundMissingIsLetIn) {
  SentBack sent(1000);
  EXPECT_FALSE(sent.Admit(7, 0, 5, "new.md"));  // a create in a directory moved lately
  sent.Looked(7, 1, "dir", true);                // the retry finds the directory by a name
  sent.Looked(7, 5, "new.md", false);            // that still leads to it, new.md missing
  EXPECT_TRUE(sent.Admit(7, 10, 5, "new.md"));   // the create it looked up for
  EXPECT_FALSE(sent.Admit(7, 20, 5, "new.md"));  // used up
}

TEST(SentBackTest, ARetryThatFoundAnotherNameMissingIsNotLetIn) {
  SentBack sent(1000);
  EXPECT_FALSE(sent.Admit(7, 0, 5, "new.md"));
  sent.Looked(7, 1, "dir", false);               // by the old name: ENOENT, nothing sent
  EXPECT_FALSE(sent.Admit(7, 10, 5, "new.md"));  // a later create there: sent back
}

TEST(SentBackTest, APassLastsTheWindow) {
  SentBack sent(1000);
  EXPECT_FALSE(sent.Admit(7, 0));
  EXPECT_FALSE(sent.Admit(7, 1000));  // expired: sent back anew
  EXPECT_TRUE(sent.Admit(7, 1500));
}

TEST(SentBackTest, PassesAreBounded) {
  SentBack sent(1'000'000);
  for (std::int64_t tid = 0; tid < static_cast<std::int64_t>(SentBack::kMaxPasses) + 1; ++tid) {
    EXPECT_FALSE(sent.Admit(tid, tid));
  }
  EXPECT_FALSE(sent.Admit(0, 1000));  // the oldest pass was dropped
  EXPECT_TRUE(sent.Admit(2, 1001));   // younger ones are kept
}

}  // namespace
}  // namespace fusefs
