#include "plugin/journal/journal_frame_reader.h"

#include <gtest/gtest.h>

#include "plugin/journal/journal_writer.h"
#include "tests/plugin/journal/journal_fixture.h"

namespace skald {
namespace {

namespace fs = std::filesystem;
using namespace journal_testkit;
using JournalFrameReaderTest = JournalFixture;
using Status = JournalFrameReader::Status;
using WriterStatus = Journal::Writer::Status;

TEST_F(JournalFrameReaderTest, WaitsAtLiveEndThenEndsAfterSeal) {
  auto journal = Journal::Open(dir_, {});
  auto writer = journal->StartWriter("/fifo");
  JournalFrameReader reader(journal, {});
  EXPECT_EQ(ReadFrames(reader).last, Status::kWait);  // a session without a byte yet
  writer->Append(Frame("one"));
  ReadResult r = ReadFrames(reader);
  EXPECT_EQ(r.lines, (std::vector<std::string>{"one"}));
  EXPECT_EQ(r.last, Status::kWait);
  std::string two = Frame("two");
  writer->Append(two.substr(0, 5));  // a partial frame at the live end is not an error
  r = ReadFrames(reader);
  EXPECT_TRUE(r.lines.empty());
  EXPECT_EQ(r.last, Status::kWait);
  writer->Append(two.substr(5));
  r = ReadFrames(reader);
  EXPECT_EQ(r.lines, (std::vector<std::string>{"two"}));
  EXPECT_EQ(r.last, Status::kWait);
  EXPECT_EQ(reader.position(), (JournalPosition{1, Frame("one").size() + two.size()}));
  writer->Seal();
  EXPECT_EQ(ReadFrames(reader).last, Status::kEnd);
  EXPECT_EQ(reader.skipped_bytes(), 0u);
}

TEST_F(JournalFrameReaderTest, FindsSegmentStartedAfterItsEnd) {
  auto journal = Journal::Open(dir_, {});
  auto first = journal->StartWriter("/fifo1");
  first->Append(Frame("a"));
  first->Seal();
  JournalFrameReader reader(journal, {});
  ReadResult r = ReadFrames(reader);
  EXPECT_EQ(r.lines, (std::vector<std::string>{"a"}));
  EXPECT_EQ(r.last, Status::kEnd);

  auto second = journal->StartWriter("/fifo2");
  EXPECT_EQ(ReadFrames(reader).last, Status::kWait);
  second->Append(Frame("b"));
  r = ReadFrames(reader);
  EXPECT_EQ(r.lines, (std::vector<std::string>{"b"}));
  EXPECT_EQ(r.last, Status::kWait);
  second->Seal();
  EXPECT_EQ(ReadFrames(reader).last, Status::kEnd);
}

TEST_F(JournalFrameReaderTest, FollowsRotationsOfALiveSegment) {
  auto journal = Journal::Open(dir_, {.max_segment_bytes = 120, .max_segments = 1000});
  auto writer = journal->StartWriter("/fifo");
  JournalFrameReader reader(journal, {});
  std::vector<std::string> got;
  std::string all = Frames(0, 50);
  for (std::size_t i = 0; i < all.size(); i += 23) {
    writer->Append(std::string_view(all).substr(i, 23));
    ReadResult r = ReadFrames(reader);
    ASSERT_EQ(r.last, Status::kWait);
    got.insert(got.end(), r.lines.begin(), r.lines.end());
  }
  writer->Seal();
  ReadResult r = ReadFrames(reader);
  got.insert(got.end(), r.lines.begin(), r.lines.end());
  EXPECT_EQ(r.last, Status::kEnd);
  EXPECT_EQ(got, Lines(0, 50));
  EXPECT_EQ(reader.skipped_bytes(), 0u);
}

TEST_F(JournalFrameReaderTest, StartsAtOldestWhenPositionWasEvicted) {
  auto journal = Journal::Open(dir_, {.max_segment_bytes = 100, .max_segments = 2});
  uint64_t evicted_bytes = 0;
  journal->SetEvictHook([&](uint64_t seq) { evicted_bytes += fs::file_size(SegPath(dir_, seq)); });
  auto writer = journal->StartWriter("/fifo");
  writer->Append(Frames(0, 30));
  writer->Seal();
  auto segments = journal->Segments();
  ASSERT_EQ(segments.size(), 2u);
  ASSERT_GT(segments.front(), 1u);

  JournalFrameReader reader(journal, {1, 0});
  ReadResult r = ReadFrames(reader);
  ASSERT_FALSE(r.lines.empty());
  EXPECT_EQ(r.starts.front(), (JournalPosition{segments.front(), 0}));
  EXPECT_EQ(r.lines.back(), LineText(29));
  EXPECT_EQ(r.last, Status::kEnd);
  EXPECT_EQ(reader.skipped_bytes(), evicted_bytes);
}

TEST_F(JournalFrameReaderTest, FinishesSegmentEvictedWhileOpen) {
  auto journal = Journal::Open(dir_, {});
  auto first = journal->StartWriter("/fifo1");
  first->Append(Frames(0, 5));
  first->Seal();
  auto second = journal->StartWriter("/fifo2");
  second->Append(Frames(5, 8));
  second->Seal();

  JournalFrameReader reader(journal, {});
  std::string_view body;
  JournalPosition start;
  ASSERT_EQ(reader.Next(&body, &start), Status::kFrame);
  EXPECT_GT(journal->EvictOldest(), 0u);
  EXPECT_FALSE(fs::exists(SegPath(dir_, 1)));
  ReadResult r = ReadFrames(reader);
  EXPECT_EQ(r.lines, Lines(1, 8));
  EXPECT_EQ(r.last, Status::kEnd);
  EXPECT_EQ(reader.skipped_bytes(), 0u);
}

TEST_F(JournalFrameReaderTest, CorruptLengthSkipsToNextSegment) {
  auto journal = Journal::Open(dir_, {});
  auto writer = journal->StartWriter("/fifo1");
  writer->Append(Frame("good") + std::string("\x7f\xff\xff\xff garbage", 12));
  JournalFrameReader reader(journal, {});
  std::string_view body;
  JournalPosition start;
  ASSERT_EQ(reader.Next(&body, &start), Status::kFrame);
  EXPECT_EQ(reader.Next(&body, &start), Status::kCorrupt);
  EXPECT_EQ(reader.skipped_bytes(), 12u);
  EXPECT_EQ(reader.Next(&body, &start), Status::kWait);  // segment 1 is still live
  writer->Seal();
  EXPECT_EQ(journal->ReadableBytes(1), Frame("good").size());
  auto next = journal->StartWriter("/fifo2");
  next->Append(Frame("after"));
  next->Seal();
  ReadResult r = ReadFrames(reader);
  EXPECT_EQ(r.lines, (std::vector<std::string>{"after"}));
  EXPECT_EQ(r.last, Status::kEnd);

  // A reader that meets the sealed segment reads up to the corrupt prefix and skips the rest.
  JournalFrameReader late(journal, {});
  r = ReadFrames(late);
  EXPECT_EQ(r.lines, (std::vector<std::string>{"good", "after"}));
  EXPECT_EQ(late.skipped_bytes(), 12u);
}

// The README tells users they may remove journals by hand: a reader meeting a segment whose
// file is gone must go on with the next one (it used to find the same segment again forever).
TEST_F(JournalFrameReaderTest, ASegmentRemovedByHandIsSkippedAndCountedLost) {
  auto journal = Journal::Open(dir_, {});
  for (int s = 0; s < 3; ++s) {
    auto w = journal->StartWriter("/fifo" + std::to_string(s));
    w->Append(Frames(s * 10, s * 10 + 10));
    w->Seal();
  }
  const uint64_t second_size = fs::file_size(SegPath(dir_, 2));
  ASSERT_TRUE(fs::remove(SegPath(dir_, 2)));
  JournalFrameReader reader(journal, {});
  ReadResult r = ReadFrames(reader);
  std::vector<std::string> want = Lines(0, 10);
  for (auto& l : Lines(20, 30)) want.push_back(l);
  EXPECT_EQ(r.lines, want);
  EXPECT_EQ(r.last, Status::kEnd);
  EXPECT_EQ(reader.lost_bytes(), second_size);
  EXPECT_EQ(journal->Segments(), (std::vector<uint64_t>{1, 3}));  // forgotten: not budgeted
}

TEST_F(JournalFrameReaderTest, AWholeJournalRemovedWhileReadingEndsTheRead) {
  auto journal = Journal::Open(dir_, {});
  for (int s = 0; s < 3; ++s) {
    auto w = journal->StartWriter("/fifo" + std::to_string(s));
    w->Append(Frames(s * 10, s * 10 + 10));
    w->Seal();
  }
  JournalFrameReader reader(journal, {});
  std::string_view body;
  JournalPosition start;
  ASSERT_EQ(reader.Next(&body, &start), Status::kFrame);
  fs::remove_all(dir_);
  ReadResult r = ReadFrames(reader);
  EXPECT_EQ(r.last, Status::kEnd);
  EXPECT_EQ(r.lines, Lines(1, 10));  // the open segment is still readable through its fd
  EXPECT_GT(reader.lost_bytes(), 0u);
  EXPECT_EQ(journal->Segments(), (std::vector<uint64_t>{1}));  // the others are forgotten
}

// A live segment that a reader cannot open (its file was removed while the container logs):
// the reader does not wait at it for ever, and the writer moves to a new segment.
TEST_F(JournalFrameReaderTest, ALiveSegmentThatCannotBeReadMakesTheWriterRotate) {
  auto journal = Journal::Open(dir_, {});
  auto writer = journal->StartWriter("/fifo");
  writer->Append(Frames(0, 5));
  ASSERT_TRUE(fs::remove(SegPath(dir_, 1)));
  JournalFrameReader reader(journal, {});
  ReadResult r = ReadFrames(reader);
  EXPECT_TRUE(r.lines.empty());
  EXPECT_EQ(r.last, Status::kWait);
  EXPECT_GT(reader.lost_bytes(), 0u);
  writer->Append(Frames(5, 6));  // still into the removed file: rotates right after
  EXPECT_EQ(writer->segment(), 2u);
  writer->Append(Frames(6, 10));
  r = ReadFrames(reader);
  EXPECT_EQ(r.lines, Lines(6, 10));
  writer->Seal();
  EXPECT_EQ(ReadFrames(reader).last, Status::kEnd);
}

// JournalFrameReader::State::GiveUp / JournalSegments::MarkUnreadable: any reader
// that fails to open a sealed segment, for any errno but ENOENT, makes the journal forget it.
// A `docker logs` reader (or OnEvict's counting reader, or Tail's counting readers) that meets
// a transient EMFILE therefore removes the segment from under the stream's own reader, which
// is behind (Loki slow): it then jumps over the segment without counting anything (it is not
// in `evicted`, and the lost bytes were counted by the docker-logs reader, whose count nobody
// reports). Lines neither delivered nor counted; the file stays on disk outside every budget.
TEST_F(JournalFrameReaderTest, ATransientOpenErrorOfAnotherReaderLosesNoLineOfTheStream) {
  auto journal = Journal::Open(dir_, {});
  for (int s = 0; s < 3; ++s) {
    auto w = journal->StartWriter("/fifo" + std::to_string(s));
    w->Append(Frames(s * 10, s * 10 + 10));
    w->Seal();
  }
  // The stream's reader has read segment 1 (Loki is slow: it is behind).
  JournalFrameReader stream_reader(journal, {1, 0});
  std::string_view body;
  JournalPosition start;
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(stream_reader.Next(&body, &start), Status::kFrame);
  }
  // `docker logs` of the same container, while the process is out of descriptors for a moment.
  {
    JournalFrameReader docker_logs(journal, {2, 0});
    NoNewFiles no_files;
    docker_logs.Next(&body, &start);
  }
  // The descriptors are back: the stream's reader goes on.
  const std::vector<std::string> rest = ReadFrames(stream_reader).lines;
  EXPECT_EQ(rest, Lines(10, 30)) << "the stream lost segments another reader could not open";
  EXPECT_EQ(journal->Segments(), (std::vector<uint64_t>{1, 2, 3}));
  // If the lines cannot be read, the stream's reader must at least count them.
  if (rest.size() < 20) {
    EXPECT_GT(stream_reader.lost_bytes() + stream_reader.skipped_bytes(), 0u)
        << "lines skipped with nothing counted";
  }
}

}  // namespace
}  // namespace skald
