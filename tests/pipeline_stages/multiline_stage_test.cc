#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

using testing::FakeClock;
using testing::MakeEntry;

TEST(MultilineStage, JoinsStackTraceIntoOneEntry) {
  auto out = testing::RunLines("- multiline: {firstline: '^\\d{4}-'}",
                               {"2024-01-01 boom", "  at x", "  at y", "2024-01-01 next"});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].line, "2024-01-01 boom\n  at x\n  at y");
}

TEST(MultilineStage, MaxWaitTimeFlushesOnlyAfterSilence) {
  FakeClock clock;
  auto p =
      Pipeline::FromYaml("- multiline: {firstline: '^S', max_wait_time: 500ms}", nullptr, &clock);
  std::vector<Entry> out;
  p->Process(MakeEntry("S"), out);
  clock.Advance(400'000'000);
  p->Process(MakeEntry("c1"), out);  // resets the silence timer
  clock.Advance(400'000'000);
  p->Flush(clock.NowNs(), false, out);
  EXPECT_TRUE(out.empty());
  clock.Advance(100'000'000);
  p->Flush(clock.NowNs(), false, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].line, "S\nc1");
}

TEST(MultilineStage, MaxLinesCapsABlock) {
  auto out =
      testing::RunLines("- multiline: {firstline: '^S', max_lines: 3}", {"S", "1", "2", "3", "4"});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].line, "S\n1\n2");
  EXPECT_EQ(out[1].line, "3\n4");
}

}  // namespace
}  // namespace skald::stages
