#include "plugin/api/read_logs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "plugin/api/plugin_api_server.h"
#include "plugin/config/container_info.h"
#include "plugin/driver/driver.h"
#include "plugin/ingest/frame_codec.h"
#include "plugin/journal/journal.h"
#include "plugin/metrics/metrics.h"

namespace skald {
namespace {

using namespace std::chrono_literals;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kSecond = 1'000'000'000;

int64_t WallClockNow() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Whole(std::string_view text, int64_t ts, std::string_view source = "stdout") {
  LogEntryView v;
  v.source = source;
  v.time_nano = ts;
  v.line = text;
  std::string out;
  EncodeFrame(v, out);
  return out;
}

std::string Chunk(std::string_view text, std::string_view id, int ordinal, bool last, int64_t ts,
                  std::string_view source = "stdout") {
  LogEntryView v;
  v.source = source;
  v.time_nano = ts;
  v.line = text;
  v.partial = true;
  v.has_partial_metadata = true;
  v.partial_id = id;
  v.partial_ordinal = ordinal;
  v.partial_last = last;
  std::string out;
  EncodeFrame(v, out);
  return out;
}

struct Line {
  std::string source;
  int64_t time_nano;
  std::string line;
  friend bool operator==(const Line&, const Line&) = default;
  friend std::ostream& operator<<(std::ostream& os, const Line& l) {
    return os << l.source << "@" << l.time_nano << ":" << ::testing::PrintToString(l.line);
  }
};

// The frames of an answer; fails the test on a malformed body.
std::vector<Line> Decode(std::string_view body) {
  std::vector<Line> out;
  while (!body.empty()) {
    std::string_view frame;
    std::size_t used = 0;
    if (NextFrame(body, &frame, &used) != FrameStatus::kOk) {
      ADD_FAILURE() << "the answer ends inside a frame";
      break;
    }
    auto e = DecodeLogEntry(frame);
    if (!e) {
      ADD_FAILURE() << "a frame is not a LogEntry";
      break;
    }
    EXPECT_FALSE(e->partial) << "ReadLogs frames carry no partial flag";
    out.push_back(Line{std::string(e->source), e->time_nano, std::string(e->line)});
    body.remove_prefix(used);
  }
  return out;
}

std::vector<std::string> Texts(const std::vector<Line>& lines) {
  std::vector<std::string> out;
  for (const auto& l : lines) out.push_back(l.line);
  return out;
}

ReadLogsConfig Tail(int64_t n) {
  ReadLogsConfig c;
  c.tail = n;
  return c;
}

class ReadLogs : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "read_logs_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::shared_ptr<Journal> Open(int64_t max_segment_bytes = -1) {
    JournalLimits limits;
    limits.max_segment_bytes = max_segment_bytes;
    limits.max_segments = 10000;
    return Journal::Open(dir_ / "containers" / "c1", limits);
  }

  // Runs ServeReadLogs into a string.
  std::vector<Line> Read(const std::shared_ptr<Journal>& journal, const ReadLogsConfig& config,
                         ReadLogsOptions options = {}) {
    std::string body;
    ReadLogsSink sink;
    sink.write = [&](std::string_view bytes) {
      EXPECT_FALSE(bytes.empty());
      body.append(bytes);
      return true;
    };
    last_ = ServeReadLogs(journal, config, sink, options);
    return Decode(body);
  }

  std::filesystem::path dir_;
  ReadLogsResult last_;
};

TEST_F(ReadLogs, EveryLineEndsInANewlineWithItsSourceAndTime) {
  auto journal = Open();
  auto w = journal->StartWriter("/run/docker/logging/f1");
  w->Append(Whole("one", 10) + Whole("two", 20, "stderr") + Whole("three", 30));
  w->Seal();

  EXPECT_THAT(Read(journal, Tail(-1)),
              ElementsAre(Line{"stdout", 10, "one\n"}, Line{"stderr", 20, "two\n"},
                          Line{"stdout", 30, "three\n"}));
  EXPECT_EQ(last_.end, ReadLogsResult::End::kDone);
  EXPECT_EQ(last_.lines, 3u);
}

