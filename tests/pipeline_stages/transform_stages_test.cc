// template, replace, pack, timestamp, match.
#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

using ::testing::HasSubstr;
using testkit::BuildError;
using testkit::MakeEntry;
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

// Each capture may render up to the bound: the line as a whole is held to it too.
TEST(ReplaceStage, AResultOverTheBoundLeavesTheLineAndIsReported) {
  RecordingObserver obs;
  const std::string line = "a b c d e";
  auto out = RunLines("- replace: {expression: '(\\w)', replace: '{{ repeat 300000 .Value }}'}",
                      {line, "a"}, {}, &obs);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].line, line);
  EXPECT_EQ(out[1].line.size(), 300000u);
  EXPECT_EQ(obs.failures, (std::vector<std::string>{"replace: output_too_long"}));
}

TEST(ReplaceStage, ReplacesEachGroupOfEachMatch) {
  EXPECT_EQ(OnlyLine("- replace: {expression: '(\\d+)-(\\d+)', replace: '<{{ .Value }}>'}",
                     "1-2 and 33-44"),
            "<1>-<2> and <33>-<44>");
}

TEST(ReplaceStage, EmptyMatchesDoNotLoop) {
  EXPECT_EQ(OnlyLine("- replace: {expression: '(x*)', replace: '-'}", "ab"), "-a-b-");
}

TEST(PackStage, SortsKeysAndPutsEntryLast) {
  auto out = testkit::RunOne("- pack: {labels: [z, a], ingest_timestamp: false}",
                             MakeEntry("line", LabelSet{{"a", "1"}, {"z", "2"}, {"k", "3"}}));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].line, R"({"a":"1","z":"2","_entry":"line"})");
  EXPECT_EQ(out[0].labels.ToString(), "{k=\"3\"}");
}

TEST(TimestampStage, FudgeAddsOneNanosecondPerFailure) {
  auto out = testkit::RunLines(R"(
- regex: {expression: 't=(?P<t>\S+)'}
- timestamp: {source: t, format: RFC3339Nano}
)",
                               {"t=2020-01-01T00:00:00Z", "t=bad", "t=bad"});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1].timestamp_ns, out[0].timestamp_ns + 1);
  EXPECT_EQ(out[2].timestamp_ns, out[0].timestamp_ns + 2);
}

TEST(TimestampStage, UnknownFormatNamesTheField) {
  EXPECT_THAT(BuildError("- timestamp: {source: t, format: YYYY-MM-DD}"),
              HasSubstr("pipeline stage 1 (timestamp): field \"format\""));
}

TEST(MatchStage, DropActionCountsReason) {
  testkit::RecordingObserver obs;
  auto out = testkit::RunLines(R"(
- match: {selector: '{app="x"} |= "debug"', action: drop, drop_counter_reason: dbg}
)",
                               {"debug 1", "info 2"}, LabelSet{{"app", "x"}}, &obs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].line, "info 2");
  EXPECT_EQ(obs.drops, std::vector<std::string>{"dbg"});
}

TEST(MatchStage, NestedErrorNamesBothPositions) {
  EXPECT_THAT(BuildError(R"(
- match:
    selector: '{a="b"}'
    stages:
      - static_labels: {x: y}
      - regex: {expression: '('}
)"),
              HasSubstr("pipeline stage 1 (match) > stage 2 (regex): field \"expression\""));
}

}  // namespace
}  // namespace skald::stages
