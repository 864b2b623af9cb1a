#include "pipeline_stages/logql_selector.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "pipeline_stages/common/config_error.h"

namespace skald::stages {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

using Labels = std::map<std::string, std::string, std::less<>>;

bool Matches(std::string_view selector, const Labels& labels) {
  return LogqlSelector::Parse(selector).MatchesLabels(
      [&](std::string_view name) -> std::optional<std::string_view> {
        auto it = labels.find(name);
        if (it == labels.end()) return std::nullopt;
        return it->second;
      });
}

bool LineMatches(std::string_view selector, std::string_view line) {
  return LogqlSelector::Parse(selector).MatchesLine(line);
}

std::string ErrorOf(std::string_view selector) {
  try {
    LogqlSelector::Parse(selector);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(LogqlSelector, EqualityMatchers) {
  EXPECT_TRUE(Matches(R"({app="api"})", {{"app", "api"}}));
  EXPECT_FALSE(Matches(R"({app="api"})", {{"app", "web"}}));
  EXPECT_TRUE(Matches(R"({app!="api"})", {{"app", "web"}}));
  EXPECT_FALSE(Matches(R"({app!="api"})", {{"app", "api"}}));
}

TEST(LogqlSelector, AllMatchersMustHold) {
  const Labels labels{{"app", "api"}, {"env", "prod"}};
  EXPECT_TRUE(Matches(R"({app="api", env="prod"})", labels));
  EXPECT_FALSE(Matches(R"({app="api", env="dev"})", labels));
  EXPECT_TRUE(Matches(R"({ app = "api" ,env!~"dev|test" })", labels));
}

TEST(LogqlSelector, RegexMatchersAreFullyAnchored) {
  EXPECT_TRUE(Matches(R"({level=~"warn|error"})", {{"level", "error"}}));
  EXPECT_FALSE(Matches(R"({level=~"warn|error"})", {{"level", "errors"}}));
  EXPECT_FALSE(Matches(R"({level=~"err"})", {{"level", "error"}}));
  EXPECT_TRUE(Matches(R"({level=~"err.*"})", {{"level", "error"}}));
  EXPECT_TRUE(Matches(R"({pod!~"canary-.*"})", {{"pod", "api-1"}}));
  EXPECT_FALSE(Matches(R"({pod!~"canary-.*"})", {{"pod", "canary-1"}}));
  EXPECT_TRUE(Matches(R"({pod!~"canary"})", {{"pod", "canary-1"}}));
}

TEST(LogqlSelector, LabelRegexDotMatchesNewlineButLineRegexDotDoesNot) {
  EXPECT_TRUE(Matches(R"({msg=~"a.b"})", {{"msg", "a\nb"}}));
  EXPECT_FALSE(LineMatches(R"({a=~".*"} |~ "a.b")", "a\nb"));
  EXPECT_TRUE(LineMatches(R"({a=~".*"} |~ "(?s)a.b")", "a\nb"));
}

TEST(LogqlSelector, MissingLabelComparesAsEmpty) {
  EXPECT_TRUE(Matches(R"({app=""})", {}));
  EXPECT_FALSE(Matches(R"({app="api"})", {}));
  EXPECT_TRUE(Matches(R"({app!="api"})", {}));
  EXPECT_TRUE(Matches(R"({app=~".*"})", {}));
  EXPECT_FALSE(Matches(R"({app=~".+"})", {}));
  EXPECT_TRUE(Matches(R"({app!~".+"})", {}));
}

TEST(LogqlSelector, GoNamedGroupSpellingIsAccepted) {
  EXPECT_TRUE(Matches(R"({app=~"(?<x>a)pi"})", {{"app", "api"}}));
}

TEST(LogqlSelector, StringsUseGoEscapesAndRawQuotes) {
  EXPECT_TRUE(Matches(R"({msg="a\"b\tc"})", {{"msg", "a\"b\tc"}}));
  EXPECT_TRUE(Matches(R"({path=~"\\d+"})", {{"path", "123"}}));
  EXPECT_TRUE(Matches(R"({path=~`\d+`})", {{"path", "123"}}));
  EXPECT_TRUE(LineMatches(R"({a="b"} |~ `\d{3}`)", "code 404"));
}

TEST(LogqlSelector, WithoutLineFiltersEveryLineMatches) {
  const auto s = LogqlSelector::Parse(R"({a="b"})");
  EXPECT_TRUE(s.line_filters().empty());
  EXPECT_TRUE(s.MatchesLine("anything"));
  EXPECT_TRUE(s.MatchesLine(""));
}

TEST(LogqlSelector, ContainsFilters) {
  EXPECT_TRUE(LineMatches(R"({a="b"} |= "timeout")", "GET /x timeout after 3s"));
  EXPECT_FALSE(LineMatches(R"({a="b"} |= "timeout")", "GET /x ok"));
  EXPECT_TRUE(LineMatches(R"({a="b"} != "debug")", "info: hello"));
  EXPECT_FALSE(LineMatches(R"({a="b"} != "debug")", "debug: hello"));
  EXPECT_TRUE(LineMatches(R"({a="b"} |= "")", "x"));
}

TEST(LogqlSelector, RegexFiltersAreUnanchored) {
  EXPECT_TRUE(LineMatches(R"({a="b"} |~ "status=5\\d\\d")", "method=GET status=503 t=1"));
  EXPECT_FALSE(LineMatches(R"({a="b"} |~ "status=5\\d\\d")", "status=200"));
  EXPECT_TRUE(LineMatches(R"({a="b"} !~ "(?i)health")", "GET /api"));
  EXPECT_FALSE(LineMatches(R"({a="b"} !~ "(?i)health")", "GET /HEALTHZ"));
}

