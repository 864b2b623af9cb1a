// Expected results printed by Go 1.26's strconv.ParseFloat(s, 64) and ParseInt(s, 0, 64).
#include "pipeline_stages/go/go_strconv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace skald::stages {
namespace {

TEST(GoStrconv, ParseFloatAsGo) {
  struct Case {
    const char* text;
    double want;
  };
  for (const Case& c : {Case{"1e-400", 0.0}, Case{"1e-320", 1e-320}, Case{"-0", -0.0},
                        Case{"1_000", 1000.0}, Case{"0x1p-2", 0.25}, Case{"0x_1p-2", 0.25},
                        Case{"+5", 5.0}, Case{".5", 0.5}, Case{"5.", 5.0}, Case{"1E+2", 100.0}}) {
    double got = 123;
    ASSERT_TRUE(ParseGoFloat(c.text, &got)) << c.text;
    EXPECT_EQ(got, c.want) << c.text;
    EXPECT_EQ(std::signbit(got), std::signbit(c.want)) << c.text;
  }
  double got = 0;
  ASSERT_TRUE(ParseGoFloat("inf", &got));
  EXPECT_EQ(got, HUGE_VAL);
  ASSERT_TRUE(ParseGoFloat("-Inf", &got));
  EXPECT_EQ(got, -HUGE_VAL);
  ASSERT_TRUE(ParseGoFloat("+Infinity", &got));
  EXPECT_EQ(got, HUGE_VAL);
  ASSERT_TRUE(ParseGoFloat("nan", &got));
  EXPECT_TRUE(std::isnan(got));
  ASSERT_TRUE(ParseGoFloat("NaN", &got));
  EXPECT_TRUE(std::isnan(got));
  // Errors in Go: out of range, blanks, a hexadecimal mantissa without its exponent, a signed
  // NaN, misplaced underscores, an empty text.
  for (const char* bad : {"1e400", "-1e400", " 5", "5 ", "0x1", "+nan", "-NaN", "1__0", "_1", "1_",
                          "", "+", "1e", "0x", "five", "1,5"}) {
    EXPECT_FALSE(ParseGoFloat(bad, &got)) << bad;
  }
}

TEST(GoStrconv, ParseIntAsGo) {
  int64_t got = 0;
  ASSERT_TRUE(ParseGoInt("0x1f", &got));
  EXPECT_EQ(got, 31);
  ASSERT_TRUE(ParseGoInt("017", &got));
  EXPECT_EQ(got, 15);
  ASSERT_TRUE(ParseGoInt("-0b101", &got));
  EXPECT_EQ(got, -5);
  ASSERT_TRUE(ParseGoInt("1_000", &got));
  EXPECT_EQ(got, 1000);
  ASSERT_TRUE(ParseGoInt("-9223372036854775808", &got));
  EXPECT_EQ(got, INT64_MIN);
  for (const char* bad : {"9223372036854775808", "1__0", "0x", "08", "1.5", " 1", ""}) {
    EXPECT_FALSE(ParseGoInt(bad, &got)) << bad;
  }
}

}  // namespace
}  // namespace skald::stages
