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

// Go reads a byte that is not part of valid UTF-8 as one U+FFFD character; RE2 matches nothing
// there. Each expectation below is what Go 1.26's regexp gives.
std::unique_ptr<RE2> Compiled(std::string_view pattern) {
  std::string error;
  auto re = CompileGoRegexp(pattern, &error);
  EXPECT_NE(re, nullptr) << error;
  return re;
}

TEST(GoRegexp, AByteThatIsNotUtf8IsOneCharacterAsInGo) {
  EXPECT_EQ(ReplaceAll("(.)", "\xce", ""), "");
  EXPECT_EQ(ReplaceAll("(.)",
                       "a\xce"
                       "b",
                       "-"),
            "---");
  EXPECT_EQ(ReplaceAll("x*",
                       "a\xff"
                       "b",
                       "-"),
            "-a-\xff-b-");
  EXPECT_TRUE(GoRegexpMatches(*Compiled("\\x{FFFD}"), "\xff"));
  EXPECT_TRUE(GoRegexpMatches(*Compiled("[^a]"), "\xff"));
  EXPECT_TRUE(GoRegexpMatches(*Compiled("."), "\xff", RE2::ANCHOR_BOTH));
  // A sequence cut short is a character per byte.
  EXPECT_TRUE(GoRegexpMatches(*Compiled(".."), "\xe2\x82", RE2::ANCHOR_BOTH));
  EXPECT_FALSE(GoRegexpMatches(*Compiled("."), "\xe2\x82", RE2::ANCHOR_BOTH));
}

TEST(GoRegexp, GroupsOverBytesThatAreNotUtf8PointIntoTheOriginalText) {
  auto re = Compiled("^(.)(.)$");
  const std::string text = "\xc3\xa9\xff";  // é, then a stray byte
  re2::StringPiece groups[3];
  ASSERT_TRUE(GoRegexpMatch(*re, text, 0, text.size(), RE2::UNANCHORED, groups, 3));
  EXPECT_EQ(std::string(groups[1].data(), groups[1].size()), "\xc3\xa9");
  EXPECT_EQ(std::string(groups[2].data(), groups[2].size()), "\xff");
  EXPECT_EQ(groups[2].data(), text.data() + 2);

  auto all = Compiled("(?P<x>.+)");
  const std::string mixed =
      "a\xff"
      "b\xed\xa0\x80z";  // a stray byte, an encoded surrogate
  ASSERT_TRUE(GoRegexpMatch(*all, mixed, 0, mixed.size(), RE2::UNANCHORED, groups, 2));
  EXPECT_EQ(std::string(groups[1].data(), groups[1].size()), mixed);

  // A search that starts past such a byte finds what follows it.
  auto b = Compiled("b(.)");
  ASSERT_TRUE(GoRegexpMatch(*b, mixed, 2, mixed.size(), RE2::UNANCHORED, groups, 2));
  EXPECT_EQ(std::string(groups[1].data(), groups[1].size()), "\xed");
  EXPECT_FALSE(GoRegexpMatch(*b, mixed, 3, mixed.size(), RE2::UNANCHORED, groups, 2));
}

}  // namespace
}  // namespace skald::stages