TEST_F(ReadLogs, PartialChunksComeBackAsOneLineWithTheFirstChunksTime) {
  auto journal = Open();
  auto w = journal->StartWriter("/f");
  w->Append(Chunk("aaa", "p1", 1, false, 100));
  w->Append(Whole("err-between", 150, "stderr"));
  w->Append(Chunk("bbb", "p1", 2, false, 100));
  w->Append(Chunk("c", "p1", 3, true, 100));
  w->Append(Chunk("xyz", "p2", 1, false, 200));
  w->Append(Chunk("", "p2", 2, true, 200));  // the last chunk may be empty
  w->Append(Whole("after", 300));
  w->Seal();

  EXPECT_THAT(Read(journal, Tail(-1)),
              ElementsAre(Line{"stderr", 150, "err-between\n"}, Line{"stdout", 100, "aaabbbc\n"},
                          Line{"stdout", 200, "xyz\n"}, Line{"stdout", 300, "after\n"}));
}

TEST_F(ReadLogs, ChunksWithoutMetadataFromOldDaemonsAreJoinedToo) {
  auto journal = Open();
  auto w = journal->StartWriter("/f");
  LogEntryView v;
  v.source = "stdout";
  v.time_nano = 5;
  v.partial = true;
  v.line = "old-";
  std::string bytes;
  EncodeFrame(v, bytes);
  v.line = "style";
  EncodeFrame(v, bytes);
  w->Append(bytes + Whole("-end", 5) + Whole("next", 6));
  w->Seal();

  EXPECT_THAT(Texts(Read(journal, Tail(-1))), ElementsAre("old-style-end\n", "next\n"));
}

TEST_F(ReadLogs, BlankLinesAreKeptAsJsonFileKeepsThem) {
  auto journal = Open();
  auto w = journal->StartWriter("/f");
  w->Append(Whole("a", 1) + Whole("", 2) + Whole("   ", 3) + Whole("", 4, "stderr") +
            Whole("b", 5));
  w->Seal();

  EXPECT_THAT(Texts(Read(journal, Tail(-1))), ElementsAre("a\n", "\n", "   \n", "\n", "b\n"));
}

TEST_F(ReadLogs, TailZeroThreeMoreThanThereAreAndAll) {
  auto journal = Open();
  auto w = journal->StartWriter("/f");
  for (int i = 1; i <= 10; ++i) w->Append(Whole("line " + std::to_string(i), i));
  w->Seal();

  EXPECT_TRUE(Read(journal, Tail(0)).empty());
  EXPECT_THAT(Texts(Read(journal, Tail(3))), ElementsAre("line 8\n", "line 9\n", "line 10\n"));
  EXPECT_EQ(Read(journal, Tail(100)).size(), 10u);
  EXPECT_EQ(Read(journal, Tail(10)).size(), 10u);
  auto all = Read(journal, Tail(-1));
  ASSERT_EQ(all.size(), 10u);
  EXPECT_EQ(all.front().line, "line 1\n");
}

TEST_F(ReadLogs, SinceAndUntilKeepTheLinesInBetweenInclusive) {
  auto journal = Open();
  auto w = journal->StartWriter("/f");
  for (int i = 1; i <= 10; ++i) w->Append(Whole(std::to_string(i), i * kSecond));
  w->Seal();

  ReadLogsConfig c;
  c.since_nano = 4 * kSecond;
  c.until_nano = 7 * kSecond;
  EXPECT_THAT(Texts(Read(journal, c)), ElementsAre("4\n", "5\n", "6\n", "7\n"));

  // Tail counts the lines that pass the filter.
  c.tail = 2;
  EXPECT_THAT(Texts(Read(journal, c)), ElementsAre("6\n", "7\n"));
  c.until_nano.reset();
  EXPECT_THAT(Texts(Read(journal, c)), ElementsAre("9\n", "10\n"));
  c.since_nano = 9 * kSecond + 1;
  EXPECT_THAT(Texts(Read(journal, c)), ElementsAre("10\n"));
}

