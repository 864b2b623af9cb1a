#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

using ::testing::HasSubstr;
using testkit::FakeClock;
using testkit::MakeEntry;
using testkit::RecordingObserver;

TEST(DropStage, OlderThanUsesThePipelineClock) {
  FakeClock clock(2'000'000'000'000);
  RecordingObserver obs;
  auto p = Pipeline::FromYaml("- drop: {older_than: 1s}", &obs, &clock);
  std::vector<Entry> out;
  p->Process(MakeEntry("old", {}, 2'000'000'000'000 - 2'000'000'000), out);
  p->Process(MakeEntry("new", {}, 2'000'000'000'000 - 500'000'000), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].line, "new");
  EXPECT_EQ(obs.drops, std::vector<std::string>{"drop_stage"});
}

TEST(DropStage, LongerThanKib) {
  auto out = testkit::RunLines("- drop: {longer_than: 1KiB}",
                               {std::string(1024, 'a'), std::string(1025, 'a')});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].line.size(), 1024u);
}

TEST(DropStage, ValueNeedsSource) {
  EXPECT_THAT(testkit::BuildError("- drop: {value: x}"),
              HasSubstr("pipeline stage 1 (drop): field \"value\": needs source"));
}

}  // namespace
}  // namespace skald::stages
