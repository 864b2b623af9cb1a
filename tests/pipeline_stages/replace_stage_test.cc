#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

using testkit::OnlyLine;
using testkit::RecordingObserver;
using testkit::RunLines;

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

}  // namespace
}  // namespace skald::stages
