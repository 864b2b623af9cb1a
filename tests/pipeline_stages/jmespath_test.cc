#include "pipeline_stages/jmespath.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "pipeline_stages/common/config_error.h"

namespace skald::stages {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string ErrorOf(std::string_view expression) {
  try {
    ParseJmesPath(expression);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(JmesPath, IdentifierIsOneFieldStep) {
  EXPECT_THAT(ParseJmesPath("level"), ElementsAre(JmesPathStep::Field("level")));
  EXPECT_THAT(ParseJmesPath("_a1"), ElementsAre(JmesPathStep::Field("_a1")));
}

TEST(JmesPath, DottedPathIsFieldSteps) {
  EXPECT_THAT(
      ParseJmesPath("a.b.c"),
      ElementsAre(JmesPathStep::Field("a"), JmesPathStep::Field("b"), JmesPathStep::Field("c")));
}

TEST(JmesPath, QuotedIdentifierMayHoldDashesAndDots) {
  EXPECT_THAT(ParseJmesPath("\"user-agent\""), ElementsAre(JmesPathStep::Field("user-agent")));
  EXPECT_THAT(ParseJmesPath("\"a.b\""), ElementsAre(JmesPathStep::Field("a.b")));
  EXPECT_THAT(ParseJmesPath("\"\""), ElementsAre(JmesPathStep::Field("")));
}

TEST(JmesPath, QuotedIdentifierUsesJsonEscapes) {
  EXPECT_THAT(ParseJmesPath(R"("a\"b\\c\/d\n\u00e9\ud83d\ude00")"),
              ElementsAre(JmesPathStep::Field("a\"b\\c/d\n\xc3\xa9\xf0\x9f\x98\x80")));
}

TEST(JmesPath, IndexesIncludingNegative) {
  EXPECT_THAT(ParseJmesPath("items[0]"),
              ElementsAre(JmesPathStep::Field("items"), JmesPathStep::Index(0)));
  EXPECT_THAT(ParseJmesPath("items[-1]"),
              ElementsAre(JmesPathStep::Field("items"), JmesPathStep::Index(-1)));
  EXPECT_THAT(
      ParseJmesPath("m[1][2]"),
      ElementsAre(JmesPathStep::Field("m"), JmesPathStep::Index(1), JmesPathStep::Index(2)));
  EXPECT_THAT(ParseJmesPath("[3]"), ElementsAre(JmesPathStep::Index(3)));
}

TEST(JmesPath, MixedPathFromTheDocs) {
  EXPECT_THAT(ParseJmesPath("a.b[0].\"c-d\""),
              ElementsAre(JmesPathStep::Field("a"), JmesPathStep::Field("b"),
                          JmesPathStep::Index(0), JmesPathStep::Field("c-d")));
}

TEST(JmesPath, WhitespaceBetweenTokensIsIgnored) {
  EXPECT_THAT(
      ParseJmesPath(" a . b [ 0 ] "),
      ElementsAre(JmesPathStep::Field("a"), JmesPathStep::Field("b"), JmesPathStep::Index(0)));
}

TEST(JmesPath, UnquotedDashIsErrorSuggestingQuotes) {
  EXPECT_THAT(ErrorOf("user-agent"),
              AllOf(HasSubstr("\"user-agent\""), HasSubstr("'-' at position 4"),
                    HasSubstr("quote the key: \"user-agent\""), HasSubstr("supported:")));
  EXPECT_THAT(ErrorOf("request.x-forwarded-for"), HasSubstr("quote the key: \"x-forwarded-for\""));
}

TEST(JmesPath, EmptyExpressionIsError) {
  EXPECT_THAT(ErrorOf(""), HasSubstr("is empty"));
  EXPECT_THAT(ErrorOf("  "), HasSubstr("is empty"));
}

TEST(JmesPath, FunctionsAreErrors) {
  EXPECT_THAT(ErrorOf("length(items)"), HasSubstr("function length() at position 0"));
}

TEST(JmesPath, ProjectionsFiltersAndSlicesAreErrors) {
  EXPECT_THAT(ErrorOf("items[*].name"), HasSubstr("projections"));
  EXPECT_THAT(ErrorOf("items[]"), HasSubstr("[] at position 5 is not an index"));
  EXPECT_THAT(ErrorOf("items[?a=='b']"), HasSubstr("filters"));
  EXPECT_THAT(ErrorOf("items[0:2]"), HasSubstr("slices"));
  EXPECT_THAT(ErrorOf("*.a"), HasSubstr("projections"));
  EXPECT_THAT(ErrorOf("a.*"), HasSubstr("projections"));
}

TEST(JmesPath, OtherSyntaxIsError) {
  EXPECT_THAT(ErrorOf("a | b"), HasSubstr("pipes"));
  EXPECT_THAT(ErrorOf("a || b"), HasSubstr("'|' at position 2"));
  EXPECT_THAT(ErrorOf("a && b"), HasSubstr("&&"));
  EXPECT_THAT(ErrorOf("{a: b}"), HasSubstr("multiselect"));
  EXPECT_THAT(ErrorOf("`1`"), HasSubstr("literals"));
  EXPECT_THAT(ErrorOf("'a'"), HasSubstr("literals"));
  EXPECT_THAT(ErrorOf("@"), HasSubstr("@"));
  EXPECT_THAT(ErrorOf("a == b"), HasSubstr("comparisons"));
  EXPECT_THAT(ErrorOf("a b"), HasSubstr("expected '.' or '['"));
  EXPECT_THAT(ErrorOf("a."), HasSubstr("ends with '.'"));
  EXPECT_THAT(ErrorOf("1a"), HasSubstr("expected a key"));
  EXPECT_THAT(ErrorOf("a.[0]"), HasSubstr("an index follows a key directly"));
}

TEST(JmesPath, MalformedQuotesAndIndexesAreErrors) {
  EXPECT_THAT(ErrorOf("\"abc"), HasSubstr("no closing '\"'"));
  EXPECT_THAT(ErrorOf(R"("a\qb")"), HasSubstr("invalid escape \\q"));
  EXPECT_THAT(ErrorOf(R"("\u12")"), HasSubstr("invalid \\u escape"));
  EXPECT_THAT(ErrorOf("a[0"), HasSubstr("close the index"));
  EXPECT_THAT(ErrorOf("a[x]"), HasSubstr("[x] at position 1 is not an index"));
  EXPECT_THAT(ErrorOf("a[99999999999999999999]"), HasSubstr("too large"));
}

TEST(JmesPath, EvaluateFollowsFieldsAndIndexes) {
  const auto doc =
      nlohmann::json::parse(R"({"a":{"b":[{"c-d":"x"},{"c-d":"y"}]},"level":"info","n":null})");
  const nlohmann::json* v = EvaluateJmesPath(ParseJmesPath("a.b[0].\"c-d\""), doc);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(*v, "x");
  v = EvaluateJmesPath(ParseJmesPath("a.b[-1].\"c-d\""), doc);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(*v, "y");
  v = EvaluateJmesPath(ParseJmesPath("n"), doc);
  ASSERT_NE(v, nullptr);
  EXPECT_TRUE(v->is_null());
  v = EvaluateJmesPath(ParseJmesPath("a"), doc);
  ASSERT_NE(v, nullptr);
  EXPECT_TRUE(v->is_object());
}

TEST(JmesPath, EvaluateNoMatchIsNullptr) {
  const auto doc = nlohmann::json::parse(R"({"a":{"b":[1,2]},"s":"str"})");
  EXPECT_EQ(EvaluateJmesPath(ParseJmesPath("missing"), doc), nullptr);
  EXPECT_EQ(EvaluateJmesPath(ParseJmesPath("a.b[2]"), doc), nullptr);
  EXPECT_EQ(EvaluateJmesPath(ParseJmesPath("a.b[-3]"), doc), nullptr);
  EXPECT_EQ(EvaluateJmesPath(ParseJmesPath("s.x"), doc), nullptr);
  EXPECT_EQ(EvaluateJmesPath(ParseJmesPath("a[0]"), doc), nullptr);
  EXPECT_EQ(EvaluateJmesPath(ParseJmesPath("a.b.c"), doc), nullptr);
}

}  // namespace
}  // namespace skald::stages

namespace skald::stages {
namespace {

TEST(JmesPath, RandomInputOnlyFailsCleanly) {
  const std::vector<std::string> tokens = {"a",   "b-c",  ".", "[", "]", "0", "-1", "\"", "\\",
                                           "\\u", "d83d", "*", "?", " ", "(", "|",  "x_1"};
  const auto doc = nlohmann::json::parse(R"({"a":[{"x_1":1}],"b-c":{"a":null}})");
  uint64_t seed = 5;
  auto next = [&seed]() {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return seed >> 33;
  };
  int parsed = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    const int n = 1 + next() % 10;
    for (int k = 0; k < n; ++k) text += tokens[next() % tokens.size()];
    try {
      (void)EvaluateJmesPath(ParseJmesPath(text), doc);
      ++parsed;
    } catch (const ConfigError&) {
    }
  }
  EXPECT_GT(parsed, 100);
}

}  // namespace
}  // namespace skald::stages
