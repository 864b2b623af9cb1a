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
// What go-logfmt v0.6.1 (Promtail's) makes of these; each expectation was Promtail's output in
// the differential fuzzer's -try run.
TEST(LogfmtStage, QuotedValuesUnquoteAsGoLogfmtDoes) {
  const char* kStages = "- logfmt: {mapping: {w: w}}\n- output: {source: w}";
  EXPECT_EQ(OnlyLine(kStages, "w=\"a\\ud83d\\ude00b\""),
            "a\xF0\x9F\x98\x80"
            "b");  // a pair
  EXPECT_EQ(OnlyLine(kStages, "w=\"a\\ud800\\u0041\""),
            "a\xEF\xBF\xBD"
            "A");  // lone: U+FFFD
  EXPECT_EQ(OnlyLine(kStages, "w=\"it\\'s\""), "it's");
  // Without a backslash the value is taken as it is; with one, a control character makes it
  // invalid (nothing is extracted: the line stays) and a stray byte becomes U+FFFD.
  EXPECT_EQ(OnlyLine(kStages,
                     "w=\"a\x01"
                     "b\""),
            "a\x01"
            "b");
  EXPECT_EQ(OnlyLine(kStages, "w=\"a\x01\\nb\""), "w=\"a\x01\\nb\"");
  EXPECT_EQ(OnlyLine(kStages,
                     "w=\"a\xff"
                     "b\""),
            "a\xff"
            "b");
  EXPECT_EQ(OnlyLine(kStages,
                     "w=\"a\xff"
                     "b\\n\""),
            "a\xEF\xBF\xBD"
            "b\n");
}

TEST(LogfmtStage, AKeyWithAStrayByteOrUfffdStopsTheDecodingAndDelIsAKeyCharacter) {
  const char* kStages = "- logfmt: {mapping: {w: w}}\n- output: {source: w}";
  EXPECT_EQ(OnlyLine(kStages,
                     "w=1 a\xff"
                     "b=2 w=3"),
            "1");
  EXPECT_EQ(OnlyLine(kStages,
                     "w=1 a\xEF\xBF\xBD"
                     "b=2 w=3"),
            "1");
  EXPECT_EQ(OnlyLine(kStages, "w=1 \xC3\xA9=2 w=3"), "3");  // é is a fine key
  EXPECT_EQ(OnlyLine("- logfmt: {mapping: {v: \"a\\x7fb\"}}\n- output: {source: v}",
                     "a\x7f"
                     "b=1"),
            "1");
}

}  // namespace skald::stages
