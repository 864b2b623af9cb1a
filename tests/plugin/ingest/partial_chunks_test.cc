#include "plugin/ingest/partial_chunks.h"

#include <gtest/gtest.h>

namespace skald {
namespace {

using Kind = ChunkStep::Kind;

LogEntryView Chunk(std::string_view id, int ordinal, bool last,
                   std::string_view source = "stdout") {
  LogEntryView v;
  v.source = source;
  v.line = "x";
  v.partial = true;
  v.has_partial_metadata = true;
  v.partial_id = id;
  v.partial_ordinal = ordinal;
  v.partial_last = last;
  return v;
}

LogEntryView Legacy(std::string_view source = "stdout") {
  LogEntryView v;
  v.source = source;
  v.line = "x";
  v.partial = true;
  return v;
}

LogEntryView Whole(std::string_view source = "stdout") {
  LogEntryView v;
  v.source = source;
  v.line = "x";
  return v;
}

TEST(PartialChunks, ChunksOfOneIdMakeOneLine) {
  PartialChunkTracker t;
  ChunkStep s = t.Next(Chunk("a", 1, false));
  EXPECT_EQ(s.kind, Kind::kBegin);
  EXPECT_FALSE(s.end_open);
  EXPECT_FALSE(s.resumed);
  EXPECT_FALSE(s.ends);
  EXPECT_TRUE(t.IsOpen(LogSource::kStdout));
  s = t.Next(Chunk("a", 2, false));
  EXPECT_EQ(s.kind, Kind::kContinue);
  EXPECT_FALSE(s.ends);
  s = t.Next(Chunk("a", 3, true));
  EXPECT_EQ(s.kind, Kind::kContinue);
  EXPECT_TRUE(s.ends);
  EXPECT_FALSE(t.IsOpen(LogSource::kStdout));
}

TEST(PartialChunks, AnotherIdOrAWholeLineEndsTheOpenLine) {
  PartialChunkTracker t;
  t.Next(Chunk("a", 1, false));
  ChunkStep s = t.Next(Chunk("b", 1, false));
  EXPECT_TRUE(s.end_open);
  EXPECT_EQ(s.kind, Kind::kBegin);
  s = t.Next(Whole());
  EXPECT_TRUE(s.end_open);
  EXPECT_EQ(s.kind, Kind::kWhole);
  EXPECT_FALSE(t.IsOpen(LogSource::kStdout));
  s = t.Next(Whole());
  EXPECT_FALSE(s.end_open);
}

TEST(PartialChunks, AChunkPastTheFirstOfAnotherIdEndsTheOpenLineAndResumes) {
  PartialChunkTracker t;
  t.Next(Chunk("a", 1, false));
  const ChunkStep s = t.Next(Chunk("b", 5, false));
  EXPECT_TRUE(s.end_open);
  EXPECT_EQ(s.kind, Kind::kBegin);
  EXPECT_TRUE(s.resumed);
  EXPECT_EQ(t.Next(Chunk("b", 6, true)).kind, Kind::kContinue);
}

TEST(PartialChunks, SourcesAreApart) {
  PartialChunkTracker t;
  t.Next(Chunk("a", 1, false, "stdout"));
  const ChunkStep s = t.Next(Whole("stderr"));
  EXPECT_EQ(s.source, LogSource::kStderr);
  EXPECT_FALSE(s.end_open);
  EXPECT_TRUE(t.IsOpen(LogSource::kStdout));
  EXPECT_FALSE(t.IsOpen(LogSource::kStderr));
  t.EndOpen(LogSource::kStdout);
  EXPECT_FALSE(t.IsOpen(LogSource::kStdout));
}

TEST(PartialChunks, AnOldDaemonsGroupEndsWithTheNextWholeFrame) {
  PartialChunkTracker t;
  EXPECT_EQ(t.Next(Legacy()).kind, Kind::kBegin);
  EXPECT_EQ(t.Next(Legacy()).kind, Kind::kContinue);
  const ChunkStep s = t.Next(Whole());
  EXPECT_EQ(s.kind, Kind::kContinue);
  EXPECT_TRUE(s.ends);
  EXPECT_FALSE(s.end_open);
  EXPECT_FALSE(t.IsOpen(LogSource::kStdout));
  // A chunk with metadata does not continue an old daemon's group.
  t.Next(Legacy());
  EXPECT_TRUE(t.Next(Chunk("a", 1, false)).end_open);
}

}  // namespace
}  // namespace skald
