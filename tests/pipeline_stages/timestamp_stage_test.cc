#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

using ::testing::HasSubstr;
using testkit::BuildError;
using testkit::RunLines;

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

}  // namespace
}  // namespace skald::stages
