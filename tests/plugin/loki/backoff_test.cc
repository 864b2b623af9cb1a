#include "plugin/loki/backoff.h"

#include <gtest/gtest.h>

namespace skald {
namespace {

using std::chrono::milliseconds;

TEST(Backoff, DelaysStayBetweenMinAndMax) {
  Backoff b(milliseconds(100), milliseconds(5000), 42);
  for (int i = 0; i < 100; ++i) {
    const auto d = b.Next();
    EXPECT_GE(d, milliseconds(100));
    EXPECT_LE(d, milliseconds(5000));
  }
}

TEST(Backoff, GrowsExponentiallyWithHalfJitter) {
  Backoff b(milliseconds(100), milliseconds(100'000), 7);
  // attempt n: base = 100 * 2^n, delay in [base/2, base] (and >= min).
  for (int n = 0; n < 8; ++n) {
    const int64_t base = 100LL << n;
    const auto d = b.Next().count();
    EXPECT_GE(d, std::max<int64_t>(base / 2, 100)) << "attempt " << n;
    EXPECT_LE(d, base) << "attempt " << n;
  }
  EXPECT_EQ(b.attempts(), 8);
}

TEST(Backoff, CappedAtMaxAfterManyAttempts) {
  Backoff b(milliseconds(500), milliseconds(300'000), 1);
  for (int i = 0; i < 200; ++i) b.Next();  // no overflow however many attempts
  const auto d = b.Next();
  EXPECT_GE(d, milliseconds(150'000));
  EXPECT_LE(d, milliseconds(300'000));
}

TEST(Backoff, JitterSpreadsDelays) {
  Backoff a(milliseconds(1000), milliseconds(1'000'000), 1);
  Backoff b(milliseconds(1000), milliseconds(1'000'000), 2);
  bool differ = false;
  for (int i = 0; i < 10; ++i) differ |= a.Next() != b.Next();
  EXPECT_TRUE(differ);
}

TEST(Backoff, ResetStartsOver) {
  Backoff b(milliseconds(10), milliseconds(10'000), 3);
  for (int i = 0; i < 10; ++i) b.Next();
  b.Reset();
  EXPECT_EQ(b.attempts(), 0);
  EXPECT_LE(b.Next(), milliseconds(10));
}

TEST(Backoff, ZeroMinimumGivesZeroDelays) {
  Backoff b(milliseconds(0), milliseconds(0), 3);
  EXPECT_EQ(b.Next(), milliseconds(0));
  EXPECT_EQ(b.Next(), milliseconds(0));
}

TEST(Backoff, MaxBelowMinIsRaisedToMin) {
  Backoff b(milliseconds(50), milliseconds(10), 3);
  EXPECT_EQ(b.Next(), milliseconds(50));
}

}  // namespace
}  // namespace skald
