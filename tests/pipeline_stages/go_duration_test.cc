#include "pipeline_stages/go_duration.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace skald::stages {
namespace {

constexpr int64_t kNs = 1, kUs = 1'000, kMs = 1'000'000, kS = 1'000'000'000, kMin = 60 * kS,
                  kH = 60 * kMin;

// Go's own table (time_test.go, parseDurationTests).
TEST(GoDuration, GoesTableOfValidDurations) {
  const struct {
    const char* in;
    int64_t want;
  } cases[] = {
      {"0", 0},
      {"5s", 5 * kS},
      {"30s", 30 * kS},
      {"1478s", 1478 * kS},
      {"-5s", -5 * kS},
      {"+5s", 5 * kS},
      {"-0", 0},
      {"+0", 0},
      {"5.0s", 5 * kS},
      {"5.6s", 5 * kS + 600 * kMs},
      {"5.s", 5 * kS},
      {".5s", 500 * kMs},
      {"1.0s", 1 * kS},
      {"1.00s", 1 * kS},
      {"1.004s", 1 * kS + 4 * kMs},
      {"1.0040s", 1 * kS + 4 * kMs},
      {"100.00100s", 100 * kS + 1 * kMs},
      {"10ns", 10 * kNs},
      {"11us", 11 * kUs},
      {"12\xC2\xB5s", 12 * kUs},  // U+00B5
      {"12\xCE\xBCs", 12 * kUs},  // U+03BC
      {"13ms", 13 * kMs},
      {"14s", 14 * kS},
      {"15m", 15 * kMin},
      {"16h", 16 * kH},
      {"3h30m", 3 * kH + 30 * kMin},
      {"10.5s4m", 4 * kMin + 10 * kS + 500 * kMs},
      {"-2m3.4s", -(2 * kMin + 3 * kS + 400 * kMs)},
      {"1h2m3s4ms5us6ns", 1 * kH + 2 * kMin + 3 * kS + 4 * kMs + 5 * kUs + 6 * kNs},
      {"39h9m14.425s", 39 * kH + 9 * kMin + 14 * kS + 425 * kMs},
      {"52763797000ns", 52763797000 * kNs},
      {"0.3333333333333333333h", 20 * kMin},
      {"9007199254740993ns", (int64_t{1} << 53) + 1},
      {"9223372036854775807ns", std::numeric_limits<int64_t>::max()},
      {"9223372036854775.807us", std::numeric_limits<int64_t>::max()},
      {"9223372036s854ms775us807ns", std::numeric_limits<int64_t>::max()},
      {"-9223372036854775808ns", std::numeric_limits<int64_t>::min()},
      {"-9223372036854775.808us", std::numeric_limits<int64_t>::min()},
      {"-9223372036s854ms775us808ns", std::numeric_limits<int64_t>::min()},
      {"-2562047h47m16.854775808s", std::numeric_limits<int64_t>::min()},
      {"0.100000000000000000000h", 6 * kMin},
      {"0.830103483285477580700h", 49 * kMin + 48 * kS + 372539827 * kNs},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(ParseGoDuration(c.in), c.want) << c.in;
  }
}

// Go's table of errors (parseDurationErrorTests).
TEST(GoDuration, GoesTableOfErrors) {
  for (const char* in : {"",
                         "3",
                         "-",
                         "s",
                         ".",
                         "-.",
                         ".s",
                         "+.s",
                         "1d",
                         "\x85\x85",
                         "\xff"
                         "ff",
                         "hello \xff"
                         "ff world",
                         "\xef\xbf\xbd",
                         "\xef\xbf\xbd hello \xef\xbf\xbd world",
                         "9223372036854775810ns",
                         "9223372036854775808ns",
                         "-9223372036854775809ns",
                         "9223372036854776us",
                         "3000000h",
                         "9223372036854775.808us",
                         "9223372036854ms775us808ns"}) {
    EXPECT_FALSE(ParseGoDuration(in)) << in;
  }
}

// Every millisecond, second, minute and hour with three decimals up to 100: exactly the
// nanoseconds written, as Go gives them. A long double product truncated gave 62999 for
// "0.063ms" on x86-64 (80-bit) and 250999 for "0.251ms" on arm64 (128-bit).
TEST(GoDuration, ThreeDecimalsAreExactOnEveryArchitecture) {
  const struct {
    const char* suffix;
    int64_t unit;
  } units[] = {{"ms", kMs}, {"s", kS}, {"m", kMin}, {"h", kH}};
  int wrong = 0;
  for (const auto& u : units) {
    for (int64_t i = 0; i < 100'000; ++i) {
      const std::string text =
          std::to_string(i / 1000) + "." + std::to_string(1000 + i % 1000).substr(1) + u.suffix;
      const int64_t want = i / 1000 * u.unit + i % 1000 * (u.unit / 1000);
      const auto got = ParseGoDuration(text);
      if (got != want && ++wrong <= 10) {
        ADD_FAILURE() << text << ": got " << (got ? std::to_string(*got) : "nullopt") << ", want "
                      << want;
      }
    }
  }
  EXPECT_EQ(wrong, 0);
}

}  // namespace
}  // namespace skald::stages
