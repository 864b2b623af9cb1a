#include "plugin/line_assembler.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace skald
