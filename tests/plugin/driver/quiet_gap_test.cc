#include "plugin/driver/quiet_gap.h"

#include <gtest/gtest.h>

#include <chrono>

namespace skald {
namespace {

using namespace std::chrono_literals;
using Clock = QuietGap::Clock;

TEST(QuietGapTest, AFirstQuietMomentSendsAfterTheShortestGap) {
  QuietGap gap;
  const Clock::time_point t0{};
  EXPECT_EQ(gap.Gap(), QuietGap::kMinGap);
  EXPECT_EQ(gap.SendAt(t0 + 1s), t0 + 1s + QuietGap::kMinGap);
}

TEST(QuietGapTest, InputRightAfterASendDoublesTheGapUpToItsBound) {
  QuietGap gap;
  Clock::time_point t{};
  std::chrono::milliseconds expected = QuietGap::kMinGap;
  for (int i = 0; i < 10; ++i) {
    t += 1s;
    gap.Sent(t);
    gap.Arrived(t + 1ms);  // the pause was a hiccup, not the end of the input
    expected = std::min(expected * 2, QuietGap::kMaxGap);
    EXPECT_EQ(gap.Gap(), expected) << "after " << i + 1 << " premature sends";
  }
  EXPECT_EQ(gap.Gap(), QuietGap::kMaxGap);
}

TEST(QuietGapTest, OnlyTheFirstInputAfterASendJudgesIt) {
  QuietGap gap;
  const Clock::time_point t{};
  gap.Sent(t);
  gap.Arrived(t + 1ms);
  gap.Arrived(t + 2ms);
  gap.Arrived(t + 3ms);
  EXPECT_EQ(gap.Gap(), 2 * QuietGap::kMinGap);
}

TEST(QuietGapTest, ALongSilenceAfterASendHalvesTheGapDownToItsBound) {
  QuietGap gap;
  Clock::time_point t{};
  for (int i = 0; i < 3; ++i) {
    t += 1s;
    gap.Sent(t);
    gap.Arrived(t + 1ms);
  }
  ASSERT_EQ(gap.Gap(), 8 * QuietGap::kMinGap);
  t += 1s;
  gap.Sent(t);
  gap.Arrived(t + QuietGap::kCalm * gap.Gap());
  EXPECT_EQ(gap.Gap(), 4 * QuietGap::kMinGap);
  for (int i = 0; i < 5; ++i) {
    t += 10s;
    gap.Sent(t);
    gap.Arrived(t + 5s);
  }
  EXPECT_EQ(gap.Gap(), QuietGap::kMinGap);
}

TEST(QuietGapTest, ASilenceBetweenPrematureAndCalmKeepsTheGap) {
  QuietGap gap;
  const Clock::time_point t{};
  gap.Sent(t);
  gap.Arrived(t + QuietGap::kPremature * QuietGap::kMinGap);
  EXPECT_EQ(gap.Gap(), QuietGap::kMinGap);
}

TEST(QuietGapTest, EarlySendsAreSpacedApart) {
  QuietGap gap;
  const Clock::time_point t{};
  gap.Sent(t);
  gap.Arrived(t + 1s);  // calm: the gap stays the shortest
  // The queue runs empty again right after the send: the next send waits for the spacing.
  EXPECT_EQ(gap.SendAt(t + 1ms), t + QuietGap::kSpacing);
  EXPECT_EQ(gap.SendAt(t + 1s), t + 1s + QuietGap::kMinGap);
}

}  // namespace
}  // namespace skald
