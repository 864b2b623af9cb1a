#include "plugin/ingest/line_assembler.h"

#include <gtest/gtest.h>

#include <limits>

namespace skald {
namespace {

LogEntryView Chunk(std::string_view text, std::string_view id, int ordinal, bool last,
                   int64_t ts = 100, std::string_view source = "stdout") {
  LogEntryView v;
  v.source = source;
  v.time_nano = ts;
  v.line = text;
  v.partial = true;
  v.has_partial_metadata = true;
  v.partial_id = id;
  v.partial_ordinal = ordinal;
  v.partial_last = last;
  return v;
}

LogEntryView Whole(std::string_view text, std::string_view source = "stdout", int64_t ts = 1) {
  LogEntryView v;
  v.source = source;
  v.time_nano = ts;
  v.line = text;
  return v;
}

TEST(LineAssembler, JoinsPartialChunksWithFirstTimestamp) {
  LineAssembler a(256000);
  std::vector<LogLine> out;
  a.Add(Chunk("aaa", "x", 1, false, 100), out);
  a.Add(Chunk("bbb", "x", 2, false, 200), out);
  EXPECT_TRUE(out.empty());
  a.Add(Chunk("c", "x", 3, true, 300), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].line, "aaabbbc");
  EXPECT_EQ(out[0].time_nano, 100);
  EXPECT_FALSE(a.HasPending());
}

TEST(LineAssembler, EmptyLastChunkEndsTheGroup) {
  LineAssembler a(256000);
  std::vector<LogLine> out;
  a.Add(Chunk("abc", "x", 1, false), out);
  a.Add(Chunk("", "x", 2, true), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].line, "abc");
}

TEST(LineAssembler, KeepsStdoutAndStderrGroupsApart) {
  LineAssembler a(256000);
  std::vector<LogLine> out;
  a.Add(Chunk("o1", "a", 1, false, 1, "stdout"), out);
  a.Add(Chunk("e1", "b", 1, false, 2, "stderr"), out);
  a.Add(Chunk("e2", "b", 2, true, 2, "stderr"), out);
  a.Add(Chunk("o2", "a", 2, true, 1, "stdout"), out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].line, "e1e2");
  EXPECT_EQ(out[0].source, LogSource::kStderr);
  EXPECT_EQ(out[1].line, "o1o2");
  EXPECT_EQ(out[1].source, LogSource::kStdout);
}

TEST(LineAssembler, FinishFlushesAnUnfinishedGroup) {
  LineAssembler a(256000);
  std::vector<LogLine> out;
  a.Add(Chunk("tail", "x", 1, false), out);
  a.Finish(out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].line, "tail");
}

TEST(LineAssembler, OldDaemonGroupEndsWithNonPartialFrame) {
  LineAssembler a(256000);
  std::vector<LogLine> out;
  LogEntryView p = Whole("part1");
  p.partial = true;  // no metadata, as before Docker 19
  a.Add(p, out);
  a.Add(Whole("part2"), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].line, "part1part2");
}

TEST(LineAssembler, SkipsWhitespaceOnlyLinesAndCountsThem) {
  LineAssembler a(256000);
  std::vector<LogLine> out;
  a.Add(Whole("  \t "), out);
  a.Add(Whole(""), out);
  a.Add(Whole(" x "), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].line, " x ");
  EXPECT_EQ(a.counts().blank_lines, 2u);
}

// As the Go driver's bytes.Fields: any of Go's unicode.IsSpace runes make a line blank; other
// bytes, an invalid one among them, do not.
TEST(LineAssembler, WhiteSpaceIsGosUnicodeSpace) {
  for (std::string_view blank : {"\xc2\xa0", " \xc2\x85\t", "\xe3\x80\x80\xe3\x80\x80",
                                 "\xe2\x80\x80\xe2\x80\x8a\xe2\x80\xaf",
                                 "\xe1\x9a\x80\xe2\x80\xa8\xe2\x80\xa9\xe2\x81\x9f\v\f\r\n"}) {
    EXPECT_TRUE(IsBlankLine(blank)) << testing::PrintToString(std::string(blank));
  }
  for (std::string_view text : {"\xc2", "\xa0", "\xe2\x80\x8b", "\xe2\x80", " \xff ", "\xc2\xa0x",
                                "\xe3\x80\x81", "\xef\xbb\xbf"}) {
    EXPECT_FALSE(IsBlankLine(text)) << testing::PrintToString(std::string(text));
  }
}

