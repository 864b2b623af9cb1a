#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

using testkit::MakeEntry;
using testkit::RunOne;

TEST(LabelAllowStage, KeepsOnlyListed) {
  auto out = RunOne("- labelallow: [a]", MakeEntry("x", LabelSet{{"a", "1"}, {"b", "2"}}));
  EXPECT_EQ(out[0].labels.ToString(), "{a=\"1\"}");
}

TEST(LabelDropStage, RemovesListed) {
  auto out = RunOne("- labeldrop: [a]", MakeEntry("x", LabelSet{{"a", "1"}, {"b", "2"}}));
  EXPECT_EQ(out[0].labels.ToString(), "{b=\"2\"}");
}

}  // namespace
}  // namespace skald::stages
