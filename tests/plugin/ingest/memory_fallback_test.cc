#include "plugin/ingest/memory_fallback.h"

#include <gtest/gtest.h>

#include "plugin/ingest/hand_over_bounds.h"
#include "tests/plugin/plugin_test_support.h"

namespace skald {
namespace {

std::string Frame(std::string_view line, bool partial = false) {
  return testkit::StdoutFrame(line, 1700000000000000000, partial);
}

std::vector<std::string> TakeAll(MemoryFallback& m) {
  std::vector<std::string> out;
  std::vector<LogLine> batch;
  while (!m.empty()) {
    m.TakeHandOver(batch);
    for (const LogLine& l : batch) out.push_back(l.line);
  }
  return out;
}

TEST(MemoryFallbackTest, DecodesFramesCutAcrossReadsAndAfterThePendingStart) {
  const std::string a = Frame("first"), b = Frame("second"), c = Frame("third");
  MemoryFallback m;
  // The journal kept all of `a` but the first 3 bytes of `b`, which it hands back.
  m.Start(b.substr(0, 3), 1024);
  EXPECT_EQ(m.pending(), b.substr(0, 3));
  EXPECT_EQ(m.Decode(b.substr(3) + c.substr(0, 5)), 0u);
  EXPECT_EQ(m.pending(), c.substr(0, 5));  // the start of a frame at most
  EXPECT_EQ(m.queued_lines(), 1u);
  EXPECT_EQ(m.Decode(c.substr(5)), 0u);
  EXPECT_TRUE(m.pending().empty());
  EXPECT_EQ(m.queued_bytes(), std::string("second").size() + std::string("third").size());
  EXPECT_EQ(TakeAll(m), (std::vector<std::string>{"second", "third"}));
  EXPECT_EQ(m.queued_bytes(), 0u);
  (void)a;
}

TEST(MemoryFallbackTest, SkipsBytesOutOfStepWithTheFrames) {
  MemoryFallback m;
  m.Start("", 1024);
  // The rest of a frame whose start the journal could not hand back, then whole frames.
  const std::string lost = Frame("lost line");
  const std::string torn = lost.substr(lost.size() - 4);
  const uint64_t skipped = m.Decode(torn + Frame("after"));
  EXPECT_GT(skipped, 0u);
  EXPECT_LE(skipped, torn.size());
  EXPECT_EQ(TakeAll(m), std::vector<std::string>{"after"});
}

TEST(MemoryFallbackTest, FinishEndsTheOpenLineAndQueuedLinesOutliveARestart) {
  MemoryFallback m;
  m.Start("", 1024);
  m.Decode(Frame("com", /*partial=*/true));
  EXPECT_TRUE(m.empty());  // waits for its last chunk
  const std::string next = Frame("x");
  m.Decode(next.substr(0, 2));
  m.Finish();  // journaling resumes
  EXPECT_TRUE(m.pending().empty());
  EXPECT_EQ(m.queued_lines(), 1u);
  // The journal refuses bytes again: decoding starts anew behind the queued line.
  m.Start("", 1024);
  EXPECT_EQ(m.assembler().counts().blank_lines, 0u);
  m.Decode(Frame("later"));
  EXPECT_EQ(TakeAll(m), (std::vector<std::string>{"com", "later"}));
}

TEST(MemoryFallbackTest, DropsTheOldestBeyondTheBoundAndKeepsTheNewestLine) {
  MemoryFallback m;
  m.Start("", 1 << 20);
  const std::string line(100 * 1024, 'l');
  std::string frames;
  for (int i = 0; i < 15; ++i) frames += Frame(std::to_string(i % 10) + line);
  m.Decode(frames);
  EXPECT_EQ(m.queued_lines(), 15u);
  const uint64_t dropped = m.DropOverflow();
  EXPECT_GT(dropped, 0u);
  EXPECT_EQ(m.queued_lines(), 15u - dropped);
  EXPECT_LE(m.queued_bytes(), MemoryFallback::kMaxQueuedBytes);
  // The oldest went: the first line left is number `dropped`.
  std::vector<LogLine> batch;
  m.TakeHandOver(batch);
  ASSERT_FALSE(batch.empty());
  EXPECT_EQ(batch.front().line[0], static_cast<char>('0' + dropped % 10));

  // One line over the bound on its own stays.
  MemoryFallback big;
  big.Start("", 4 << 20);
  // (A frame holds at most 1 MiB: the line comes in partial chunks.)
  const std::string chunk(MemoryFallback::kMaxQueuedBytes / 2 + 1, 'b');
  big.Decode(Frame(chunk, true) + Frame(chunk, true) + Frame("end"));
  EXPECT_EQ(big.DropOverflow(), 0u);
  EXPECT_EQ(big.queued_lines(), 1u);
}

TEST(MemoryFallbackTest, HandOversHoldAtMostKMaxLines) {
  MemoryFallback m;
  m.Start("", 1024);
  std::string frames;
  const std::size_t n = hand_over::kMaxLines * 2 + 3;
  for (std::size_t i = 0; i < n; ++i) frames += Frame("line " + std::to_string(i));
  m.Decode(frames);
  std::vector<LogLine> batch{LogLine{}};
  m.TakeHandOver(batch);
  EXPECT_EQ(batch.size(), hand_over::kMaxLines);
  EXPECT_EQ(batch.front().line, "line 0");
  m.TakeHandOver(batch);
  EXPECT_EQ(batch.size(), hand_over::kMaxLines);
  m.TakeHandOver(batch);
  EXPECT_EQ(batch.size(), 3u);
  EXPECT_EQ(batch.back().line, "line " + std::to_string(n - 1));
  EXPECT_TRUE(m.empty());
}

// A hand-over was 256 lines whatever their size: 4 MiB of dockerd's 16 KiB chunks held up the
// other streams on the shipping thread as long as the stream's pipeline took over all of them.
TEST(MemoryFallbackTest, HandOversHoldAtMostKMaxBytesAndOneLine) {
  constexpr std::size_t kLineBytes = 16 * 1024;
  MemoryFallback m;
  m.Start("", 1 << 20);
  const std::size_t n = MemoryFallback::kMaxQueuedBytes / kLineBytes;
  for (std::size_t i = 0; i < n; ++i) m.Decode(Frame(std::string(kLineBytes, 'a' + i % 26)));
  ASSERT_EQ(m.queued_lines(), n);
  std::vector<LogLine> batch;
  std::size_t lines = 0;
  while (!m.empty()) {
    m.TakeHandOver(batch);
    std::size_t bytes = 0;
    for (const LogLine& l : batch) bytes += l.line.size();
    ASSERT_FALSE(batch.empty());
    EXPECT_LE(bytes, hand_over::kMaxBytes + kLineBytes)
        << "a hand-over of " << batch.size() << " lines";
    EXPECT_EQ(batch.front().line[0], static_cast<char>('a' + lines % 26));
    lines += batch.size();
  }
  EXPECT_EQ(lines, n);
  EXPECT_EQ(m.queued_bytes(), 0u);

  // One line over the byte bound still goes, alone.
  m.Decode(Frame(std::string(hand_over::kMaxBytes * 2, 'x')));
  m.Decode(Frame("small"));
  m.TakeHandOver(batch);
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0].line.size(), hand_over::kMaxBytes * 2);
  m.TakeHandOver(batch);
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0].line, "small");
}

}  // namespace
}  // namespace skald
