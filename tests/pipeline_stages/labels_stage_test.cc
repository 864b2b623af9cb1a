#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

using ::testing::HasSubstr;
using testkit::BuildError;
using testkit::MakeEntry;
using testkit::RunOne;

TEST(LabelsStage, InvalidUtf8ValueIsSkipped) {
  auto out =
      RunOne("- regex: {expression: 'v=(?P<v>.*)'}\n- labels: {v: }", MakeEntry("v=\xff\xfe"));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].labels.Contains("v"));
}

TEST(LabelsStage, NumberValueBecomesItsText) {
  auto out = RunOne("- json: {expressions: {n: n}}\n- labels: {n: }", MakeEntry(R"({"n":0.5})"));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].labels.Get("n"), "0.5");
}

TEST(LabelsStage, InvalidNameIsAConfigError) {
  EXPECT_THAT(BuildError("- labels: {\"a.b\": }"),
              HasSubstr("pipeline stage 1 (labels): invalid label name \"a.b\""));
}

TEST(StaticLabelsStage, SetsFixedLabels) {
  auto out = RunOne("- static_labels: {env: prod}", MakeEntry("x", LabelSet{{"a", "1"}}));
  EXPECT_EQ(out[0].labels.ToString(), "{a=\"1\", env=\"prod\"}");
}

TEST(LabelAllowStage, KeepsOnlyListed) {
  auto out = RunOne("- labelallow: [a]", MakeEntry("x", LabelSet{{"a", "1"}, {"b", "2"}}));
  EXPECT_EQ(out[0].labels.ToString(), "{a=\"1\"}");
}

TEST(LabelDropStage, RemovesListed) {
  auto out = RunOne("- labeldrop: [a]", MakeEntry("x", LabelSet{{"a", "1"}, {"b", "2"}}));
  EXPECT_EQ(out[0].labels.ToString(), "{b=\"2\"}");
}

TEST(StructuredMetadataStage, TraceIdGoesToMetadataNotLabels) {
  auto out = RunOne(R"(
- json: {expressions: {traceID: traceID}}
- structured_metadata: {traceID: }
)",
                    MakeEntry(R"({"traceID":"abc"})"));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].labels.Contains("traceID"));
  ASSERT_EQ(out[0].structured_metadata.size(), 1u);
  EXPECT_EQ(out[0].structured_metadata[0], (MetadataPair{"traceID", "abc"}));
}

TEST(TenantStage, FromValue) {
  auto out = RunOne("- tenant: {value: t1}", MakeEntry("x"));
  EXPECT_EQ(out[0].tenant, "t1");
}

TEST(TenantStage, InvalidValueIsAConfigError) {
  EXPECT_THAT(BuildError("- tenant: {value: 'a|b'}"),
              HasSubstr("pipeline stage 1 (tenant): field \"value\": tenant 'a|b' holds '|'"));
}

TEST(OutputStage, ReplacesLine) {
  EXPECT_EQ(testkit::OnlyLine("- regex: {expression: 'm=(?P<m>\\w+)'}\n- output: {source: m}",
                              "a m=hello"),
            "hello");
}

}  // namespace
}  // namespace skald::stages
