#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

TEST(OutputStage, ReplacesLine) {
  EXPECT_EQ(testkit::OnlyLine("- regex: {expression: 'm=(?P<m>\\w+)'}\n- output: {source: m}",
                              "a m=hello"),
            "hello");
}

}  // namespace
}  // namespace skald::stages