// "The last N lines" are the N that started last (the newest by time), sent in the order they
// were completed: a long line begun before a short one on the other stream comes after it.
TEST_F(ReadLogs, TailAcrossManySegmentsIsTheLinesThatStartedLast) {
  auto journal = Open(/*max_segment_bytes=*/300);
  auto w = journal->StartWriter("/f");
  struct Want {
    int start;  // order of the line's first frame
    std::string text;
  };
  std::vector<Want> want;  // in the order the lines are complete
  int starts = 0;
  int64_t ts = 1;
  for (int i = 0; i < 60; ++i, ++ts) {
    std::string text = "line " + std::to_string(i) + std::string(i % 7 * 5, 'x');
    if (i % 5 == 2) {
      // A long line in chunks, interleaved with the other stream: it spans segments.
      std::string id = "id" + std::to_string(i);
      const int long_start = starts++;
      w->Append(Chunk(text + "-a", id, 1, false, ts));
      w->Append(Whole("err " + std::to_string(i), ts + 1, "stderr"));
      want.push_back({starts++, "err " + std::to_string(i) + "\n"});
      w->Append(Chunk(std::string(100, 'y'), id, 2, false, ts));
      w->Append(Chunk("-b", id, 3, true, ts));
      want.push_back({long_start, text + "-a" + std::string(100, 'y') + "-b\n"});
      ++ts;
    } else {
      w->Append(Whole(text, ts));
      want.push_back({starts++, text + "\n"});
    }
  }
  w->Seal();
  ASSERT_GT(journal->Segments().size(), 10u) << "the test needs many segments";

  auto tail = [&](int n) {
    std::vector<std::string> out;
    for (const auto& l : want) {
      if (l.start >= starts - n) out.push_back(l.text);
    }
    return out;
  };
  EXPECT_EQ(Texts(Read(journal, Tail(-1))), tail(starts));
  for (int n : {1, 2, 3, 4, 7, 13, 25, 71, 72, 500}) {
    EXPECT_EQ(Texts(Read(journal, Tail(n))), tail(n)) << "tail " << n;
  }
  EXPECT_THAT(Texts(Read(journal, Tail(3))),
              ElementsAre("err 57\n", "line 58xxxxxxxxxx\n", "line 59xxxxxxxxxxxxxxx\n"));
}

TEST_F(ReadLogs, ALineLongerThanAFrameGoesOutInPiecesWithOneNewline) {
  auto journal = Open();
  auto w = journal->StartWriter("/f");
  std::string a(40, 'a'), b(40, 'b');
  w->Append(Chunk(a, "p", 1, false, 7) + Chunk(b, "p", 2, true, 7) + Whole("short", 8));
  w->Seal();

  ReadLogsOptions options;
  options.max_frame_line_bytes = 16;
  auto lines = Read(journal, Tail(-1), options);
  std::string joined;
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    EXPECT_EQ(lines[i].time_nano, 7);
    joined += lines[i].line;
  }
  EXPECT_GT(lines.size(), 3u);
  EXPECT_EQ(joined, a + b + "\n");
  EXPECT_EQ(lines.back().line, "short\n");
  EXPECT_EQ(last_.lines, 2u);
}

TEST_F(ReadLogs, WithoutFollowALiveJournalIsReadToItsCurrentEnd) {
  auto journal = Open();
  auto w = journal->StartWriter("/f");  // live: never sealed
  w->Append(Whole("one", 1) + Chunk("unfini", "p", 1, false, 2));

  auto started = std::chrono::steady_clock::now();
  // The line still being written comes as it is so far, without a newline.
  EXPECT_THAT(Texts(Read(journal, Tail(-1))), ElementsAre("one\n", "unfini"));
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1s);
  EXPECT_THAT(Texts(Read(journal, Tail(1))), ElementsAre("unfini"));
}

TEST_F(ReadLogs, ALineWhoseRestNeverCameEndsWhereTheNextLineBegins) {
  auto journal = Open();
  auto w1 = journal->StartWriter("/f1");
  w1->Append(Chunk("cut", "p", 1, false, 1));
  w1->Seal();
  auto w2 = journal->StartWriter("/f2");
  w2->Append(Whole("next session", 2));
  w2->Seal();

  EXPECT_THAT(Texts(Read(journal, Tail(-1))), ElementsAre("cut\n", "next session\n"));
  EXPECT_THAT(Texts(Read(journal, Tail(1))), ElementsAre("next session\n"));
}