TEST(LineAssembler, SplitsLongLinesIntoPiecesOfAtMostMax) {
  LineAssembler a(10);
  std::vector<LogLine> out;
  a.Add(Whole(std::string(25, 'z')), out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].line.size(), 10u);
  EXPECT_EQ(out[1].line.size(), 10u);
  EXPECT_EQ(out[2].line.size(), 5u);
  EXPECT_EQ(out[0].time_nano, 1);  // pieces 1 ns apart, so Loki keeps equal pieces
  EXPECT_EQ(out[1].time_nano, 2);
  EXPECT_EQ(out[2].time_nano, 3);
  EXPECT_EQ(a.counts().split_lines, 1u);
  EXPECT_EQ(a.counts().extra_pieces, 2u);
}

TEST(LineAssembler, SplitDoesNotCutAUtf8Character) {
  LineAssembler a(4);
  std::vector<LogLine> out;
  a.Add(Whole("ab\xC3\xA9\xC3\xA9"), out);  // a b é é
  ASSERT_GE(out.size(), 2u);
  EXPECT_EQ(out[0].line, "ab\xC3\xA9");
  EXPECT_EQ(out[1].line, "\xC3\xA9");
}

TEST(LineAssembler, AnEndlessLineIsEmittedInPiecesAsTheyFill) {
  // `yes | tr -d '\n'`: 16 KiB chunks of one partial line that never ends.
  constexpr std::size_t kMax = 100'000;
  LineAssembler a(kMax);
  std::vector<LogLine> out;
  const std::string chunk(16 * 1024, 'y');
  std::size_t emitted = 0, most_buffered = 0;
  for (int i = 1; i <= 1000; ++i) {  // 16 MB
    a.Add(Chunk(chunk, "endless", i, false, 5000), out);
    most_buffered = std::max(most_buffered, a.BufferedBytes());
    for (const LogLine& l : out) {
      EXPECT_EQ(l.line.size(), kMax);
      EXPECT_EQ(l.time_nano, 5000 + static_cast<int64_t>(emitted));  // 1 ns apart
      ++emitted;
    }
    out.clear();
  }
  EXPECT_EQ(emitted, 1000 * chunk.size() / kMax);
  EXPECT_LE(most_buffered, kMax + chunk.size());
  EXPECT_TRUE(a.HasPending());
  EXPECT_EQ(a.counts().split_lines, 1u);
  EXPECT_EQ(a.counts().extra_pieces, emitted - 1);
  a.Finish(out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].line.size(), 1000 * chunk.size() % kMax);
  EXPECT_EQ(a.BufferedBytes(), 0u);
}

TEST(LineAssembler, PiecesOfAStreamedLineJoinToTheWholeLine) {
  LineAssembler a(7);
  std::vector<LogLine> out;
  a.Add(Chunk("abcde", "x", 1, false), out);
  a.Add(Chunk("fghij", "x", 2, false), out);
  a.Add(Chunk("klmnopqrstu", "x", 3, false), out);
  a.Add(Chunk("vw", "x", 4, true), out);
  std::string joined;
  for (const LogLine& l : out) {
    EXPECT_LE(l.line.size(), 7u);
    joined += l.line;
  }
  EXPECT_EQ(joined, "abcdefghijklmnopqrstuvw");
  EXPECT_FALSE(a.HasPending());
}

TEST(LineAssembler, ANewPartialIdClosesTheOpenLineOfThatSource) {
  LineAssembler a(256000);
  std::vector<LogLine> out;
  a.Add(Chunk("first-", "a", 1, false, 10), out);
  a.Add(Chunk("second-", "b", 1, false, 20), out);  // "a" never finished
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].line, "first-");
  EXPECT_EQ(out[0].time_nano, 10);
  a.Add(Chunk("end", "b", 2, true, 20), out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].line, "second-end");
  EXPECT_FALSE(a.HasPending());
}

TEST(LineAssembler, AWholeLineClosesTheOpenLineOfItsSourceOnly) {
  LineAssembler a(256000);
  std::vector<LogLine> out;
  a.Add(Chunk("o-part", "a", 1, false, 1, "stdout"), out);
  a.Add(Chunk("e-part", "b", 1, false, 2, "stderr"), out);
  a.Add(Whole("o-whole", "stdout", 3), out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].line, "o-part");
  EXPECT_EQ(out[1].line, "o-whole");
  EXPECT_TRUE(a.HasPending());  // stderr's line is still open
  a.Add(Chunk("-end", "b", 2, true, 2, "stderr"), out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2].line, "e-part-end");
}

