#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

using testkit::OnlyLine;

TEST(LogfmtStage, ExtractsQuotedValues) {
  EXPECT_EQ(OnlyLine("- logfmt: {mapping: {m: msg}}\n- output: {source: m}",
                     "level=info msg=\"a b \\\"c\\\"\" x=1"),
            "a b \"c\"");
}

TEST(LogfmtStage, UnicodeEscape) {
  EXPECT_EQ(OnlyLine("- logfmt: {mapping: {m: }}\n- output: {source: m}", "m=\"caf\\u00e9\""),
            "café");
}

}  // namespace
}  // namespace skald::stages
