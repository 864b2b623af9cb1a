#include "pipeline_stages/go/go_regexp.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skald::stages {
namespace {

std::string ReplaceAll(std::string_view pattern, std::string_view src, std::string_view repl,
                       bool literal = false) {
  std::string error;
  auto re = CompileGoRegexp(pattern, &error);
  EXPECT_NE(re, nullptr) << error;
  std::string out;
  if (re) GoRegexpReplaceAll(*re, src, repl, literal, &out);
  return out;
}

TEST(GoRegexp, NamedGroupSpellingIsRewrittenForRe2) {
  EXPECT_EQ(GoRegexpToRe2Syntax("(?<level>\\w+)"), "(?P<level>\\w+)");
  EXPECT_EQ(GoRegexpToRe2Syntax("(?P<a>x)"), "(?P<a>x)");
  EXPECT_EQ(GoRegexpToRe2Syntax("\\(?<a>"), "\\(?<a>");
  EXPECT_EQ(GoRegexpToRe2Syntax("[(?<]x(?<b>y)"), "[(?<]x(?P<b>y)");
  EXPECT_EQ(GoRegexpToRe2Syntax("[](?<]"), "[](?<]");
  EXPECT_EQ(GoRegexpToRe2Syntax("(?<=a)"), "(?<=a)");
}

TEST(GoRegexp, CompileReportsRe2Error) {
  std::string error;
  EXPECT_EQ(CompileGoRegexp("(abc", &error), nullptr);
  EXPECT_THAT(error, ::testing::HasSubstr("missing )"));
  EXPECT_NE(CompileGoRegexp("(?<name>a)", &error), nullptr);
}

// Examples from Go's regexp documentation (Regexp.ReplaceAllString).
TEST(GoRegexp, ReplaceAllStringGoDocExamples) {
  EXPECT_EQ(ReplaceAll("a(x*)b", "-ab-axxb-", "T"), "-T-T-");
  EXPECT_EQ(ReplaceAll("a(x*)b", "-ab-axxb-", "$1"), "--xx-");
  EXPECT_EQ(ReplaceAll("a(x*)b", "-ab-axxb-", "$1W"), "---");
  EXPECT_EQ(ReplaceAll("a(x*)b", "-ab-axxb-", "${1}W"), "-W-xxW-");
  EXPECT_EQ(ReplaceAll("a(?P<x>x*)b", "-ab-axxb-", "${x}W"), "-W-xxW-");
  EXPECT_EQ(ReplaceAll("a(?<x>x*)b", "-ab-axxb-", "$x"), "--xx-");
}

TEST(GoRegexp, ReplaceAllLiteralStringDoesNotExpand) {
  EXPECT_EQ(ReplaceAll("a(x*)b", "-ab-axxb-", "$1", true), "-$1-$1-");
  EXPECT_EQ(ReplaceAll("a(x*)b", "-ab-axxb-", "${1}", true), "-${1}-${1}-");
}

TEST(GoRegexp, DollarEdgeCases) {
  EXPECT_EQ(ReplaceAll("b", "abc", "$$"), "a$c");
  EXPECT_EQ(ReplaceAll("b", "abc", "$"), "a$c");
  EXPECT_EQ(ReplaceAll("b", "abc", "${1"), "a${1c");
  EXPECT_EQ(ReplaceAll("(b)", "abc", "$01"), "ac");  // leading zero: a name, no such group
  EXPECT_EQ(ReplaceAll("(b)", "abc", "$2"), "ac");
  EXPECT_EQ(ReplaceAll("(b)|(z)", "abc", "[$2]"), "a[]c");
}

TEST(GoRegexp, EmptyMatchesAdvanceOneRune) {
  EXPECT_EQ(ReplaceAll("x*", "abc", "-"), "-a-b-c-");
  EXPECT_EQ(ReplaceAll("a*", "baaac", "-"), "-b-c-");
  EXPECT_EQ(ReplaceAll("", "\xc3\xa9", "-"), "-\xc3\xa9-");
  EXPECT_EQ(ReplaceAll("^", "abc", "-"), "-abc");
  EXPECT_EQ(ReplaceAll("$", "abc", "-"), "abc-");
}

}  // namespace
}  // namespace skald::stages
