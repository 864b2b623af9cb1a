#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

TEST(CriStage, MergesPartialLines) {
  auto out = testkit::RunLines(
      "- cri: {}", {"2020-01-01T00:00:00Z stdout P ab", "2020-01-01T00:00:01Z stdout F cd"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].line, "abcd");
  EXPECT_EQ(out[0].timestamp_ns, 1577836800000000000);
}

TEST(CriStage, MaxPartialLineSizeTruncates) {
  auto out =
      testkit::RunLines("- cri: {max_partial_line_size: 3, max_partial_line_size_truncate: true}",
                        {"2020-01-01T00:00:00Z stdout P ab", "2020-01-01T00:00:01Z stdout P cd",
                         "2020-01-01T00:00:01Z stdout F ef"});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].line, "abc");
  EXPECT_EQ(out[1].line, "ef");
}

}  // namespace
}  // namespace skald::stages
