#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

using ::testing::HasSubstr;
using testkit::BuildError;
using testkit::FakeClock;
using testkit::MakeEntry;
using testkit::RecordingObserver;

TEST(LimitStage, DropTrueDropsBeyondBurstAndCountsReason) {
  FakeClock clock;
  RecordingObserver obs;
  auto p = Pipeline::FromYaml("- limit: {rate: 10, burst: 3, drop: true}", &obs, &clock);
  std::vector<Entry> out;
  for (int i = 0; i < 5; ++i) p->Process(MakeEntry(std::to_string(i)), out);
  EXPECT_EQ(out.size(), 3u);
  EXPECT_EQ(obs.drops, (std::vector<std::string>{"ratelimit_drop_stage", "ratelimit_drop_stage"}));
  clock.Advance(100'000'000);  // one token at 10/s
  p->Process(MakeEntry("later"), out);
  EXPECT_EQ(out.size(), 4u);
}

TEST(LimitStage, DropFalseDelaysInOrderWithoutBlocking) {
  FakeClock clock;
  auto p = Pipeline::FromYaml("- limit: {rate: 2, burst: 1}", nullptr, &clock);
  std::vector<Entry> out;
  for (int i = 0; i < 4; ++i) p->Process(MakeEntry(std::to_string(i)), out);
  ASSERT_EQ(out.size(), 1u);  // the others are held, Process returned at once
  clock.Advance(500'000'000);
  p->Flush(clock.NowNs(), false, out);
  ASSERT_EQ(out.size(), 2u);
  clock.Advance(1'000'000'000);
  p->Flush(clock.NowNs(), false, out);
  ASSERT_EQ(out.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i].line, std::to_string(i));
}

// What a delaying limit holds is told to the host (the plugin stops reading a stream's journal
// while its pipeline holds its window), and is at most 16 MiB: beyond, the oldest go, counted.
TEST(LimitStage, DropFalseTellsWhatItHoldsAndHoldsAtMostSixteenMebibytes) {
  FakeClock clock;
  RecordingObserver obs;
  auto p = Pipeline::FromYaml("- limit: {rate: 1, burst: 1}", &obs, &clock);
  std::vector<Entry> out;
  const std::string line(1024 * 1024, 'x');
  p->Process(MakeEntry(line), out);  // takes the token
  for (int i = 0; i < 3; ++i) p->Process(MakeEntry(line), out);
  EXPECT_EQ(p->HeldBytes(), 3 * line.size());
  for (int i = 0; i < 20; ++i) p->Process(MakeEntry(line), out);
  EXPECT_EQ(p->HeldBytes(), 16 * line.size());
  EXPECT_EQ(obs.drops, std::vector<std::string>(7, "limit_buffer_full"));
  p->Flush(clock.NowNs(), true, out);
  EXPECT_EQ(p->HeldBytes(), 0u);
  EXPECT_EQ(out.size(), 17u);
}

TEST(LimitStage, NewEntriesQueueBehindHeldOnes) {
  FakeClock clock;
  auto p = Pipeline::FromYaml("- limit: {rate: 1, burst: 1}", nullptr, &clock);
  std::vector<Entry> out;
  p->Process(MakeEntry("a"), out);
  p->Process(MakeEntry("b"), out);
  clock.Advance(1'000'000'000);
  p->Process(MakeEntry("c"), out);  // b gets the token first
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].line, "b");
  p->Flush(clock.NowNs(), true, out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2].line, "c");
}

TEST(LimitStage, ByLabelNameLimitsEachValueSeparately) {
  FakeClock clock;
  auto p = Pipeline::FromYaml("- limit: {rate: 1, burst: 1, drop: true, by_label_name: lvl}",
                              nullptr, &clock);
  std::vector<Entry> out;
  for (const char* v : {"a", "b", "a", "b", "c"}) {
    p->Process(MakeEntry("x", LabelSet{{"lvl", v}}), out);
  }
  EXPECT_EQ(out.size(), 3u);
}

// As Promtail's validateLimitConfig: a limit by label must drop; and max_distinct_labels below
// 10,000 is raised to 10,000 (with 3 asked for, a 4th value does not evict the first).
TEST(LimitStage, ByLabelNameNeedsDropAndKeepsAtLeastTenThousandValues) {
  EXPECT_THAT(BuildError("- limit: {rate: 1, burst: 1, by_label_name: lvl}"),
              HasSubstr("needs drop: true"));
  FakeClock clock;
  auto p = Pipeline::FromYaml(
      "- limit: {rate: 1, burst: 1, drop: true, by_label_name: lvl, max_distinct_labels: 3}",
      nullptr, &clock);
  std::vector<Entry> out;
  for (const char* v : {"a", "b", "c", "d", "a"}) {
    p->Process(MakeEntry("x", LabelSet{{"lvl", v}}), out);
  }
  EXPECT_EQ(out.size(), 4u);  // the second "a" finds a's bucket empty
}

}  // namespace
}  // namespace skald::stages