// The shipper's rule (plugin/ingest/partial_chunks.h): a chunk of another line ends the open line
// of its source at once, even a chunk past the first of a line whose start is lost. The open line
// used to stay open until the next line began, and came after what the other source said.
TEST_F(ReadLogs, AChunkOfAnotherLineEndsTheOpenLineAtOnce) {
  auto journal = Open();
  auto w = journal->StartWriter("/f");
  w->Append(Chunk("cut", "a", 1, false, 1));
  w->Append(Chunk("lost start", "b", 3, false, 2));  // chunks 1 and 2 of "b" never came
  w->Append(Whole("err", 3, "stderr"));
  w->Append(Chunk(" and end", "b", 4, true, 2));
  w->Append(Whole("next", 4));
  w->Seal();

  EXPECT_THAT(Texts(Read(journal, Tail(-1))), ElementsAre("cut\n", "err\n", "next\n"));
  EXPECT_THAT(Texts(Read(journal, Tail(2))), ElementsAre("err\n", "next\n"));
}

// Runs a follower on its own thread; the sink collects the answer.
class Follower {
 public:
  Follower(
      std::shared_ptr<Journal> journal, ReadLogsConfig config,
      std::function<bool()> accept = [] { return true; })
      : accept_(std::move(accept)) {
    config.follow = true;
    ReadLogsSink sink;
    sink.write = [this](std::string_view bytes) {
      if (!accept_()) return false;
      std::lock_guard lock(mu_);
      body_.append(bytes);
      cv_.notify_all();
      return true;
    };
    ReadLogsOptions options;
    options.poll = 50ms;
    options.stopping = [this] { return stop_.load(); };
    result_ = std::async(std::launch::async,
                         [=] { return ServeReadLogs(journal, config, sink, options); });
  }
  ~Follower() {
    stop_ = true;  // never hang the test binary
    if (result_.valid()) result_.wait();
  }

  // Waits until the answer holds at least `n` frames.
  std::vector<Line> WaitForLines(std::size_t n) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, 5s, [&] { return Decode(body_).size() >= n; });
    return Decode(body_);
  }
  // The result, or nullopt when the follower has not ended within `timeout`.
  std::optional<ReadLogsResult> Result(std::chrono::milliseconds timeout) {
    if (result_.wait_for(timeout) != std::future_status::ready) return std::nullopt;
    return result_.get();
  }
  std::vector<Line> Lines() {
    std::lock_guard lock(mu_);
    return Decode(body_);
  }
  void Stop() { stop_ = true; }

 private:
  std::function<bool()> accept_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string body_;
  std::atomic<bool> stop_{false};
  std::future<ReadLogsResult> result_;
};

TEST_F(ReadLogs, FollowSendsWhatIsAppendedLaterAndEndsWhenTheSessionIsSealed) {
  auto journal = Open(/*max_segment_bytes=*/200);
  auto w = journal->StartWriter("/f");
  w->Append(Whole("before 1", 1) + Whole("before 2", 2));

  Follower follower(journal, Tail(-1));
  ASSERT_EQ(follower.WaitForLines(2).size(), 2u);
  std::this_thread::sleep_for(100ms);  // the follower waits at the live end now
  EXPECT_FALSE(follower.Result(0ms)) << "a follower ended before the session did";

  std::vector<std::string> want = {"before 1\n", "before 2\n"};
  for (int i = 0; i < 20; ++i) {  // enough to rotate segments while following
    w->Append(Whole("after " + std::to_string(i), 10 + i));
    want.push_back("after " + std::to_string(i) + "\n");
  }
  w->Append(Chunk("long ", "p", 1, false, 50));
  ASSERT_EQ(follower.WaitForLines(22).size(), 22u);
  w->Append(Chunk("line", "p", 2, true, 50));
  want.push_back("long line\n");
  w->Seal();

  auto result = follower.Result(3s);
  ASSERT_TRUE(result) << "the follower did not end when the session was sealed";
  EXPECT_EQ(result->end, ReadLogsResult::End::kDone);
  EXPECT_EQ(Texts(follower.Lines()), want);
}

