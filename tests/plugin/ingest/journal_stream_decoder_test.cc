#include "plugin/ingest/journal_stream_decoder.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "plugin/ingest/hand_over_bounds.h"
#include "plugin/journal/journal_writer.h"
#include "plugin/metrics/metrics.h"
#include "tests/plugin/plugin_test_support.h"

namespace skald {
namespace {

namespace fs = std::filesystem;

// Records what the decoder gives it; its window is open while `wants` is true.
class RecordingSink : public LineSink {
 public:
  void OnLines(uint64_t, std::vector<LogLine>& lines, const JournalPosition& resume) override {
    hand_overs.push_back(lines.size());
    capacities.push_back(lines.capacity());
    for (LogLine& l : lines) this->lines.push_back(std::move(l.line));
    last_resume = resume;
    if (takes_storage) {  // as the driver does
      std::vector<LogLine> taken = std::move(lines);
      lines = {};
    }
  }
  void OnEnd(uint64_t, bool corrupt) override {
    ++ends;
    ended_corrupt = corrupt;
  }
  bool WantsLines(uint64_t) override { return wants; }
  void OnEvicted(uint64_t, uint64_t n) override { evicted += n; }

  std::vector<std::string> lines;
  std::vector<std::size_t> hand_overs;  // lines per OnLines
  std::vector<std::size_t> capacities;  // of the vector each OnLines was given
  bool takes_storage = false;           // moves the vector's storage away, as the driver does
  JournalPosition last_resume;
  int ends = 0;
  bool ended_corrupt = false;
  bool wants = true;
  uint64_t evicted = 0;
};

class JournalStreamDecoderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/skald-journal-stream-decoder-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    journal_ = Journal::Open(dir_ / "journal", {});
  }
  void TearDown() override {
    journal_.reset();
    fs::remove_all(dir_);
  }
  // A sealed session (one segment) of `count` lines "<prefix> <i>".
  void WriteSession(const std::string& prefix, int count) {
    auto writer = journal_->StartWriter("/fifo-" + prefix);
    std::string frames;
    for (int i = 0; i < count; ++i) {
      frames += testkit::StdoutFrame(prefix + " " + std::to_string(i), i + 1);
    }
    writer->Append(frames);
    writer->Seal();
  }

  fs::path dir_;
  std::shared_ptr<Journal> journal_;
  MetricsRegistry metrics_;
  DecodeCounters counters_{metrics_};
  RecordingSink sink_;
};

const auto kNeverEnds = [] { return false; };
const auto kEnds = [] { return true; };

// At the journal's end the stream goes on while a FIFO still feeds it (may_end false): nothing
// ends. Once may_end says so, it ends once. A restart from the resume position given with a
// hand-over reads exactly the lines after it.
TEST_F(JournalStreamDecoderTest, TheStreamEndsAtTheJournalsEndOnlyWhenNoFifoFeedsIt) {
  WriteSession("a", 3);
  JournalStreamDecoder decoder(7, journal_, {}, 1 << 20, sink_, counters_);
  EXPECT_TRUE(decoder.Decode(kNeverEnds));
  EXPECT_EQ(sink_.lines, (std::vector<std::string>{"a 0", "a 1", "a 2"}));
  EXPECT_EQ(sink_.ends, 0);
  EXPECT_FALSE(decoder.more);
  const JournalPosition resume = sink_.last_resume;
  WriteSession("b", 2);  // a later session of the same container
  EXPECT_FALSE(decoder.Decode(kEnds));
  EXPECT_EQ(sink_.lines.size(), 5u);
  EXPECT_EQ(sink_.lines.back(), "b 1");
  EXPECT_EQ(sink_.ends, 1);
  EXPECT_FALSE(sink_.ended_corrupt);
  EXPECT_EQ(metrics_.CounterTotal("skald_lines_read_total"), 5u);

  RecordingSink restarted;
  JournalStreamDecoder again(8, journal_, resume, 1 << 20, restarted, counters_);
  EXPECT_FALSE(again.Decode(kEnds));
  EXPECT_EQ(restarted.lines, (std::vector<std::string>{"b 0", "b 1"}));
}

// Lines go over in hand-overs of at most hand_over::kMaxLines, and a round stops after
// kRoundFrames frames with `more` set, so that other streams have their turn.
TEST_F(JournalStreamDecoderTest, ARoundEndsAfterItsFramesAndHandsOverInBoundedBatches) {
  const int count = static_cast<int>(JournalStreamDecoder::kRoundFrames) + 100;
  WriteSession("x", count);
  JournalStreamDecoder decoder(7, journal_, {}, 1 << 20, sink_, counters_);
  EXPECT_TRUE(decoder.Decode(kEnds));
  EXPECT_TRUE(decoder.more);
  EXPECT_EQ(sink_.ends, 0);
  EXPECT_LT(sink_.lines.size(), static_cast<std::size_t>(count));
  for (std::size_t n : sink_.hand_overs) EXPECT_LE(n, hand_over::kMaxLines);
  EXPECT_FALSE(decoder.Decode(kEnds));
  EXPECT_EQ(sink_.lines.size(), static_cast<std::size_t>(count));
  EXPECT_EQ(sink_.lines.back(), "x " + std::to_string(count - 1));
}

