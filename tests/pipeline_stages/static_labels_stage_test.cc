#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

using testkit::MakeEntry;
using testkit::RunOne;

TEST(StaticLabelsStage, SetsFixedLabels) {
  auto out = RunOne("- static_labels: {env: prod}", MakeEntry("x", LabelSet{{"a", "1"}}));
  EXPECT_EQ(out[0].labels.ToString(), "{a=\"1\", env=\"prod\"}");
}

}  // namespace
}  // namespace skald::stages
