#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

using ::testing::HasSubstr;
using testkit::BuildError;
using testkit::OnlyLine;

TEST(RegexStage, GoNamedGroupsAreRewrittenForRe2) {
  EXPECT_EQ(OnlyLine("- regex: {expression: 'id=(?<id>\\d+)'}\n- output: {source: id}", "id=42"),
            "42");
}

TEST(RegexStage, SyntaxErrorNamesFieldAndPattern) {
  EXPECT_THAT(BuildError("- regex: {expression: '(?P<a>'}"),
              HasSubstr("pipeline stage 1 (regex): field \"expression\": invalid regular "
                        "expression \"(?P<a>\""));
}

}  // namespace
}  // namespace skald::stages
