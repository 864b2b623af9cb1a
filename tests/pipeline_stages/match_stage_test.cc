#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

using ::testing::HasSubstr;
using testkit::BuildError;
using testkit::RecordingObserver;
using testkit::RunLines;

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
