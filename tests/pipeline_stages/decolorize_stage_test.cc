#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

using testkit::OnlyLine;

TEST(DecolorizeStage, StripsSgrSequences) {
  EXPECT_EQ(OnlyLine("- decolorize: {}", "\x1b[1;31mred\x1b[0m"), "red");
}

}  // namespace
}  // namespace skald::stages