// The driver takes each hand-over's storage with its lines: the next hand-over of a stream is
// reserved once, as large as the last one, at its first line (not grown line by line, every
// line moved at each doubling).
TEST_F(JournalStreamDecoderTest, AHandOverIsReservedAsLargeAsTheLastOne) {
  sink_.takes_storage = true;
  JournalStreamDecoder decoder(7, journal_, {}, 1 << 20, sink_, counters_);
  WriteSession("a", 100);
  decoder.Decode(kNeverEnds);
  WriteSession("b", 100);
  decoder.Decode(kNeverEnds);
  WriteSession("c", 3);
  decoder.Decode(kNeverEnds);
  ASSERT_EQ(sink_.hand_overs, (std::vector<std::size_t>{100, 100, 3}));
  EXPECT_EQ(sink_.capacities[1], 100u);  // grown, it would hold 128
  EXPECT_EQ(sink_.capacities[2], 100u);  // a smaller one fits in what was reserved
  EXPECT_EQ(sink_.lines.size(), 203u);
}

// The sink's window is asked before each hand-over: closed, the round stops with `paused`
// after at most one hand-over, and the lines wait in the journal, none lost.
TEST_F(JournalStreamDecoderTest, AClosedWindowPausesTheStreamAndLosesNothing) {
  WriteSession("p", 1000);
  JournalStreamDecoder decoder(7, journal_, {}, 1 << 20, sink_, counters_);
  sink_.wants = false;
  EXPECT_TRUE(decoder.Decode(kEnds));
  EXPECT_TRUE(decoder.paused);
  EXPECT_TRUE(sink_.lines.empty());
  sink_.wants = true;
  while (decoder.Decode(kEnds)) {
  }
  ASSERT_EQ(sink_.lines.size(), 1000u);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(sink_.lines[i], "p " + std::to_string(i));
}

// Segments the journal budget evicts before the stream read them: their complete lines are
// counted to the sink (journal_full), and the stream goes on after them.
TEST_F(JournalStreamDecoderTest, SegmentsEvictedBeforeTheyWereReadAreCountedAndSkipped) {
  WriteSession("s0", 10);
  WriteSession("s1", 20);
  WriteSession("s2", 5);
  JournalStreamDecoder decoder(7, journal_, {}, 1 << 20, sink_, counters_);
  ASSERT_GT(journal_->EvictOldest(), 0u);
  ASSERT_GT(journal_->EvictOldest(), 0u);
  EXPECT_EQ(sink_.evicted, 30u);
  EXPECT_FALSE(decoder.Decode(kEnds));
  EXPECT_EQ(sink_.lines, (std::vector<std::string>{"s2 0", "s2 1", "s2 2", "s2 3", "s2 4"}));
}

// A segment evicted after the stream read it counts nothing.
TEST_F(JournalStreamDecoderTest, ASegmentEvictedAfterItWasReadCountsNothing) {
  WriteSession("r", 10);
  WriteSession("q", 3);
  JournalStreamDecoder decoder(7, journal_, {}, 1 << 20, sink_, counters_);
  EXPECT_TRUE(decoder.Decode(kNeverEnds));
  ASSERT_GT(journal_->EvictOldest(), 0u);
  EXPECT_EQ(sink_.evicted, 0u);
  EXPECT_EQ(sink_.lines.size(), 13u);
}

// The evict hook is the decoder's while it lives: gone with it (a journal outlives its
// streams; a hook left behind would call into freed memory).
TEST_F(JournalStreamDecoderTest, TheEvictHookGoesWithTheDecoder) {
  WriteSession("a", 10);
  WriteSession("b", 10);
  { JournalStreamDecoder decoder(7, journal_, {}, 1 << 20, sink_, counters_); }
  ASSERT_GT(journal_->EvictOldest(), 0u);
  EXPECT_EQ(sink_.evicted, 0u);
}

// A container restarted as its stream ends: the ended decoder goes after the next stream's
// decoder took the journal over. Its going must leave the new decoder's hook in place, or
// segments the budget evicts before the new stream read them go uncounted (journal_full).
TEST_F(JournalStreamDecoderTest, AnEndedDecoderLeavesItsSuccessorsEvictHook) {
  WriteSession("a", 3);
  auto ended = std::make_unique<JournalStreamDecoder>(7, journal_, JournalPosition{}, 1 << 20,
                                                      sink_, counters_);
  EXPECT_FALSE(ended->Decode(kEnds));
  RecordingSink next_sink;
  JournalStreamDecoder next(8, journal_, ended->Resume(), 1 << 20, next_sink, counters_);
  ended.reset();
  WriteSession("b", 5);
  WriteSession("c", 1);
  ASSERT_GT(journal_->EvictOldest(), 0u);  // "a", read by the ended stream
  ASSERT_GT(journal_->EvictOldest(), 0u);  // "b", not read by the next one
  EXPECT_EQ(next_sink.evicted, 5u);
  EXPECT_FALSE(next.Decode(kEnds));
  EXPECT_EQ(next_sink.lines, (std::vector<std::string>{"c 0"}));
}

// A segment removed by hand while its journal is replayed: the replay goes on with the next
// segment and ends; the bytes are counted as lost. (The reader used to spin on it for ever,
// and the single FIFO thread with it.)
TEST_F(JournalStreamDecoderTest, ASegmentRemovedBeforeItWasReadIsCountedLost) {
  WriteSession("s0", 10);
  WriteSession("s1", 10);
  WriteSession("s2", 10);
  const fs::path second = dir_ / "journal" / "0000000002.seg";
  const uint64_t lost = fs::file_size(second);
  ASSERT_TRUE(fs::remove(second));
  JournalStreamDecoder decoder(7, journal_, {}, 1 << 20, sink_, counters_);
  EXPECT_FALSE(decoder.Decode(kEnds));
  ASSERT_EQ(sink_.lines.size(), 20u);
  EXPECT_EQ(sink_.lines.front(), "s0 0");
  EXPECT_EQ(sink_.lines.back(), "s2 9");
  EXPECT_EQ(metrics_.CounterTotal("skald_journal_lost_bytes_total"), lost);
}

}  // namespace
}  // namespace skald
