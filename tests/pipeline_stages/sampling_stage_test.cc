#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

using testkit::RecordingObserver;

TEST(SamplingStage, KeepsAboutRateOfEntries) {
  Pipeline::SetSamplingSeedForTesting(7);
  RecordingObserver obs;
  std::vector<std::string> lines(10000, "x");
  auto out = testkit::RunLines("- sampling: {rate: 0.25}", lines, {}, &obs);
  Pipeline::SetSamplingSeedForTesting(0);
  EXPECT_GT(out.size(), 2200u);
  EXPECT_LT(out.size(), 2800u);
  EXPECT_EQ(out.size() + obs.drops.size(), 10000u);
  EXPECT_EQ(obs.drops[0], "sampling_stage");
}

// The threshold was rate * 2^64 converted to an integer: 2^64 does not fit (undefined
// behaviour, reported by UBSan's float-cast-overflow under `make asan`).
TEST(SamplingStage, RateOneKeepsEveryEntry) {
  RecordingObserver obs;
  std::vector<std::string> lines(1000, "x");
  EXPECT_EQ(testkit::RunLines("- sampling: {rate: 1}", lines, {}, &obs).size(), 1000u);
  EXPECT_TRUE(obs.drops.empty());
}

TEST(SamplingStage, RateJustBelowOneKeepsAlmostEveryEntry) {
  Pipeline::SetSamplingSeedForTesting(7);
  std::vector<std::string> lines(1000, "x");
  auto out = testkit::RunLines("- sampling: {rate: 0.9999999999999999}", lines);
  Pipeline::SetSamplingSeedForTesting(0);
  EXPECT_EQ(out.size(), 1000u);
}

TEST(SamplingStage, CustomDropReason) {
  RecordingObserver obs;
  testkit::RunLines("- sampling: {rate: 0, drop_counter_reason: sampled_out}", {"x"}, {}, &obs);
  EXPECT_EQ(obs.drops, std::vector<std::string>{"sampled_out"});
}

TEST(SamplingStage, RateOutsideRangeIsAConfigError) {
  EXPECT_THAT(testkit::BuildError("- sampling: {rate: -0.1}"),
              ::testing::HasSubstr("pipeline stage 1 (sampling): field \"rate\""));
}

}  // namespace
}  // namespace skald::stages
