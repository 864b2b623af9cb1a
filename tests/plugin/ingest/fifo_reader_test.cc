#include "plugin/ingest/fifo_reader.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "plugin/ingest/frame_codec.h"
#include "plugin/ingest/hand_over_bounds.h"
#include "plugin/journal/journal.h"
#include "tests/plugin/plugin_test_support.h"

namespace skald {
namespace {

using testkit::WaitFor;

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class CollectingSink : public LineSink {
 public:
  void OnLines(uint64_t stream_id, std::vector<LogLine>& lines, const JournalPosition&) override {
    std::lock_guard lock(mu_);
    for (LogLine& l : lines) lines_[stream_id].push_back(std::move(l.line));
    cv_.notify_all();
  }
  void OnEnd(uint64_t stream_id, bool) override {
    std::lock_guard lock(mu_);
    ended_.insert(stream_id);
    cv_.notify_all();
  }
  bool WaitEnded(std::size_t n, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return ended_.size() >= n; });
  }
  std::vector<std::string> Lines(uint64_t id) {
    std::lock_guard lock(mu_);
    return lines_[id];
  }
  std::set<uint64_t> Ended() {
    std::lock_guard lock(mu_);
    return ended_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint64_t, std::vector<std::string>> lines_;
  std::set<uint64_t> ended_;
};

std::string Frame(const std::string& line) { return testkit::StdoutFrame(line, 1); }

class FifoReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/skald-fifo-reader-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// A stream's fd is closed at its end while StartLogging opens other FIFOs on other threads:
// a FIFO given the number just closed must be drained like any other (the end of the old
// stream must not forget the new one, which would then spin the loop and never be read).
TEST_F(FifoReaderTest, AFifoThatReusesAClosedFdNumberIsDrained) {
  MetricsRegistry metrics;
  CollectingSink sink;
  FifoReader reader(sink, metrics);
  constexpr int kThreads = 3;
  constexpr int kPerThread = 1500;
  std::atomic<uint64_t> next_id{1};
  auto worker = [&](int t) {
    for (int i = 0; i < kPerThread; ++i) {
      const fs::path path = dir_ / ("f-" + std::to_string(t) + "-" + std::to_string(i));
      ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
      const int w = open(path.c_str(), O_RDWR | O_CLOEXEC);
      ASSERT_GE(w, 0);
      const uint64_t id = next_id++;
      reader.Add(id, path.string(), 1 << 20);
      const std::string frame = Frame("line of " + std::to_string(id));
      ASSERT_EQ(write(w, frame.data(), frame.size()), static_cast<ssize_t>(frame.size()));
      close(w);
      unlink(path.c_str());
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (auto& th : threads) th.join();
  const std::size_t total = kThreads * kPerThread;
  EXPECT_TRUE(sink.WaitEnded(total, 20s)) << sink.Ended().size() << " of " << total << " ended";
  for (uint64_t id = 1; id <= total; ++id) {
    auto lines = sink.Lines(id);
    ASSERT_EQ(lines.size(), 1u) << "stream " << id;
    EXPECT_EQ(lines[0], "line of " + std::to_string(id));
  }
}

// Records the size of every batch handed over, by stream.
class BatchRecordingSink : public CollectingSink {
 public:
  void OnLines(uint64_t stream_id, std::vector<LogLine>& lines,
               const JournalPosition& resume) override {
    std::size_t bytes = 0;
    for (const LogLine& l : lines) bytes += l.line.size();
    {
      std::lock_guard lock(mu_);
      max_batch_bytes_[stream_id] = std::max(max_batch_bytes_[stream_id], bytes);
      line_count_[stream_id] += lines.size();
    }
    CollectingSink::OnLines(stream_id, lines, resume);
  }
  std::size_t MaxBatchBytes(uint64_t id) {
    std::lock_guard lock(mu_);
    return max_batch_bytes_[id];
  }
  std::size_t LineCount(uint64_t id) {
    std::lock_guard lock(mu_);
    return line_count_[id];
  }

 private:
  std::mutex mu_;
  std::map<uint64_t, std::size_t> max_batch_bytes_;
  std::map<uint64_t, std::size_t> line_count_;
};

// `count` frames of one line of `line_bytes` bytes each.
std::string Frames(std::size_t count, std::size_t line_bytes) {
  std::string frames;
  const std::string frame = Frame(std::string(line_bytes, 'f'));
  for (std::size_t i = 0; i < count; ++i) frames += frame;
  return frames;
}

// The shipping thread serves the streams a batch at a time: a batch is what one stream's lines
// can hold up another's (its pipeline runs on all of it first), so batches are bounded.
constexpr std::size_t kMaxBatchBytes = hand_over::kMaxBytes;

// A memory stream (no-file) read its FIFO until a read came back short and handed everything
// read over as one batch: a FIFO its writer keeps full gave one batch of unbounded size.
TEST_F(FifoReaderTest, AMemoryStreamHandsOverItsLinesInBoundedBatches) {
  const std::string path = (dir_ / "flood").string();
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  const int w = open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(w, 0);
  ASSERT_EQ(fcntl(w, F_SETPIPE_SZ, 1024 * 1024), 1024 * 1024);
  const std::string frames = Frames(1000, 1000);  // about 1 MiB, all in the pipe at once
  ASSERT_EQ(write(w, frames.data(), frames.size()), static_cast<ssize_t>(frames.size()));
  MetricsRegistry metrics;
  BatchRecordingSink sink;
  FifoReader reader(sink, metrics);
  reader.Add(1, path, 1 << 20);
  ASSERT_TRUE(WaitFor([&] { return sink.LineCount(1) == 1000; }, 10s)) << sink.LineCount(1);
  EXPECT_LE(sink.MaxBatchBytes(1), kMaxBatchBytes + 1000)
      << "one batch held " << sink.MaxBatchBytes(1) << " bytes of lines";
  close(w);
}

// The loop read a memory stream's FIFO for as long as its writer kept it full: a flooding
// no-file container kept every other container's FIFO from being read (and its lines piled up
// in memory until the flood paused).
TEST_F(FifoReaderTest, AFifoItsWriterKeepsFullDoesNotKeepTheReaderFromTheOthers) {
  const std::string flood_path = (dir_ / "flood").string();
  const std::string quiet_path = (dir_ / "quiet").string();
  ASSERT_EQ(mkfifo(flood_path.c_str(), 0600), 0);
  ASSERT_EQ(mkfifo(quiet_path.c_str(), 0600), 0);
  const int flood = open(flood_path.c_str(), O_RDWR | O_CLOEXEC);  // blocking: waits for room
  const int quiet = open(quiet_path.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(flood, 0);
  ASSERT_GE(quiet, 0);
  ASSERT_EQ(fcntl(flood, F_SETPIPE_SZ, 1024 * 1024), 1024 * 1024);
  // Tiny lines: decoding them costs the reader far more than writing them costs the writer,
  // so the writer keeps the FIFO full and every read comes back whole.
  const std::string block = Frames(20000, 10);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> written{0};
  std::thread writer([&] {
    while (!stop && written < 1024ull * 1024 * 1024) {
      if (write(flood, block.data(), block.size()) != static_cast<ssize_t>(block.size())) break;
      written += block.size();
    }
  });
  MetricsRegistry metrics;
  BatchRecordingSink sink;
  FifoReader reader(sink, metrics);
  reader.Add(1, flood_path, 1 << 20);
  reader.Add(2, quiet_path, 1 << 20);
  Counter& bytes_read =
      metrics.GetCounter("skald_fifo_bytes_read_total", "Bytes read from container FIFOs.");
  // The reader is busy with the flood before the neighbour writes its line.
  ASSERT_TRUE(WaitFor([&] { return bytes_read.Value() > 4 * 1024 * 1024; }, 30s));
  const std::string line = Frame("neighbour");
  ASSERT_EQ(write(quiet, line.data(), line.size()), static_cast<ssize_t>(line.size()));
  const uint64_t written_then = written;
  const bool arrived = WaitFor([&] { return sink.LineCount(2) == 1; }, 30s);
  const uint64_t flood_meanwhile = written - written_then;
  stop = true;
  writer.join();  // the reader drains the FIFO: a write waiting for room returns
  close(flood);
  close(quiet);
  EXPECT_TRUE(arrived) << "the neighbour's line was not read while the flood went on";
  // Read within a few rounds of the flood's (each at most 1 MiB): not after the flood's
  // writer paused or hundreds of MiB later.
  EXPECT_LT(flood_meanwhile, 64u * 1024 * 1024)
      << "the flood wrote " << flood_meanwhile << " bytes before the neighbour's line was read";
}

class FifoReaderJournalTest : public FifoReaderTest {
 protected:
  void SetUp() override {
    FifoReaderTest::SetUp();
    journal_dir_ = dir_ / "containers" / "c1";
  }
  // A FIFO held open for writing as dockerd holds it (non-blocking, so a test can see it fill).
  int MakeFifo(const std::string& name, std::string* path) {
    *path = (dir_ / name).string();
    EXPECT_EQ(mkfifo(path->c_str(), 0600), 0);
    const int w = open(path->c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    EXPECT_GE(w, 0);
    return w;
  }
  // Stream 1 on a journal of small segments, with a session on a new FIFO; returns the FIFO's
  // write end.
  int AddStreamWithSession(FifoReader& reader) {
    journal_ = Journal::Open(journal_dir_, {.max_segment_bytes = 4096, .max_segments = 1000});
    std::string fifo;
    const int w = MakeFifo("fifo", &fifo);
    auto writer = journal_->StartWriter(fifo);
    reader.AddJournalStream(1, journal_, {}, 1 << 20);
    EXPECT_TRUE(reader.AddSession(1, fifo, writer));
    return w;
  }
  // Writes frames of lines [from, to); returns how many whole frames the FIFO took.
  static int WriteLines(int w, int from, int to) {
    for (int i = from; i < to; ++i) {
      const std::string frame = Frame("line " + std::to_string(i) + std::string(100, 'x'));
      const ssize_t n = write(w, frame.data(), frame.size());
      if (n != static_cast<ssize_t>(frame.size())) return i - from;
    }
    return to - from;
  }
  // Removes the journal's directory (a full disk does the same), then writes lines through `w`
  // until the journal refuses bytes: the session goes on in memory. *lines: how many were
  // written. (Call it in ASSERT_NO_FATAL_FAILURE.)
  void RefuseJournalBytes(int w, MetricsRegistry& metrics, int* lines) {
    fs::remove_all(journal_dir_);
    for (*lines = 0; *lines < 2000 && metrics.CounterTotal("skald_journal_write_errors_total") == 0;
         ++*lines) {
      ASSERT_EQ(WriteLines(w, *lines, *lines + 1), 1);
      std::this_thread::sleep_for(1ms);
    }
    ASSERT_GT(metrics.CounterTotal("skald_journal_write_errors_total"), 0u);
  }
  fs::path journal_dir_;
  std::shared_ptr<Journal> journal_;
};

// A journal stream handed its lines over every 256 frames: 4 MiB of dockerd's 16 KiB chunks in
// one batch.
TEST_F(FifoReaderJournalTest, AJournalStreamHandsOverItsLinesInBoundedBatches) {
  auto journal = Journal::Open(journal_dir_, {});
  auto writer = journal->StartWriter("/fifo");
  writer->Append(Frames(300, 10000));
  writer->Seal();
  MetricsRegistry metrics;
  BatchRecordingSink sink;
  FifoReader reader(sink, metrics);
  reader.AddJournalStream(1, journal, {}, 1 << 20);  // no session: it replays and ends
  ASSERT_TRUE(sink.WaitEnded(1, 10s));
  EXPECT_EQ(sink.LineCount(1), 300u);
  EXPECT_LE(sink.MaxBatchBytes(1), kMaxBatchBytes + 10000)
      << "one batch held " << sink.MaxBatchBytes(1) << " bytes of lines";
}

// A stream whose journal refuses bytes (disk full) read up to 16 MiB of its FIFO per round and
// handed its lines over 256 at a time whatever their size: up to 1 MiB in one batch, and a
// round far longer than the other ways of reading a FIFO allow.
TEST_F(FifoReaderJournalTest, AStreamWhoseJournalRefusesBytesHandsOverInBoundedBatches) {
  MetricsRegistry metrics;
  BatchRecordingSink sink;
  FifoReader reader(sink, metrics);
  const int w = AddStreamWithSession(reader);
  int small = 0;
  ASSERT_NO_FATAL_FAILURE(RefuseJournalBytes(w, metrics, &small));
  ASSERT_TRUE(WaitFor([&] { return sink.LineCount(1) == static_cast<std::size_t>(small); }, 10s));
  // 90 lines of 10,000 bytes in the FIFO at once: the reader finds whole reads to decode.
  constexpr std::size_t kBig = 90, kBigBytes = 10000;
  const std::string frames = Frames(kBig, kBigBytes);
  std::size_t off = 0;
  for (int i = 0; i < 1000 && off < frames.size(); ++i) {
    const ssize_t n = write(w, frames.data() + off, frames.size() - off);
    if (n > 0) off += static_cast<std::size_t>(n);
    if (off < frames.size()) std::this_thread::sleep_for(5ms);
  }
  ASSERT_EQ(off, frames.size());
  ASSERT_TRUE(WaitFor([&] { return sink.LineCount(1) == small + kBig; }, 10s))
      << sink.LineCount(1) << " of " << small + kBig;
  EXPECT_LE(sink.MaxBatchBytes(1), kMaxBatchBytes + kBigBytes)
      << "one batch held " << sink.MaxBatchBytes(1) << " bytes of lines";
  close(w);
}

// The journal cannot be written any more (here: its directory was removed; a full disk does
// the same): the container must not block. Its lines go on in memory, and journaling resumes
// once the journal takes bytes again.
TEST_F(FifoReaderJournalTest, AJournalThatCannotBeWrittenGoesOnInMemory) {
  MetricsRegistry metrics;
  CollectingSink sink;
  FifoReader reader(sink, metrics);
  const int w = AddStreamWithSession(reader);
  ASSERT_EQ(WriteLines(w, 0, 100), 100);
  ASSERT_TRUE(WaitFor([&] { return sink.Lines(1).size() == 100; }, 10s));

  fs::remove_all(journal_dir_);
  // Far more than the FIFO holds (1 MiB): written only if the plugin keeps draining it.
  int written = 0;
  for (int round = 0; round < 200 && written < 20000; ++round) {
    written += WriteLines(w, 100 + written, 20100);
    std::this_thread::sleep_for(5ms);
  }
  ASSERT_EQ(written, 20000) << "the container blocked: the FIFO is not drained";
  EXPECT_GT(metrics.CounterTotal("skald_journal_write_errors_total"), 0u);
  // The newest lines arrive (some written into the removed segment before the reader noticed
  // are lost, and counted).
  ASSERT_TRUE(WaitFor(
      [&] {
        auto lines = sink.Lines(1);
        return !lines.empty() && lines.back().starts_with("line 20099x");
      },
      10s))
      << sink.Lines(1).size()
      << " lines, the last: " << (sink.Lines(1).empty() ? "" : sink.Lines(1).back().substr(0, 12));

  // The journal takes bytes again: new lines are journaled.
  fs::create_directories(journal_dir_);
  std::this_thread::sleep_for(1200ms);  // the journal is tried again once a second
  ASSERT_EQ(WriteLines(w, 20100, 20200), 100);
  ASSERT_TRUE(WaitFor(
      [&] {
        auto lines = sink.Lines(1);
        return !lines.empty() && lines.back().starts_with("line 20199x");
      },
      10s));
  bool segment = false;
  for (auto& e : fs::directory_iterator(journal_dir_)) {
    segment |= e.path().extension() == ".seg" && fs::file_size(e.path()) > 0;
  }
  EXPECT_TRUE(segment) << "journaling did not resume";
  close(w);
  EXPECT_TRUE(sink.WaitEnded(1, 10s));
}

// A sink whose window the test opens and closes.
class GatedSink : public LineSink {
 public:
  void OnLines(uint64_t, std::vector<LogLine>& lines, const JournalPosition&) override {
    std::lock_guard lock(mu_);
    for (LogLine& l : lines) lines_.push_back(std::move(l.line));
  }
  void OnEnd(uint64_t, bool) override { ended_ = true; }
  bool WantsLines(uint64_t) override { return open_; }
  bool LokiTakesLines(uint64_t) override { return taking_; }
  std::vector<std::string> Lines() {
    std::lock_guard lock(mu_);
    return lines_;
  }
  std::atomic<bool> open_{true};
  std::atomic<bool> taking_{false};
  std::atomic<bool> ended_{false};

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

// fifo_reader.cc TryResumeJournal / FeedAndMaybeEnd: lines read while the journal refused
// bytes wait in session.queued for the sink's window. When the journal takes bytes again the
// session goes back to journal mode with those lines still queued; they are handed over by
// the `waiting` pass only while the session lives. When its FIFO ends first (the container
// exits), FeedAndMaybeEnd erases the session and its queued lines with it: neither handed
// over nor counted (FeedMemory's end-of-stream accounting only runs in memory mode).
using FifoReaderMemoryModeTest = FifoReaderJournalTest;

TEST_F(FifoReaderMemoryModeTest, LinesQueuedInMemoryWhenTheJournalResumesAreNotLostAtTheEnd) {
  MetricsRegistry metrics;
  GatedSink sink;
  {
    FifoReader reader(sink, metrics);
    const int w = AddStreamWithSession(reader);
    int fillers = 0;
    ASSERT_NO_FATAL_FAILURE(RefuseJournalBytes(w, metrics, &fillers));
    auto put = [&](const std::string& line) {
      const std::string frame = Frame(line);
      return write(w, frame.data(), frame.size()) == static_cast<ssize_t>(frame.size());
    };
    ASSERT_TRUE(WaitFor(
        [&] { return !sink.Lines().empty() && sink.Lines().back().starts_with("line "); }, 10s));
    // Loki is slow: the window is full. Fifty lines wait in memory.
    sink.open_ = false;
    std::this_thread::sleep_for(100ms);
    for (int i = 0; i < 50; ++i) ASSERT_TRUE(put("mem " + std::to_string(i)));
    std::this_thread::sleep_for(200ms);
    // The disk has room again; the next line goes to the journal, then the container exits.
    fs::create_directories(journal_dir_);
    std::this_thread::sleep_for(1200ms);
    ASSERT_TRUE(put("journaled again"));
    std::this_thread::sleep_for(200ms);
    close(w);
    std::this_thread::sleep_for(200ms);
    sink.open_ = true;
    reader.Wake();
    ASSERT_TRUE(WaitFor([&] { return sink.ended_.load(); }, 10s));
  }
  uint64_t delivered = 0;
  for (const std::string& l : sink.Lines()) delivered += l.starts_with("mem ") ? 1 : 0;
  const uint64_t dropped =
      metrics
          .GetCounter("skald_entries_dropped_total", "Entries not delivered, by reason.",
                      {{"reason", "disk_full"}})
          .Value();
  const std::vector<std::string> all = sink.Lines();
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.back(), "journaled again");  // the journal did resume
  EXPECT_EQ(delivered + dropped, 50u)
      << delivered << " of the 50 lines delivered, " << dropped << " counted as dropped";
}

// fifo_reader.cc FeedMemory / MayRelease: with the journal refusing bytes and the sink's
// window closed, the memory queue fills. While Loki takes lines the FIFO is then held (the
// writer blocks; nothing is dropped) until the window opens; while Loki is away the writer is
// never held and the oldest lines are dropped as disk_full, each line delivered or counted.
class FifoReaderFullQueueTest : public FifoReaderJournalTest,
                                public ::testing::WithParamInterface<bool> {};

TEST_P(FifoReaderFullQueueTest, HoldsTheFifoWhileLokiTakesLinesAndDropsOnlyWhileItIsAway) {
  const bool loki_takes_lines = GetParam();
  MetricsRegistry metrics;
  GatedSink sink;
  sink.taking_ = loki_takes_lines;
  constexpr int kLines = 4000;  // of about 1 KiB: four times the memory queue's bound
  std::atomic<int> written{0};
  int fillers = 0;  // written first, until the journal refuses bytes (some may go by memory)
  {
    FifoReader reader(sink, metrics);
    const int keeper = AddStreamWithSession(reader);
    ASSERT_NO_FATAL_FAILURE(RefuseJournalBytes(keeper, metrics, &fillers));
    const std::string fifo = (dir_ / "fifo").string();
    sink.open_ = false;  // Loki has not acknowledged what it was sent: the window is full
    std::thread container([&] {
      const int w = open(fifo.c_str(), O_WRONLY | O_CLOEXEC);  // blocking writes
      for (int i = 0; i < kLines; ++i) {
        const std::string frame = Frame("line " + std::to_string(i) + " " + std::string(1000, 'x'));
        if (write(w, frame.data(), frame.size()) != static_cast<ssize_t>(frame.size())) break;
        ++written;
      }
      close(w);
    });
    if (loki_takes_lines) {
      // Held: the queue (1 MiB) and the pipe take a part; the rest waits in the container.
      std::this_thread::sleep_for(1500ms);
      EXPECT_LT(written.load(), kLines) << "the container was not held";
      EXPECT_EQ(metrics.CounterTotal("skald_entries_dropped_total"), 0u);
      sink.open_ = true;  // Loki acknowledges
      reader.Wake();
    }
    EXPECT_TRUE(WaitFor([&] { return written.load() == kLines; }, 30s))
        << written.load() << " of " << kLines << " lines written";
    container.join();
    sink.open_ = true;
    reader.Wake();
    close(keeper);
    ASSERT_TRUE(WaitFor([&] { return sink.ended_.load(); }, 30s));
  }
  const uint64_t delivered = sink.Lines().size();
  const uint64_t dropped =
      metrics
          .GetCounter("skald_entries_dropped_total", "Entries not delivered, by reason.",
                      {{"reason", "disk_full"}})
          .Value();
  EXPECT_EQ(delivered + dropped, static_cast<uint64_t>(kLines + fillers))
      << delivered << " delivered, " << dropped << " dropped, of " << kLines << " lines and "
      << fillers << " fillers";
  if (loki_takes_lines) {
    EXPECT_EQ(dropped, 0u);
  } else {
    EXPECT_GT(dropped, 0u) << "Loki away and the window closed: the queue's bound must drop";
  }
}

INSTANTIATE_TEST_SUITE_P(LokiTakesLinesOrNot, FifoReaderFullQueueTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? std::string("LokiTakesLines")
                                             : std::string("LokiAway");
                         });

}  // namespace
}  // namespace skald

namespace skald {
namespace {

// fifo_reader.h SetTick / TickWithin: the tick runs once at once, then only when it asked to
// run again or TickWithin() asks for it; the loop has no timer of its own.
TEST(FifoReaderTickTest, TheTickRunsWhenDueAndNeverOnItsOwn) {
  CollectingSink sink;
  MetricsRegistry metrics;
  // Before the reader: its thread may run the tick until the reader is destroyed.
  std::atomic<int> ticks{0};
  std::atomic<int> again_ms{-1};  // < 0: kNoTick
  FifoReader reader(sink, metrics);
  reader.SetTick([&] {
    ++ticks;
    const int again = again_ms.load();
    return again < 0 ? FifoReader::kNoTick : std::chrono::milliseconds(again);
  });
  ASSERT_TRUE(WaitFor([&] { return ticks.load() == 1; }, 10s));  // once, at once
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(ticks.load(), 1) << "a tick that asked for nothing ran again";

  reader.TickWithin(0ms);  // asked for: it runs
  ASSERT_TRUE(WaitFor([&] { return ticks.load() == 2; }, 10s));

  reader.TickWithin(24h);  // due far away: nothing runs now
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(ticks.load(), 2);
  reader.TickWithin(10ms);  // a sooner one replaces it
  ASSERT_TRUE(WaitFor([&] { return ticks.load() == 3; }, 10s));

  again_ms = 10;  // a tick that asks to run again keeps running
  reader.TickWithin(0ms);
  EXPECT_TRUE(WaitFor([&] { return ticks.load() >= 8; }, 10s)) << ticks.load();
  again_ms = -1;
}

// A stream paused for the sink's window is decoded again when Wake() says the window has room,
// without a timer.
TEST(FifoReaderTickTest, APausedStreamGoesOnAtWake) {
  char tmpl[] = "/tmp/skald-fifo-wake-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const fs::path dir = tmpl;
  {
    GatedSink sink;
    MetricsRegistry metrics;
    FifoReader reader(sink, metrics);
    auto journal = Journal::Open(dir / "journal", {});
    const std::string fifo = (dir / "fifo").string();
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    const int w = open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    ASSERT_GE(w, 0);
    auto writer = journal->StartWriter(fifo);
    sink.open_ = false;
    reader.AddJournalStream(1, journal, {}, 1 << 20);
    ASSERT_TRUE(reader.AddSession(1, fifo, writer));
    const std::string frame = Frame("waits for the window");
    ASSERT_EQ(write(w, frame.data(), frame.size()), static_cast<ssize_t>(frame.size()));
    // Drained into the journal, not handed over while the window is closed.
    ASSERT_TRUE(WaitFor([&] { return journal->TotalBytes() >= frame.size(); }, 10s));
    std::this_thread::sleep_for(300ms);
    EXPECT_TRUE(sink.Lines().empty());
    sink.open_ = true;
    reader.Wake();
    EXPECT_TRUE(WaitFor([&] { return sink.Lines().size() == 1; }, 10s));
    close(w);
    EXPECT_TRUE(WaitFor([&] { return sink.ended_.load(); }, 10s));
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace skald
