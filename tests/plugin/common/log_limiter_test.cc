#include "plugin/common/log_limiter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace skald {
namespace {

using namespace std::chrono_literals;

TEST(LogLimiterTest, OneMessagePerKeyAndIntervalTheOthersCounted) {
  LogLimiter limiter(std::chrono::hours(1));
  uint64_t suppressed = 99;
  EXPECT_TRUE(limiter.Allow("a", suppressed));
  EXPECT_EQ(suppressed, 0u);
  EXPECT_FALSE(limiter.Allow("a", suppressed));
  EXPECT_FALSE(limiter.Allow("a", suppressed));
  // Keys are independent.
  EXPECT_TRUE(limiter.Allow("b", suppressed));
  EXPECT_EQ(suppressed, 0u);
}

TEST(LogLimiterTest, TheNextAllowedMessageReportsHowManyWereSkipped) {
  LogLimiter limiter(1ns);
  uint64_t suppressed = 0;
  ASSERT_TRUE(limiter.Allow("k", suppressed));
  std::this_thread::sleep_for(1ms);  // past the interval
  EXPECT_TRUE(limiter.Allow("k", suppressed));
  EXPECT_EQ(suppressed, 0u);

  LogLimiter hourly(std::chrono::hours(1));
  ASSERT_TRUE(hourly.Allow("k", suppressed));
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(hourly.Allow("k", suppressed));
  EXPECT_EQ(Suppressed(3), " (3 similar messages suppressed)");
  EXPECT_EQ(Suppressed(0), "");
}

TEST(LogLimiterTest, ConcurrentCallersAllowOneMessage) {
  LogLimiter limiter(std::chrono::hours(1));
  std::atomic<int> allowed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        uint64_t suppressed = 0;
        if (limiter.Allow("shared", suppressed)) ++allowed;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(allowed.load(), 1);
}

}  // namespace
}  // namespace skald