TEST_F(ReadLogs, FollowWithTailZeroSendsOnlyNewLines) {
  auto journal = Open();
  auto w = journal->StartWriter("/f");
  w->Append(Whole("old", 1));

  Follower follower(journal, Tail(0));
  std::this_thread::sleep_for(150ms);
  w->Append(Whole("new", 2));
  w->Seal();
  auto result = follower.Result(3s);
  ASSERT_TRUE(result);
  EXPECT_THAT(Texts(follower.Lines()), ElementsAre("new\n"));
}

TEST_F(ReadLogs, FollowWithTailZeroStartsCleanlyWhileAFrameIsHalfWritten) {
  auto journal = Open();
  auto w = journal->StartWriter("/f");
  const std::string b = Whole("b arriving", 2);
  w->Append(Whole("a", 1) + b.substr(0, 5));  // the journal ends inside a frame

  Follower follower(journal, Tail(0));
  std::this_thread::sleep_for(150ms);
  w->Append(b.substr(5) + Whole("c", 3));
  w->Seal();
  auto result = follower.Result(3s);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->bad_frames, 0u);
  EXPECT_THAT(Texts(follower.Lines()), ElementsAre("b arriving\n", "c\n"));
}

TEST_F(ReadLogs, FollowEndsPromptlyWhenTheClientRefusesWrites) {
  auto journal = Open();
  auto w = journal->StartWriter("/f");
  w->Append(Whole("first", 1));

  std::atomic<bool> gone{false};
  Follower follower(journal, Tail(-1), [&] { return !gone.load(); });
  ASSERT_EQ(follower.WaitForLines(1).size(), 1u);
  gone = true;
  w->Append(Whole("second", 2));  // the next write fails: the client is gone

  auto result = follower.Result(2s);
  ASSERT_TRUE(result) << "the follower kept going after its client was gone";
  EXPECT_EQ(result->end, ReadLogsResult::End::kClientGone);
}

TEST_F(ReadLogs, FollowEndsWhenTheSinkReportsTheClientGoneWhileIdle) {
  auto journal = Open();
  auto w = journal->StartWriter("/f");
  w->Append(Whole("first", 1));

  std::atomic<bool> alive{true};
  std::string body;
  ReadLogsSink sink;
  sink.write = [&](std::string_view bytes) {
    body.append(bytes);
    return true;
  };
  sink.alive = [&] { return alive.load(); };
  ReadLogsConfig config;
  config.follow = true;
  ReadLogsOptions options;
  options.poll = 50ms;
  auto future =
      std::async(std::launch::async, [&] { return ServeReadLogs(journal, config, sink, options); });
  std::this_thread::sleep_for(150ms);
  ASSERT_EQ(future.wait_for(0ms), std::future_status::timeout);
  alive = false;
  ASSERT_EQ(future.wait_for(2s), std::future_status::ready);
  EXPECT_EQ(future.get().end, ReadLogsResult::End::kClientGone);
  EXPECT_THAT(Texts(Decode(body)), ElementsAre("first\n"));
}

// dockerd notices that its `docker logs -f` client left only when a frame arrives. An idle
// follower sends empty frames (no source: the daemon writes them nowhere), so that a follower
// whose client left ends instead of holding its thread and socket until the container logs.
TEST_F(ReadLogs, AnIdleFollowerSendsEmptyFramesAndEndsWhenOneCannotBeWritten) {
  auto journal = Open();
  auto w = journal->StartWriter("/f");
  w->Append(Whole("first", 1));
  std::atomic<bool> client_there{true};
  std::mutex mu;
  std::string body;
  ReadLogsSink sink;
  sink.write = [&](std::string_view bytes) {
    if (!client_there) return false;  // the daemon closed the stream
    std::lock_guard lock(mu);
    body.append(bytes);
    return true;
  };
  ReadLogsConfig config;
  config.follow = true;
  ReadLogsOptions options;
  options.poll = 10s;  // only the heartbeat wakes it
  options.heartbeat = 50ms;
  auto future =
      std::async(std::launch::async, [&] { return ServeReadLogs(journal, config, sink, options); });
  std::this_thread::sleep_for(400ms);
  ASSERT_EQ(future.wait_for(0ms), std::future_status::timeout);
  {
    std::lock_guard lock(mu);
    std::vector<Line> frames = Decode(body);
    ASSERT_GE(frames.size(), 3u);
    EXPECT_EQ(frames[0], (Line{"stdout", 1, "first\n"}));
    for (std::size_t i = 1; i < frames.size(); ++i) {
      EXPECT_EQ(frames[i], (Line{"", 0, ""})) << "frame " << i;  // written nowhere by dockerd
    }
  }
  client_there = false;
  ASSERT_EQ(future.wait_for(2s), std::future_status::ready)
      << "a follower whose client left did not end";
  const ReadLogsResult result = future.get();
  EXPECT_EQ(result.end, ReadLogsResult::End::kClientGone);
  EXPECT_GE(result.heartbeats, 2u);
}

