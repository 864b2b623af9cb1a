// JmesExpression's bound on the work one Search does (the language itself is checked by
// jmespath_compliance_test.cc against go-jmespath's suite).
#include "pipeline_stages/jmespath_expression.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

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

}  // namespace
}  // namespace skald::stages
