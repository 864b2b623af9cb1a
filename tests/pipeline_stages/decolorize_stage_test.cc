#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

using testkit::OnlyLine;

TEST(DecolorizeStage, StripsSgrSequences) {
  EXPECT_EQ(OnlyLine("- decolorize: {}", "\x1b[1;31mred\x1b[0m"), "red");
}

// What Promtail's expression also strips: `tput sgr0` (ESC[m ESC(B), a reset (ESC c), private
// modes (ESC[?25h), and CSI introduced by U+009B; a lone ESC and an unfinished sequence stay.
TEST(DecolorizeStage, StripsWhatPromtailStrips) {
  EXPECT_EQ(OnlyLine("- decolorize: {}", "a\x1b[m\x1b(Bb"), "ab");
  EXPECT_EQ(OnlyLine("- decolorize: {}",
                     "\x1b"
                     "cclear"),
            "clear");
  EXPECT_EQ(OnlyLine("- decolorize: {}", "\x1b[?25hcursor"), "cursor");
  EXPECT_EQ(OnlyLine("- decolorize: {}",
                     "\xc2\x9b"
                     "31mred"),
            "red");
  EXPECT_EQ(OnlyLine("- decolorize: {}", "lone \x1b and \x1b["), "lone \x1b and \x1b[");
  EXPECT_EQ(OnlyLine("- decolorize: {}", "bad \xff\x1b[0m utf8"), "bad \xff utf8");
}

}  // namespace
}  // namespace skald::stages