TEST_F(ReadLogs, AFollowerWakesAtOnceWhenTheJournalIsInterrupted) {
  auto journal = Open();
  auto w = journal->StartWriter("/f");
  std::atomic<bool> stopping{false};
  ReadLogsSink sink;
  sink.write = [](std::string_view) { return true; };
  ReadLogsConfig config;
  config.follow = true;
  ReadLogsOptions options;
  options.poll = 60s;
  options.heartbeat = 60s;
  options.stopping = [&] { return stopping.load(); };
  auto future =
      std::async(std::launch::async, [&] { return ServeReadLogs(journal, config, sink, options); });
  std::this_thread::sleep_for(100ms);
  stopping = true;
  journal->Interrupt();
  ASSERT_EQ(future.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(future.get().end, ReadLogsResult::End::kStopped);
}

TEST_F(ReadLogs, FollowEndsWhenTheServerStops) {
  auto journal = Open();
  auto w = journal->StartWriter("/f");
  Follower follower(journal, Tail(-1));
  std::this_thread::sleep_for(100ms);
  follower.Stop();
  auto result = follower.Result(2s);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->end, ReadLogsResult::End::kStopped);
}

TEST_F(ReadLogs, FollowStopsAtTheFirstLineAfterUntil) {
  auto journal = Open();
  auto w = journal->StartWriter("/f");
  w->Append(Whole("in", 1 * kSecond));
  ReadLogsConfig config;
  config.until_nano = WallClockNow() + 60 * kSecond;  // not reached by the wall clock
  Follower follower(journal, config);
  ASSERT_EQ(follower.WaitForLines(1).size(), 1u);
  w->Append(Whole("late", *config.until_nano + 1));
  auto result = follower.Result(2s);
  ASSERT_TRUE(result) << "following went on past Until";
  EXPECT_THAT(Texts(follower.Lines()), ElementsAre("in\n"));
}

// --- Over HTTP, as the daemon asks

class ReadLogsApi : public ReadLogs {
 protected:
  void SetUp() override {
    ReadLogs::SetUp();
    journal_ = Open();
    writer_ = journal_->StartWriter("/f");
    writer_->Append(Whole("one", 1) + Whole("", 2, "stderr") + Whole("three", 3));
    driver_ = std::make_unique<Driver>(DriverConfig{}, metrics_);
    api_ = std::make_unique<PluginApiServer>(*driver_);
    socket_ = (dir_ / "api.sock").string();
    ASSERT_TRUE(api_->Bind(socket_));
    api_->Start();
  }
  void TearDown() override {
    api_.reset();
    driver_.reset();
    ReadLogs::TearDown();
  }

  void SetResolver() {
    api_->SetJournalResolver([this](const ContainerInfo& info) {
      if (info.container_id == "c1") return journal_;
      throw NoJournal("skald: no journal for " + info.container_id);
    });
  }

  httplib::Result Post(const std::string& method, const std::string& body) {
    httplib::Client cli(socket_);
    cli.set_address_family(AF_UNIX);
    cli.set_read_timeout(10);
    // As dockerd sends it: no Content-Type, a trailing newline.
    return cli.Post(("/LogDriver." + method).c_str(), body + "\n", "");
  }

  static std::string Request(const std::string& id, const std::string& config) {
    return R"({"Info":{"ContainerID":")" + id + R"(","ContainerName":"/web","Config":null},)" +
           R"("Config":)" + config + "}";
  }

  MetricsRegistry metrics_;
  std::shared_ptr<Journal> journal_;
  std::unique_ptr<Journal::Writer> writer_;
  std::unique_ptr<Driver> driver_;
  std::unique_ptr<PluginApiServer> api_;
  std::string socket_;
};