TEST(LogqlSelector, ChainedFiltersMustAllHold) {
  const auto s = LogqlSelector::Parse(R"({app="api"} |= "error" != "retry" |~ "code=\\d+")");
  EXPECT_EQ(s.line_filters().size(), 3u);
  EXPECT_TRUE(s.MatchesLine("error code=12"));
  EXPECT_FALSE(s.MatchesLine("error code=12 retry"));
  EXPECT_FALSE(s.MatchesLine("error code=x"));
  EXPECT_FALSE(s.MatchesLine("code=1"));
}

TEST(LogqlSelector, ExposesParsedMatchers) {
  const auto s = LogqlSelector::Parse(R"({a="1", b!~"x"})");
  ASSERT_EQ(s.label_matchers().size(), 2u);
  EXPECT_EQ(s.label_matchers()[1].name, "b");
  EXPECT_EQ(s.label_matchers()[1].op, LogqlSelector::Op::kRegexNoMatch);
  EXPECT_EQ(s.label_matchers()[1].value, "x");
}

TEST(LogqlSelector, ErrorsQuoteSelectorAndPosition) {
  EXPECT_THAT(ErrorOf(R"({app="a" x="b"})"),
              AllOf(HasSubstr(R"(invalid selector '{app="a" x="b"}')"),
                    HasSubstr("expected ',' or '}' after a label matcher at position 9")));
}

TEST(LogqlSelector, StructuralErrors) {
  EXPECT_THAT(ErrorOf(""), HasSubstr("is empty"));
  EXPECT_THAT(ErrorOf(R"(app="a")"), HasSubstr("must start with '{'"));
  EXPECT_THAT(ErrorOf("{}"), HasSubstr("has no label matcher"));
  EXPECT_THAT(ErrorOf(R"({app="a")"), HasSubstr("ends before its closing '}'"));
  EXPECT_THAT(ErrorOf(R"({app="a",})"), HasSubstr("expected a label name at position 9"));
  EXPECT_THAT(ErrorOf(R"({1app="a"})"), HasSubstr("expected a label name"));
  EXPECT_THAT(ErrorOf(R"({app-x="a"})"), HasSubstr("expected an operator after label app"));
  EXPECT_THAT(ErrorOf(R"({app=="a"})"),
              HasSubstr("the value of label app must be a quoted string"));
  EXPECT_THAT(ErrorOf(R"({app=a})"), HasSubstr("must be a quoted string"));
  EXPECT_THAT(ErrorOf(R"({app='a'})"), HasSubstr("must be a quoted string"));
}

TEST(LogqlSelector, StringErrors) {
  EXPECT_THAT(ErrorOf(R"({app="a})"), HasSubstr("no closing double quote"));
  EXPECT_THAT(ErrorOf(R"({app="\q"})"), HasSubstr("invalid escape \\q"));
  EXPECT_THAT(ErrorOf(R"({a="b"} |= "x)"), HasSubstr("no closing double quote"));
  EXPECT_THAT(ErrorOf(R"({a="b"} |= x)"), HasSubstr("a line filter's argument must be a quoted"));
}

TEST(LogqlSelector, RegexErrorsNameThePattern) {
  EXPECT_THAT(ErrorOf(R"({app=~"(a"})"), AllOf(HasSubstr("invalid regex \"(a\""),
                                               HasSubstr("missing )"), HasSubstr("position 6")));
  EXPECT_THAT(ErrorOf(R"({a="b"} |~ "[x")"), HasSubstr("invalid regex \"[x\""));
}

TEST(LogqlSelector, PipelineStagesOtherThanLineFiltersAreErrors) {
  EXPECT_THAT(ErrorOf(R"({a="b"} | json)"), HasSubstr("only line filters may follow"));
  EXPECT_THAT(ErrorOf(R"({a="b"} |> "<_> x")"), HasSubstr("only line filters may follow"));
  EXPECT_THAT(ErrorOf(R"({a="b"} "x")"), HasSubstr("unexpected text after the selector"));
  EXPECT_THAT(ErrorOf(R"({a="b"} |= "x" or "y")"), HasSubstr("'or' between line filters"));
}

}  // namespace
}  // namespace skald::stages

namespace skald::stages {
namespace {

TEST(LogqlSelector, RandomInputOnlyFailsCleanly) {
  const std::vector<std::string> tokens = {"{",    "}",       "a",  "b_1", "=", "!=",    "=~",
                                           "!~",   "|=",      "|~", ",",   " ", "\"x\"", "\"(\"",
                                           "`.*`", "\"\\q\"", "\"", "|",   "or"};
  uint64_t seed = 3;
  auto next = [&seed]() {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return seed >> 33;
  };
  int parsed = 0;
  for (int i = 0; i < 20000; ++i) {
    // Half start as a valid selector, so that line filters get exercised too.
    std::string text = next() % 2 ? "{a=\"x\"} " : "";
    const int n = 1 + next() % 12;
    for (int k = 0; k < n; ++k) text += tokens[next() % tokens.size()];
    try {
      const auto s = LogqlSelector::Parse(text);
      (void)s.MatchesLine("some x line");
      (void)s.MatchesLabels([](std::string_view) { return std::optional<std::string_view>("x"); });
      ++parsed;
    } catch (const ConfigError&) {
    }
  }
  EXPECT_GT(parsed, 10);
}

}  // namespace
}  // namespace skald::stages
