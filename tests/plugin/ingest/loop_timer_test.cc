#include "plugin/ingest/loop_timer.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace skald {
namespace {

using namespace std::chrono_literals;

TEST(LoopTimer, NothingIsDueUntilARunIsAskedFor) {
  LoopTimer timer;
  EXPECT_EQ(timer.MsUntilDue(), -1);
  int runs = 0;
  EXPECT_FALSE(timer.RunIfDue([&] { return ++runs, LoopTimer::kNever; }, nullptr));
  EXPECT_EQ(runs, 0);
  EXPECT_FALSE(timer.Within(LoopTimer::kNever));
  EXPECT_EQ(timer.MsUntilDue(), -1);
}

// A run asked for sooner moves the due time (and says the loop must look again); one asked
// for later leaves it.
TEST(LoopTimer, ARunAskedSoonerMovesTheDueTimeALaterOneDoesNot) {
  LoopTimer timer;
  EXPECT_TRUE(timer.Within(60s));
  EXPECT_GT(timer.MsUntilDue(), 59'000);
  EXPECT_FALSE(timer.Within(120s));
  EXPECT_LE(timer.MsUntilDue(), 60'000);
  EXPECT_TRUE(timer.Within(0ms));
  EXPECT_EQ(timer.MsUntilDue(), 0);
  EXPECT_FALSE(timer.Within(10ms));
}

// The task says when it wants to run next: kNever asks for nothing, a delay for a run then,
// and a throw for a run after kAfterError (on_error told).
TEST(LoopTimer, TheTaskSaysWhenItRunsNextAndAThrowRetriesLater) {
  LoopTimer timer;
  timer.Within(0ms);
  int runs = 0;
  EXPECT_TRUE(timer.RunIfDue([&] { return ++runs, LoopTimer::kNever; }, nullptr));
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(timer.MsUntilDue(), -1);

  timer.Within(0ms);
  EXPECT_TRUE(timer.RunIfDue([&] { return ++runs, std::chrono::milliseconds(30'000); }, nullptr));
  EXPECT_GT(timer.MsUntilDue(), 29'000);
  EXPECT_FALSE(timer.RunIfDue([&] { return ++runs, LoopTimer::kNever; }, nullptr));  // not due
  EXPECT_EQ(runs, 2);

  timer.Within(0ms);
  std::string told;
  EXPECT_TRUE(timer.RunIfDue(
      []() -> std::chrono::milliseconds { throw std::runtime_error("journal gone"); },
      [&](const std::exception& e) { told = e.what(); }));
  EXPECT_EQ(told, "journal gone");
  const int ms = timer.MsUntilDue();
  EXPECT_GT(ms, 0);
  EXPECT_LE(ms, LoopTimer::kAfterError.count());
}

// A run asked for while the task runs is kept (the due time is taken before the task runs).
TEST(LoopTimer, ARunAskedForWhileTheTaskRunsIsKept) {
  LoopTimer timer;
  timer.Within(0ms);
  EXPECT_TRUE(timer.RunIfDue(
      [&] {
        timer.Within(0ms);
        return LoopTimer::kNever;
      },
      nullptr));
  EXPECT_EQ(timer.MsUntilDue(), 0);
}

// WhenJournaled waits for the next Journaled(), once.
TEST(LoopTimer, WhenJournaledAsksForARunAtTheNextJournaledOnly) {
  LoopTimer timer;
  EXPECT_FALSE(timer.Journaled());
  timer.WhenJournaled(1000ms);
  EXPECT_EQ(timer.MsUntilDue(), -1);
  EXPECT_TRUE(timer.Journaled());
  EXPECT_GT(timer.MsUntilDue(), 900);
  EXPECT_FALSE(timer.Journaled());  // once
}

// Any thread may ask at once; the soonest request wins.
TEST(LoopTimer, ManyThreadsAskingAtOnceLeaveTheSoonestDue) {
  LoopTimer timer;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) timer.Within(std::chrono::milliseconds(10'000 + t * 1000 + i));
    });
  }
  for (auto& th : threads) th.join();
  const int ms = timer.MsUntilDue();
  EXPECT_LE(ms, 10'000);
  EXPECT_GT(ms, 9'000);
}

}  // namespace
}  // namespace skald
