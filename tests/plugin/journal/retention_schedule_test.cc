#include "plugin/journal/retention_schedule.h"

#include <gtest/gtest.h>

namespace skald {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST(RetentionScheduleTest, BothChecksRunFirstThenOnlyWhenDue) {
  RetentionSchedule schedule;
  const auto t0 = Clock::now();
  auto checks = schedule.Begin(t0, 0);
  EXPECT_TRUE(checks.budget);
  EXPECT_TRUE(checks.age);
  // Nothing changed, no age check asked for: nothing to wait for.
  checks = schedule.Begin(t0 + 10ms, 0);
  EXPECT_FALSE(checks.budget);
  EXPECT_FALSE(checks.age);
  EXPECT_FALSE(checks.wait);
  // Bytes were journaled: the budget, a second after it last looked.
  checks = schedule.Begin(t0 + 10ms, 500);
  EXPECT_FALSE(checks.budget);
  ASSERT_TRUE(checks.wait);
  EXPECT_EQ(*checks.wait, std::chrono::duration_cast<Clock::duration>(990ms));
  checks = schedule.Begin(t0 + 1s, 500);
  EXPECT_TRUE(checks.budget);
  EXPECT_FALSE(checks.age);
  // The count it saw is checked: not due again.
  checks = schedule.Begin(t0 + 3s, 500);
  EXPECT_FALSE(checks.budget);
  EXPECT_FALSE(checks.wait);
}

TEST(RetentionScheduleTest, BudgetDueAndAgeCheckBy) {
  RetentionSchedule schedule;
  const auto t0 = Clock::now();
  schedule.Begin(t0, 0);
  EXPECT_EQ(schedule.next_age_check(), Clock::time_point::max());
  schedule.AgeCheckBy(t0 + 10s);
  schedule.AgeCheckBy(t0 + 20s);  // a later time does not postpone it
  EXPECT_EQ(schedule.next_age_check(), t0 + 10s);
  auto checks = schedule.Begin(t0 + 4s, 0);
  EXPECT_FALSE(checks.age);
  ASSERT_TRUE(checks.wait);
  EXPECT_EQ(*checks.wait, std::chrono::duration_cast<Clock::duration>(6s));
  schedule.BudgetDue();
  checks = schedule.Begin(t0 + 5s, 0);
  EXPECT_TRUE(checks.budget);
  EXPECT_FALSE(checks.age);
  checks = schedule.Begin(t0 + 10s, 0);
  EXPECT_FALSE(checks.budget);
  EXPECT_TRUE(checks.age);
  EXPECT_EQ(schedule.next_age_check(), Clock::time_point::max());
}

// Recovery asks for an age check at once with time_point::min(), possibly while Maintain runs
// between Begin and the wait it computes: that wait was next_age_check() - now, a signed
// overflow (UBSan stopped DriverDeliveryTest.ALineLeftUnsentHoldsTheCursorAndIsSentAgainAfter-
// ARestart in CI with "-9223372036854775808 - 5732843696887 cannot be represented").
TEST(RetentionScheduleTest, AnAgeCheckAskedForAtOnceIsDueInZeroWithoutOverflow) {
  RetentionSchedule schedule;
  const auto t0 = Clock::now();
  schedule.Begin(t0, 0);
  EXPECT_FALSE(schedule.AgeCheckIn(t0));  // not until asked
  schedule.AgeCheckBy(t0 + 10s);
  EXPECT_EQ(schedule.AgeCheckIn(t0 + 4s), std::chrono::duration_cast<Clock::duration>(6s));
  EXPECT_EQ(schedule.AgeCheckIn(t0 + 11s), Clock::duration::zero());
  schedule.AgeCheckBy(Clock::time_point::min());
  EXPECT_EQ(schedule.AgeCheckIn(t0), Clock::duration::zero());
  EXPECT_EQ(schedule.AgeCheckIn(Clock::time_point::max() - 1s), Clock::duration::zero());
  auto checks = schedule.Begin(t0, 0);
  EXPECT_TRUE(checks.age);
  EXPECT_FALSE(schedule.AgeCheckIn(t0));
}

}  // namespace
}  // namespace skald
