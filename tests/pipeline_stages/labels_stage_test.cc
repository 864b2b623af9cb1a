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

}  // namespace
}  // namespace skald::stages
