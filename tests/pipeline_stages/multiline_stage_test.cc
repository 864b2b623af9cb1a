#include "pipeline_stages/multiline_stage.h"

#include <algorithm>

#include "tests/pipeline_stages/stage_test_util.h"

namespace skald::stages {
namespace {

using testkit::FakeClock;
using testkit::MakeEntry;

TEST(MultilineStage, JoinsStackTraceIntoOneEntry) {
  auto out = testkit::RunLines("- multiline: {firstline: '^\\d{4}-'}",
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
      testkit::RunLines("- multiline: {firstline: '^S', max_lines: 3}", {"S", "1", "2", "3", "4"});
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

std::vector<std::string> Lines(const std::vector<Entry>& out) {
  std::vector<std::string> lines;
  for (const Entry& e : out) lines.push_back(e.line);
  return lines;
}

// Promtail keeps a block per label set: the plugin sets `source` before the stages, so a
// container's stderr lines never join a block its stdout opened, however they interleave.
TEST(MultilineStage, EachLabelSetHasItsOwnBlock) {
  FakeClock clock;
  auto p = Pipeline::FromYaml("- multiline: {firstline: '^START'}", nullptr, &clock);
  const LabelSet out_labels{{"container_name", "web"}, {"source", "stdout"}};
  const LabelSet err_labels{{"container_name", "web"}, {"source", "stderr"}};
  std::vector<Entry> out;
  p->Process(MakeEntry("START 1", out_labels), out);
  p->Process(MakeEntry("err a", err_labels), out);
  p->Process(MakeEntry("  1.1", out_labels), out);
  p->Process(MakeEntry("err b", err_labels), out);
  p->Process(MakeEntry("  1.2", out_labels), out);
  p->Process(MakeEntry("START 2", out_labels), out);
  p->Process(MakeEntry("err c", err_labels), out);
  p->Process(MakeEntry("  2.1", out_labels), out);
  p->Flush(clock.NowNs(), true, out);
  // stderr has seen no firstline: its lines pass through at once.
  EXPECT_EQ(Lines(out), (std::vector<std::string>{"err a", "err b", "START 1\n  1.1\n  1.2",
                                                  "err c", "START 2\n  2.1"}));
  EXPECT_EQ(out[2].labels, out_labels);
  EXPECT_EQ(out[0].labels, err_labels);
}

TEST(MultilineStage, BlocksOfTwoLabelSetsInterleave) {
  FakeClock clock;
  auto p = Pipeline::FromYaml("- multiline: {firstline: '^START'}", nullptr, &clock);
  const LabelSet a{{"source", "stdout"}};
  const LabelSet b{{"source", "stderr"}};
  std::vector<Entry> out;
  p->Process(MakeEntry("START a", a, 1), out);
  p->Process(MakeEntry("START b", b, 2), out);
  p->Process(MakeEntry("a1", a, 3), out);
  p->Process(MakeEntry("b1", b, 4), out);
  p->Process(MakeEntry("START a2", a, 5), out);
  ASSERT_EQ(Lines(out), (std::vector<std::string>{"START a\na1"}));
  EXPECT_EQ(out[0].timestamp_ns, 1);
  p->Flush(clock.NowNs(), true, out);
  EXPECT_EQ(Lines(out), (std::vector<std::string>{"START a\na1", "START b\nb1", "START a2"}));
  EXPECT_EQ(out[1].labels, b);
  EXPECT_EQ(out[1].timestamp_ns, 2);
}

// Equal label sets made differently (a base set, or a smaller one plus a label a stage set)
// are one stream.
TEST(MultilineStage, EqualLabelSetsAreOneStreamHoweverBuilt) {
  FakeClock clock;
  auto p = Pipeline::FromYaml("- multiline: {firstline: '^S'}", nullptr, &clock);
  std::vector<Entry> out;
  p->Process(MakeEntry("S", LabelSet{{"a", "1"}, {"b", "2"}}), out);
  // Fill the recent streams with others, so the lookup goes through the hash index.
  for (int i = 0; i < 8; ++i) {
    p->Process(MakeEntry("S other", LabelSet{{"n", std::to_string(i)}}), out);
  }
  LabelSet built{{"b", "2"}};
  built.Set("a", "1");
  p->Process(MakeEntry("continued", built), out);
  p->Flush(clock.NowNs(), true, out);
  ASSERT_EQ(out.size(), 9u);
  EXPECT_EQ(out.back().line, "S\ncontinued");  // the most recently active leaves last
}

// max_wait_time counts the silence of each stream: lines in another stream do not keep a block
// open, and an expired block leaves at the next Process of any stream as at Flush.
TEST(MultilineStage, MaxWaitTimeIsPerStream) {
  FakeClock clock;
  auto p = Pipeline::FromYaml("- multiline: {firstline: '^S', max_wait_time: 1s}", nullptr, &clock);
  const LabelSet a{{"source", "stdout"}};
  const LabelSet b{{"source", "stderr"}};
  std::vector<Entry> out;
  p->Process(MakeEntry("S a", a), out);
  p->Process(MakeEntry("S b", b), out);
  clock.Advance(600'000'000);
  p->Process(MakeEntry("b1", b), out);
  clock.Advance(600'000'000);
  p->Process(MakeEntry("b2", b), out);  // a has been silent 1.2 s
  ASSERT_EQ(Lines(out), (std::vector<std::string>{"S a"}));
  clock.Advance(900'000'000);
  p->Flush(clock.NowNs(), false, out);
  EXPECT_EQ(out.size(), 1u);
  clock.Advance(100'000'000);
  p->Flush(clock.NowNs(), false, out);
  EXPECT_EQ(Lines(out), (std::vector<std::string>{"S a", "S b\nb1\nb2"}));
  EXPECT_FALSE(p->Holds());
  // After its block was flushed, a stream's continuation opens a block of its own.
  p->Process(MakeEntry("a late", a), out);
  EXPECT_TRUE(p->Holds());
}

TEST(MultilineStage, HeldBytesAndOldestOriginCoverEveryOpenBlock) {
  FakeClock clock;
  auto p = Pipeline::FromYaml("- multiline: {firstline: '^S'}", nullptr, &clock);
  std::vector<Entry> out;
  auto entry = [](std::string line, std::string_view source, uint64_t origin) {
    Entry e = MakeEntry(std::move(line), LabelSet{{"source", source}});
    e.origin = origin;
    return e;
  };
  p->Process(entry("S1", "stdout", 7), out);
  p->Process(entry("S22", "stderr", 8), out);
  p->Process(entry("x", "stdout", 9), out);
  EXPECT_EQ(p->HeldBytes(), std::string("S1\nx").size() + std::string("S22").size());
  EXPECT_EQ(p->OldestHeldOrigin(), std::optional<uint64_t>(7));
  p->Process(entry("S3", "stdout", 10), out);  // emits "S1\nx"
  EXPECT_EQ(p->HeldBytes(), 5u);
  EXPECT_EQ(p->OldestHeldOrigin(), std::optional<uint64_t>(8));
  p->Flush(clock.NowNs(), true, out);
  EXPECT_EQ(p->HeldBytes(), 0u);
  EXPECT_EQ(p->OldestHeldOrigin(), std::nullopt);
}

// At most kMaxStreams label sets are remembered: a new one beyond makes the least recently
// active one's block leave, and that stream starts over (lines pass until its next firstline).
TEST(MultilineStage, TheLeastRecentlyActiveStreamIsForgottenPastTheBound) {
  FakeClock clock;
  auto p = Pipeline::FromYaml("- multiline: {firstline: '^S'}", nullptr, &clock);
  std::vector<Entry> out;
  auto labels = [](size_t i) { return LabelSet{{"n", std::to_string(i)}}; };
  const size_t n = MultilineStage::kMaxStreams;
  for (size_t i = 0; i < n; ++i) p->Process(MakeEntry("S " + std::to_string(i), labels(i)), out);
  // Stream 0 is active again: stream 1 is now the least recently active.
  p->Process(MakeEntry("0 more", labels(0)), out);
  EXPECT_TRUE(out.empty());
  p->Process(MakeEntry("S new", labels(n)), out);
  ASSERT_EQ(Lines(out), (std::vector<std::string>{"S 1"}));
  p->Process(MakeEntry("1 after", labels(1)), out);  // forgotten: passes through
  ASSERT_EQ(Lines(out), (std::vector<std::string>{"S 1", "1 after"}));
  p->Process(MakeEntry("2 more", labels(2)), out);  // still known
  EXPECT_EQ(out.size(), 2u);
  p->Flush(clock.NowNs(), true, out);
  EXPECT_EQ(out.size(), 2u + n);
  std::vector<std::string> lines = Lines(out);
  EXPECT_NE(std::find(lines.begin(), lines.end(), "S 0\n0 more"), lines.end());
  EXPECT_NE(std::find(lines.begin(), lines.end(), "S 2\n2 more"), lines.end());
}

// Open blocks hold at most kMaxHeldBytes together; the least recently active leave early.
TEST(MultilineStage, OpenBlocksTogetherStayUnderTheHeldBytesBound) {
  FakeClock clock;
  auto p = Pipeline::FromYaml("- multiline: {firstline: '^S', max_wait_time: 1h}", nullptr,
                              &clock);  // no max_line_size: one block may grow
  std::vector<Entry> out;
  const std::string mib(1024 * 1024, 'x');
  const size_t blocks = MultilineStage::kMaxHeldBytes / mib.size() + 4;
  for (size_t i = 0; i < blocks; ++i) {
    p->Process(MakeEntry("S " + std::to_string(i), LabelSet{{"n", std::to_string(i)}}), out);
    p->Process(MakeEntry(mib, LabelSet{{"n", std::to_string(i)}}), out);
    EXPECT_LE(p->HeldBytes(), MultilineStage::kMaxHeldBytes);
  }
  ASSERT_GE(out.size(), 4u);
  EXPECT_EQ(out[0].line, "S 0\n" + mib);  // the least recently active first
  EXPECT_EQ(out[0].labels, (LabelSet{{"n", "0"}}));
  p->Flush(clock.NowNs(), true, out);
  EXPECT_EQ(out.size(), blocks);
  // A single stream is bounded by max_line_size, not by this.
  p->Process(MakeEntry("S", LabelSet{{"n", "0"}}), out);
  for (int i = 0; i < 20; ++i) p->Process(MakeEntry(mib, LabelSet{{"n", "0"}}), out);
  EXPECT_EQ(out.size(), blocks);
  EXPECT_GT(p->HeldBytes(), MultilineStage::kMaxHeldBytes);
}

}  // namespace
}  // namespace skald::stages