TEST_F(ReadLogsApi, CapabilityIsReportedOnlyWithAResolver) {
  auto res = Post("Capabilities", "");
  ASSERT_TRUE(res);
  EXPECT_EQ(nlohmann::json::parse(res->body)["Cap"]["ReadLogs"], false);
  auto logs = Post("ReadLogs", Request("c1", "{}"));
  ASSERT_TRUE(logs);
  EXPECT_NE(logs->status, 200);

  SetResolver();
  res = Post("Capabilities", "");
  ASSERT_TRUE(res);
  EXPECT_EQ(nlohmann::json::parse(res->body)["Cap"]["ReadLogs"], true);
}

TEST_F(ReadLogsApi, AnswersFramesOfWholeLines) {
  SetResolver();
  auto res = Post("ReadLogs",
                  Request("c1", R"({"Since":"0001-01-01T00:00:00Z",)"
                                R"("Until":"0001-01-01T00:00:00Z","Tail":-1,"Follow":false})"));
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_THAT(Decode(res->body), ElementsAre(Line{"stdout", 1, "one\n"}, Line{"stderr", 2, "\n"},
                                             Line{"stdout", 3, "three\n"}));

  res = Post("ReadLogs", Request("c1", R"({"Tail":1})"));
  ASSERT_TRUE(res);
  EXPECT_THAT(Texts(Decode(res->body)), ElementsAre("three\n"));
}

TEST_F(ReadLogsApi, RefusesBeforeStreamingWithTheResolversMessageOrTheBadField) {
  SetResolver();
  auto res = Post("ReadLogs", Request("other", "{}"));
  ASSERT_TRUE(res);
  EXPECT_NE(res->status, 200);
  EXPECT_EQ(nlohmann::json::parse(res->body)["Err"], "skald: no journal for other");

  res = Post("ReadLogs", Request("c1", R"({"Since":"last tuesday"})"));
  ASSERT_TRUE(res);
  EXPECT_NE(res->status, 200);
  EXPECT_THAT(nlohmann::json::parse(res->body)["Err"].get<std::string>(),
              AllOf(HasSubstr("Since"), HasSubstr("last tuesday")));
}

TEST_F(ReadLogsApi, FollowStreamsUntilTheSessionIsSealed) {
  SetResolver();
  std::thread writer([this] {
    std::this_thread::sleep_for(300ms);
    writer_->Append(Whole("four", 4));
    writer_->Seal();
  });
  auto started = std::chrono::steady_clock::now();
  auto res = Post("ReadLogs", Request("c1", R"({"Tail":-1,"Follow":true})"));
  writer.join();
  ASSERT_TRUE(res);
  EXPECT_GE(std::chrono::steady_clock::now() - started, 250ms);
  EXPECT_THAT(Texts(Decode(res->body)), ElementsAre("one\n", "\n", "three\n", "four\n"));
}

TEST_F(ReadLogsApi, StopEndsOpenFollowStreamsPromptly) {
  SetResolver();
  std::thread client([this] { Post("ReadLogs", Request("c1", R"({"Follow":true})")); });
  std::this_thread::sleep_for(300ms);
  auto started = std::chrono::steady_clock::now();
  api_->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 3s);
  client.join();
}

// --- Config parsing

TEST(ReadLogsConfig, ZeroTimesAndMissingFieldsMeanUnset) {
  auto c = ParseReadLogsConfig(nlohmann::json::parse(
      R"({"Since":"0001-01-01T00:00:00Z","Until":"0001-01-01T00:00:00Z","Tail":-1,"Follow":false})"));
  EXPECT_FALSE(c.since_nano);
  EXPECT_FALSE(c.until_nano);
  EXPECT_EQ(c.tail, -1);
  EXPECT_FALSE(c.follow);

  c = ParseReadLogsConfig(nlohmann::json::object());
  EXPECT_FALSE(c.since_nano);
  EXPECT_EQ(c.tail, -1);
  c = ParseReadLogsConfig(nlohmann::json());
  EXPECT_EQ(c.tail, -1);
}

