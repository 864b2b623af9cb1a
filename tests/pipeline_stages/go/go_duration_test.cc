#include "pipeline_stages/go/go_duration.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace skald::stages {
namespace {

constexpr int64_t kUs = 1'000;
constexpr int64_t kMs = 1'000'000;
constexpr int64_t kS = 1'000'000'000;
constexpr int64_t kM = 60 * kS;
constexpr int64_t kH = 60 * kM;

// Go's own table (src/time/time_test.go, parseDurationTests).
TEST(GoDuration, ParsesWhatGoParses) {
  struct Case {
    std::string text;
    int64_t want;
  };
  const int64_t max = std::numeric_limits<int64_t>::max();
  const int64_t min = std::numeric_limits<int64_t>::min();
  for (const Case& c : std::vector<Case>{
           {"0", 0},
           {"5s", 5 * kS},
           {"1478s", 1478 * kS},
           {"-5s", -5 * kS},
           {"+5s", 5 * kS},
           {"-0", 0},
           {"+0", 0},
           {"5.0s", 5 * kS},
           {"5.6s", 5 * kS + 600 * kMs},
           {"5.s", 5 * kS},
           {".5s", 500 * kMs},
           {"1.004s", kS + 4 * kMs},
           {"100.00100s", 100 * kS + kMs},
           {"10ns", 10},
           {"11us", 11 * kUs},
           {"12\xC2\xB5s", 12 * kUs},  // U+00B5
           {"12\xCE\xBCs", 12 * kUs},  // U+03BC
           {"13ms", 13 * kMs},
           {"15m", 15 * kM},
           {"16h", 16 * kH},
           {"3h30m", 3 * kH + 30 * kM},
           {"10.5s4m", 4 * kM + 10 * kS + 500 * kMs},
           {"-2m3.4s", -(2 * kM + 3 * kS + 400 * kMs)},
           {"1h2m3s4ms5us6ns", kH + 2 * kM + 3 * kS + 4 * kMs + 5 * kUs + 6},
           {"39h9m14.425s", 39 * kH + 9 * kM + 14 * kS + 425 * kMs},
           {"52763797000ns", 52763797000},
           {"0.3333333333333333333h", 20 * kM},
           {"9007199254740993ns", (int64_t{1} << 53) + 1},
           {"9223372036854775807ns", max},
           {"9223372036854775.807us", max},
           {"9223372036s854ms775us807ns", max},
           {"-9223372036854775808ns", min},
           {"-9223372036854775.808us", min},
           {"-2562047h47m16.854775808s", min},
           {"0.100000000000000000000h", 6 * kM},
           {"0.830103483285477580700h", 49 * kM + 48 * kS + 372539827},
       }) {
    EXPECT_EQ(ParseGoDuration(c.text), c.want) << c.text;
  }
}

TEST(GoDuration, RefusesWhatGoRefuses) {
  for (const std::string text :
       {"", "3", "-", "s", ".", "-.", ".s", "+.s", "1d", "\x85\x85",
        "\xff"
        "ff",
        "hello \xff"
        "ff world",
        "9223372036854775808ns", "9223372036854775.808us", "9223372036854ms775us808ns",
        "-9223372036854775809ns", "1s 2s", "00"}) {
    EXPECT_FALSE(ParseGoDuration(text).has_value()) << text;
  }
}

// Go converts a fraction to whole nanoseconds by truncation: the plugin's option parser used to
// round ("1.5ns" was 2ns) and the stage parser multiplied in long double.
TEST(GoDuration, FractionsAreTruncatedAsGoDoes) {
  EXPECT_EQ(ParseGoDuration("1.5ns"), 1);
  EXPECT_EQ(ParseGoDuration("0.9ns"), 0);
  EXPECT_EQ(ParseGoDuration("1.0000000009s"), kS);
  EXPECT_EQ(ParseGoDuration("-1.5ns"), -1);
  EXPECT_EQ(ParseGoDuration("1.1s"), kS + 100 * kMs);
  EXPECT_EQ(ParseGoDuration("0.3s"), 300 * kMs);
}

TEST(GoDuration, FormatsAsDurationString) {
  EXPECT_EQ(FormatGoDuration(0), "0s");
  EXPECT_EQ(FormatGoDuration(1), "1ns");
  EXPECT_EQ(FormatGoDuration(1100), "1.1\xC2\xB5s");
  EXPECT_EQ(FormatGoDuration(2200 * kUs), "2.2ms");
  EXPECT_EQ(FormatGoDuration(3300 * kMs), "3.3s");
  EXPECT_EQ(FormatGoDuration(-(4 * kM + 5 * kS)), "-4m5s");
  EXPECT_EQ(FormatGoDuration(4 * kM + 5001 * kMs), "4m5.001s");
  EXPECT_EQ(FormatGoDuration(5 * kH + 6 * kM + 7001 * kMs), "5h6m7.001s");
  EXPECT_EQ(FormatGoDuration(std::numeric_limits<int64_t>::max()), "2562047h47m16.854775807s");
  EXPECT_EQ(FormatGoDuration(std::numeric_limits<int64_t>::min()), "-2562047h47m16.854775808s");
}

}  // namespace
}  // namespace skald::stages

// The same nanoseconds on every architecture (long double is 80-bit on x86-64, 128-bit on
// arm64; the parser uses Go's float64 product only).
TEST(GoDuration, ExactOnEveryArchitecture) {
  EXPECT_EQ(skald::stages::ParseGoDuration("0.063ms"), 63'000);
  EXPECT_EQ(skald::stages::ParseGoDuration("0.251ms"), 251'000);
  EXPECT_EQ(skald::stages::ParseGoDuration("2562047h47m16.854775807s"), INT64_MAX);
  EXPECT_EQ(skald::stages::ParseGoDuration("2562047h47m16.854775808s"), std::nullopt);
}
