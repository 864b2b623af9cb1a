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

// With the host's line size (loki-max-line-size) a block is emitted before it would exceed it,
// or when it reaches it: max_lines alone lets 128 long lines make one block of megabytes.
TEST(MultilineStage, ABlockIsEmittedAtTheMaxLineSize) {
  FakeClock clock;
  PipelineOptions options;
  options.clock = &clock;
  options.max_line_size = 20;
  auto p = Pipeline::FromYaml("- multiline: {firstline: '^S', max_wait_time: 1h}", options);
  std::vector<Entry> out;
  for (const char* line : {"S 1", "  abc", "  defgh", "  ij", "  klmnopqr", "S 2", "  x"}) {
    p->Process(MakeEntry(line), out);
  }
  p->Flush(clock.NowNs(), true, out);
  std::vector<std::string> lines;
  for (const Entry& e : out) lines.push_back(e.line);
  // "S 1\n  abc\n  defgh" is 17 bytes; "\n  ij" would make 22.
  EXPECT_EQ(lines,
            (std::vector<std::string>{"S 1\n  abc\n  defgh", "  ij\n  klmnopqr", "S 2\n  x"}));
  // A block that reaches the size exactly goes at once.
  options.max_line_size = 9;
  p = Pipeline::FromYaml("- multiline: {firstline: '^S', max_wait_time: 1h}", options);
  out.clear();
  p->Process(MakeEntry("S 1"), out);
  p->Process(MakeEntry("  abc"), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].line, "S 1\n  abc");
  EXPECT_FALSE(p->Holds());
  // A single line longer than the size is a block of its own (the host cuts it into pieces).
  p->Process(MakeEntry("S 0123456789"), out);
  p->Process(MakeEntry("  y"), out);
  p->Flush(clock.NowNs(), true, out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1].line, "S 0123456789");
  EXPECT_EQ(out[2].line, "  y");
}

}  // namespace
}  // namespace skald::stages