TEST(LineAssembler, PendingSinceFollowsTheOldestByteNotEmitted) {
  LineAssembler a(10);
  std::vector<LogLine> out;
  auto span = [](uint64_t start, uint64_t end) {
    return FrameSpan{JournalPosition{1, start}, JournalPosition{1, end}};
  };
  a.Add(Chunk("abcd", "x", 1, false), out, span(0, 20));
  EXPECT_EQ(a.PendingSince(), (JournalPosition{1, 0}));
  a.Add(Chunk("efgh", "x", 2, false), out, span(20, 40));
  EXPECT_EQ(a.PendingSince(), (JournalPosition{1, 0}));  // "abcd" is not sent yet
  a.Add(Chunk("ijklmn", "x", 3, false), out, span(40, 62));
  ASSERT_EQ(out.size(), 1u);  // "abcdefghij" sent; "klmn" came with the last frame
  EXPECT_EQ(a.PendingSince(), (JournalPosition{1, 40}));
  a.Add(Chunk("opqrstu", "x", 4, false), out, span(62, 85));
  ASSERT_EQ(out.size(), 2u);  // "klmnopqrst" sent; "u" came with the last frame
  EXPECT_EQ(a.BufferedBytes(), 1u);
  EXPECT_EQ(a.PendingSince(), (JournalPosition{1, 62}));
  // A second source's older byte rules.
  a.Add(Chunk("e", "y", 1, false, 1, "stderr"), out, span(85, 100));
  EXPECT_EQ(a.PendingSince(), (JournalPosition{1, 62}));
  a.Add(Chunk("vwxyz", "x", 5, true), out, span(100, 120));
  EXPECT_EQ(a.PendingSince(), (JournalPosition{1, 85}));
  // An empty chunk holds nothing: a restart may begin after it.
  a.Add(Chunk("f", "y", 2, true, 1, "stderr"), out, span(120, 130));
  a.Add(Chunk("", "z", 1, false), out, span(130, 140));
  EXPECT_EQ(a.PendingSince(), (JournalPosition{1, 140}));
}

TEST(LineAssembler, AReplayThatStartsInsideALineBeginsANewPiece) {
  LineAssembler a(256000);
  std::vector<LogLine> out;
  a.Add(Chunk("middle-", "x", 7, false, 100), out);
  a.Add(Chunk("end", "x", 8, true, 100), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].line, "middle-end");
  // Numbered after every piece the six chunks before it can have made (one each here).
  EXPECT_EQ(out[0].time_nano, 100 + 6 + 1);
}

// After a restart inside a repetitive line, the new pieces must not equal (timestamp and text)
// pieces sent before it: Loki would drop them as duplicates.
TEST(LineAssembler, PiecesOfAResumedLineAreNumberedAfterThoseBeforeTheRestart) {
  const std::string chunk(16 * 1024, 'y');
  std::vector<LogLine> before, after;
  LineAssembler first(10000);
  for (int i = 1; i <= 10; ++i) first.Add(Chunk(chunk, "x", i, false, 5000), before);
  LineAssembler resumed(10000);  // the restart read again from chunk 10
  for (int i = 10; i <= 12; ++i) resumed.Add(Chunk(chunk, "x", i, false, 5000), after);
  resumed.Add(Chunk("end", "x", 13, true, 5000), after);
  ASSERT_FALSE(before.empty());
  ASSERT_FALSE(after.empty());
  for (const LogLine& a : after) {
    for (const LogLine& b : before) {
      EXPECT_FALSE(a.time_nano == b.time_nano && a.line == b.line)
          << "a piece after the restart repeats one sent before it at " << a.time_nano;
    }
  }
}

// Found by frame_stream_fuzzer under UBSan: the pieces of a split line are stamped time_nano +
// 0, 1, 2, ... ns, and that sum overflowed int64 (the later pieces wrapped to 1677) when the
// line's time was within as many ns of the largest time. time_nano is whatever the frame says.
TEST(LineAssembler, PiecesOfALineAtTheEndOfTimeDoNotGoBackInTime) {
  LineAssembler a(4);
  std::vector<LogLine> out;
  a.Add(Whole("abcdefghij", "stdout", std::numeric_limits<int64_t>::max()), out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].time_nano, std::numeric_limits<int64_t>::max());
  for (size_t i = 1; i < out.size(); ++i) EXPECT_GE(out[i].time_nano, out[i - 1].time_nano);
  // The pieces of a line still arriving, too.
  LineAssembler b(4);
  out.clear();
  b.Add(Chunk("abcdefghij", "x", 1, false, std::numeric_limits<int64_t>::max()), out);
  ASSERT_EQ(out.size(), 2u);
  for (const LogLine& l : out) EXPECT_EQ(l.time_nano, std::numeric_limits<int64_t>::max());
}

}  // namespace
}  // namespace skald
