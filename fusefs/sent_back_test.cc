#include "sent_back.h"

#include <gtest/gtest.h>

namespace fusefs {
namespace {

TEST(SentBackTest, EachThreadIsSentBackOnceAndItsRetryLetIn) {
  SentBack sent(1000);
  EXPECT_FALSE(sent.Admit(7, 2, 0));    // sent back
  EXPECT_FALSE(sent.Admit(8, 2, 10));   // another thread, in flight at once: sent back too
  EXPECT_TRUE(sent.Admit(7, 2, 20));    // 7's retry
  EXPECT_FALSE(sent.Admit(7, 2, 30));   // used up: a later open is sent back again
  EXPECT_TRUE(sent.Admit(8, 2, 40));
}

TEST(SentBackTest, ARecordIsForOneFileAndLastsTheWindow) {
  SentBack sent(1000);
  EXPECT_FALSE(sent.Admit(7, 2, 0));
  EXPECT_FALSE(sent.Admit(7, 3, 5));     // another file: its own record
  EXPECT_TRUE(sent.Admit(7, 3, 900));    // within 3's window
  EXPECT_FALSE(sent.Admit(7, 2, 1000));  // the record of 2 has expired: sent back anew
  EXPECT_TRUE(sent.Admit(7, 2, 1500));
}

TEST(SentBackTest, RecordsAreBounded) {
  SentBack sent(1'000'000);
  for (std::int64_t tid = 0; tid < static_cast<std::int64_t>(SentBack::kMaxRecords) + 1; ++tid) {
    EXPECT_FALSE(sent.Admit(tid, 2, tid));
  }
  EXPECT_FALSE(sent.Admit(0, 2, 1000));  // the oldest record was dropped
  EXPECT_TRUE(sent.Admit(2, 2, 1001));   // younger ones are kept
}

}  // namespace
}  // namespace fusefs
