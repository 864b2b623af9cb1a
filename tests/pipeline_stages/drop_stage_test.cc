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

// Sizes as Promtail reads them (c2h5oh/datasize after upper-casing): kb is 1024 bytes; KiB and
// fractions are not sizes.
TEST(DropStage, LongerThanSizesAreReadAsPromtailReadsThem) {
  for (const char* size : {"1kb", "1KB", "1 k", "1kilobytes", "1024", "1024b"}) {
    auto out = testkit::RunLines(std::string("- drop: {longer_than: '") + size + "'}",
                                 {std::string(1024, 'a'), std::string(1025, 'a')});
    ASSERT_EQ(out.size(), 1u) << size;
    EXPECT_EQ(out[0].line.size(), 1024u) << size;
  }
  for (const char* bad : {"1KiB", "1.5kb", " 1kb", "kb", "99999999999999999999", "16777216tb"}) {
    EXPECT_THAT(testkit::BuildError(std::string("- drop: {longer_than: '") + bad + "'}"),
                HasSubstr("is not a size"))
        << bad;
  }
}

TEST(DropStage, ValueNeedsSource) {
  EXPECT_THAT(testkit::BuildError("- drop: {value: x}"),
              HasSubstr("pipeline stage 1 (drop): field \"value\": needs source"));
}

}  // namespace
}  // namespace skald::stages
