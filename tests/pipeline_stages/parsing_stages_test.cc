// regex, logfmt, decolorize, docker, cri.
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

TEST(LogfmtStage, ExtractsQuotedValues) {
  EXPECT_EQ(OnlyLine("- logfmt: {mapping: {m: msg}}\n- output: {source: m}",
                     "level=info msg=\"a b \\\"c\\\"\" x=1"),
            "a b \"c\"");
}

TEST(LogfmtStage, UnicodeEscape) {
  EXPECT_EQ(OnlyLine("- logfmt: {mapping: {m: }}\n- output: {source: m}", "m=\"caf\\u00e9\""),
            "café");
}

TEST(DecolorizeStage, StripsSgrSequences) {
  EXPECT_EQ(OnlyLine("- decolorize: {}", "\x1b[1;31mred\x1b[0m"), "red");
}

TEST(DockerStage, ParsesJsonFileRecord) {
  auto out = testkit::RunOne(
      "- docker: {}",
      testkit::MakeEntry(R"({"log":"hi\n","stream":"stdout","time":"2020-01-01T00:00:00Z"})"));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].line, "hi\n");
  EXPECT_EQ(out[0].labels.Get("stream"), "stdout");
  EXPECT_EQ(out[0].timestamp_ns, 1577836800000000000);
}

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