TEST(ReadLogsConfig, ReadsTimesTailAndFollow) {
  auto c = ParseReadLogsConfig(nlohmann::json::parse(
      R"({"Since":"2026-11-30T09:48:27.511720058Z","Until":"2026-11-30T10:48:28+01:00",
          "Tail":10,"Follow":true})"));
  ASSERT_TRUE(c.since_nano);
  ASSERT_TRUE(c.until_nano);
  EXPECT_EQ(*c.since_nano, 1796032107LL * kSecond + 511720058);
  EXPECT_EQ(*c.until_nano, 1796032108LL * kSecond);
  EXPECT_EQ(c.tail, 10);
  EXPECT_TRUE(c.follow);
  EXPECT_EQ(ParseReadLogsConfig(nlohmann::json::parse(R"({"Tail":"25"})")).tail, 25);
  EXPECT_EQ(ParseReadLogsConfig(nlohmann::json::parse(R"({"Tail":0})")).tail, 0);
}

TEST(ReadLogsConfig, ABadValueIsRefusedNamingTheFieldAndTheValue) {
  auto message = [](const char* json) -> std::string {
    try {
      ParseReadLogsConfig(nlohmann::json::parse(json));
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_THAT(message(R"({"Since":"yesterday"})"),
              AllOf(HasSubstr("Since"), HasSubstr("\"yesterday\""), HasSubstr("RFC 3339")));
  EXPECT_THAT(message(R"({"Until":"2026-02-30T00:00:00Z"})"),
              AllOf(HasSubstr("Until"), HasSubstr("2026-02-30T00:00:00Z")));
  EXPECT_THAT(message(R"({"Since":12})"), AllOf(HasSubstr("Since"), HasSubstr("12")));
  EXPECT_THAT(message(R"({"Tail":"ten"})"), AllOf(HasSubstr("Tail"), HasSubstr("\"ten\"")));
  EXPECT_THAT(message(R"({"Follow":"yes"})"), AllOf(HasSubstr("Follow"), HasSubstr("\"yes\"")));
}

TEST(Rfc3339, ParsesFractionsAndOffsets) {
  EXPECT_EQ(ParseRfc3339Nano("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(ParseRfc3339Nano("1970-01-01T00:00:01.5Z"), kSecond + 500'000'000);
  EXPECT_EQ(ParseRfc3339Nano("1970-01-01T00:00:01.000000001Z"), kSecond + 1);
  EXPECT_EQ(ParseRfc3339Nano("1970-01-01T00:00:01.1234567891Z"), kSecond + 123'456'789);
  EXPECT_EQ(ParseRfc3339Nano("1970-01-01T01:00:00+01:00"), 0);
  EXPECT_EQ(ParseRfc3339Nano("1969-12-31T19:30:00-04:30"), 0);
  EXPECT_EQ(ParseRfc3339Nano("2000-02-29T12:00:00Z"), 951825600LL * kSecond);
  EXPECT_EQ(ParseRfc3339Nano("2024-12-31t23:59:59.25z"), 1735689599LL * kSecond + 250'000'000);
  bool zero = false;
  ParseRfc3339Nano("0001-01-01T00:00:00Z", &zero);
  EXPECT_TRUE(zero);
  ParseRfc3339Nano("0001-01-01T00:00:00.000000001Z", &zero);
  EXPECT_FALSE(zero);
  // Outside what int64 nanoseconds hold: saturated, still ordered.
  EXPECT_EQ(ParseRfc3339Nano("9999-12-31T23:59:59Z"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ParseRfc3339Nano("0001-01-01T00:00:00Z"), std::numeric_limits<int64_t>::min());
}

TEST(Rfc3339, RefusesWhatIsNotOne) {
  for (const char* bad :
       {"", "yesterday", "2026-11-30", "2026-11-30T09:48:27", "2026-13-01T00:00:00Z",
        "2026-02-29T00:00:00Z", "2026-11-30T24:00:00Z", "2026-11-30T09:60:00Z",
        "2026-11-30T09:48:27.Z", "2026-11-30T09:48:27Zjunk", "2026-11-30T09:48:27+1:00",
        "1700000000.000000000"}) {
    EXPECT_FALSE(ParseRfc3339Nano(bad)) << bad;
  }
}

}  // namespace
}  // namespace skald
