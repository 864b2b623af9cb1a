#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

using ::testing::HasSubstr;
using testkit::BuildError;
using testkit::OnlyLine;
using testkit::RecordingObserver;
using testkit::RunLines;

TEST(TemplateStage, UnknownFunctionIsAConfigError) {
  EXPECT_THAT(BuildError("- template: {source: a, template: '{{ nope .Value }}'}"),
              HasSubstr("pipeline stage 1 (template): field \"template\""));
}

TEST(TemplateStage, FailedExecutionLeavesValue) {
  // div by zero fails in Go: the key keeps its value.
  EXPECT_EQ(OnlyLine(R"(
- regex: {expression: '(?P<n>\d+)'}
- template: {source: n, template: '{{ div .Value 0 }}'}
- output: {source: n}
)",
                     "7"),
            "7");
}

// An output over GoTemplate::kMaxOutputBytes is a failed execution (the key keeps its value)
// that the observer hears of.
TEST(TemplateStage, AnOutputOverTheBoundLeavesTheValueAndIsReported) {
  RecordingObserver obs;
  auto out = RunLines(R"(
- regex: {expression: '(?P<n>\d+)'}
- template: {source: n, template: '{{ repeat 600000 .Value }}'}
- output: {source: n}
)",
                      {"7", "12"}, {}, &obs);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].line.size(), 600000u);
  EXPECT_EQ(out[1].line, "12");
  EXPECT_EQ(obs.failures, (std::vector<std::string>{"template: output_too_long"}));
}

}  // namespace
}  // namespace skald::stages
