// JmesExpression's bound on the work one Search does (the language itself is checked by
// jmespath_compliance_test.cc against go-jmespath's suite).
#include "pipeline_stages/jmespath_expression.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

std::string Repeated(std::string_view first, std::string_view step, int times) {
  std::string e(first);
  for (int i = 0; i < times; ++i) e += step;
  return e;
}

// `[@, @]` after each pipe doubles the value: forty pipes would make 2^40 copies of the line.
// The search stops at its bound, as at a run-time error, instead of taking the host's memory.
TEST(JmesExpression, AValueDoubledAtEveryPipeStopsAtTheBound) {
  const JmesExpression doubling(Repeated("@", " | [@, @]", 40));
  EXPECT_FALSE(doubling.Search(nlohmann::json::parse(R"({"a": "0123456789"})")));
  // Ten doublings (1,024 copies) are within it and give Go's answer.
  const JmesExpression ten(Repeated("a", " | [@, @]", 10));
  const std::optional<nlohmann::json> got = ten.Search(nlohmann::json::parse(R"({"a": "x"})"));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->flatten().size(), 1024u);
}

// The same with a string: join doubles it at every pipe.
TEST(JmesExpression, AStringDoubledAtEveryPipeStopsAtTheBound) {
  const JmesExpression doubling(Repeated("a", " | join('', [@, @])", 40));
  EXPECT_FALSE(doubling.Search(nlohmann::json::parse(R"({"a": "0123456789"})")));
  const JmesExpression ten(Repeated("a", " | join('', [@, @])", 10));
  const std::optional<nlohmann::json> got = ten.Search(nlohmann::json::parse(R"({"a": "ab"})"));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->get<std::string>().size(), 2048u);
}

// A projection over every element of a large line is ordinary work, well within the bound.
TEST(JmesExpression, AProjectionOverALargeLineIsWithinTheBound) {
  nlohmann::json doc = {{"items", nlohmann::json::array()}};
  for (int i = 0; i < 50'000; ++i) doc["items"].push_back({{"x", i}, {"name", "item"}});
  JmesNumbersToDoubles(doc);
  const std::optional<nlohmann::json> got =
      JmesExpression("items[?x >= `0`].{n: name, x: x} | length(@)").Search(doc);
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, 50'000.0);
}

// A key costs what it holds: 600 copies of an object with a 250,000-byte key took 2.88 GB
// before keys were charged (review finding); now the search stops at its bound.
TEST(JmesExpression, LongKeysArePaidFor) {
  const nlohmann::json doc = nlohmann::json::parse(R"({")" + std::string(250'000, 'k') + R"(":1})");
  const JmesExpression copies(Repeated("[@", ",@", 599) + "] | " + Repeated("[@", ",@", 19) + "]");
  EXPECT_FALSE(copies.Search(doc));
  EXPECT_TRUE(JmesExpression("[@, @]").Search(doc));
}

// join is paid for before it copies its separator n - 1 times: a 100,000-byte separator from
// the line and 40,000 empty strings would be 4 GB (review finding: bad_alloc after 9.2 s).
TEST(JmesExpression, AJoinIsPaidForBeforeItIsBuilt) {
  std::string line = R"({"s":")" + std::string(100'000, 'x') + R"(","a":[)";
  for (int i = 0; i < 40'000; ++i) line += i ? R"(,"")" : R"("")";
  line += "]}";
  EXPECT_FALSE(JmesExpression("join(s, a)").Search(nlohmann::json::parse(line)));
  const std::optional<nlohmann::json> small =
      JmesExpression("join('-', b)").Search(nlohmann::json::parse(R"({"b":["x","y","z"]})"));
  ASSERT_TRUE(small);
  EXPECT_EQ(*small, "x-y-z");
}

// contains() on strings finds what Go's strings.Contains finds (the search is memmem's, linear:
// std::string::find took 0.08 s for this pair, 26.5 s for a 4 KB expression of them).
TEST(JmesExpression, ContainsOnStrings) {
  const nlohmann::json doc = nlohmann::json::parse(
      R"({"s":")" + std::string(170'000, 'a') + R"(","t":")" + std::string(85'000, 'a') +
      R"(b","u":")" + std::string(85'000, 'a') + R"("})");
  EXPECT_EQ(JmesExpression("contains(s, t)").Search(doc), nlohmann::json(false));
  EXPECT_EQ(JmesExpression("contains(s, u)").Search(doc), nlohmann::json(true));
  EXPECT_EQ(JmesExpression("contains(s, '')").Search(doc), nlohmann::json(true));
  EXPECT_EQ(JmesExpression("contains(u, s)").Search(doc), nlohmann::json(false));
}

// A line nested 120,000 deep (240 KB, under the default line limit) crashed the plugin through
// the decoder's recursion (review finding: SIGSEGV). It is malformed, as Promtail finds it
// (Go's decoder stops at 10,000 levels): nothing is extracted and the entry goes on.
TEST(JmesExpression, ADeeplyNestedLineIsMalformedNotACrash) {
  const std::string line = R"({"a":)" + std::string(120'000, '[') + std::string(120'000, ']') + "}";
  const std::string out = testkit::OnlyLine(
      "- json: {expressions: {r: 'length(@)'}}\n- template: {source: o, template: '{{ .r }}'}\n"
      "- output: {source: o}",
      line);
  EXPECT_TRUE(out == "<no value>") << out.substr(0, 60);  // nothing extracted, no crash
}

}  // namespace
}  // namespace skald::stages
