// The Driver in process: a temporary state directory, FIFOs made as the daemon makes them, the
// in-process fake Loki. For what StartLogging, Recover and the maintenance tick decide; the
// integration tests drive the real binary.
#include "plugin/driver/driver.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "plugin/driver/shipping_client.h"
#include "plugin/ingest/frame_codec.h"
#include "plugin/journal/journal_format.h"
#include "plugin/journal/replay_guard.h"
#include "tests/plugin/driver_fixture.h"
#include "tests/plugin/log_capture.h"
#include "tests/plugin/plugin_test_support.h"
#include "tests/tools/fake_loki.h"
#include "tests/tools/test_slowdown.h"

namespace skald {
namespace {

using testkit::WaitFor;

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testkit::FakeLoki;

// `age`: how long before now the daemon read the line.
std::string Frame(const std::string& line, std::chrono::nanoseconds age = {}) {
  return testkit::StdoutFrame(line, std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::system_clock::now().time_since_epoch() - age)
                                        .count());
}

class DriverTest : public testkit::DriverFixture {
 protected:
  DriverTest() : DriverFixture("skald-driver-test") {}

  void Write(int fd, const std::string& line, std::chrono::nanoseconds age = {}) {
    const std::string frame = Frame(line, age);
    ASSERT_EQ(write(fd, frame.data(), frame.size()), static_cast<ssize_t>(frame.size()));
  }
  // Container `id` logs one line through the FIFO `fifo_name` and stops; returns once Loki has
  // the line and the stream ended. (Call it in ASSERT_NO_FATAL_FAILURE.)
  // `entries`: what Loki holds once the line is there (each call logs one more).
  void LogOneLineAndStop(const std::string& id, const std::string& fifo_name,
                         const std::map<std::string, std::string>& options = {},
                         std::size_t entries = 1) {
    int w;
    const std::string f = MakeFifo(fifo_name, &w);
    driver_->StartLogging(f, Info(id, options));
    Write(w, "one line");
    ASSERT_TRUE(loki_.WaitForEntries(entries, 10s));
    driver_->StopLogging(f);
    CloseFd(w);
    ASSERT_TRUE(WaitFor([&] { return driver_->LiveStreams() == 0; }, 10s));
  }
};

const std::string kId1 = std::string(64, 'a');
const std::string kId2 = std::string(64, 'b');

// `docker plugin disable` right after a crash restart: the stop does not wait out the delay
// before the replay (nor a long recovery pass); the journals are recovered at the next start.
// A journal the recovery did not reach is not charged with the last run's death, which a
// thread working on another journal was named for.
TEST_F(DriverTest, AStopDuringTheDelayAfterACrashDoesNotWaitItOut) {
  const std::string blamed = std::string(64, 'c');
  fs::create_directories(JournalDir(kId1));
  std::ofstream(JournalDir(kId1) / std::string(ReplayGuard::kMarkerName)) << "0\n";
  {
    // The in-flight file of a run that did not stop cleanly (its run-state byte 'R'), its
    // reader working on another container's journal.
    std::string inflight(257, '\0');
    inflight.replace(0, blamed.size(), blamed);
    inflight[256] = 'R';
    std::ofstream(config_.state_dir / "replay-inflight", std::ios::binary) << inflight;
  }
  testkit::LogCapture log;
  StartDriver();
  driver_->RecoverInBackground();
  std::this_thread::sleep_for(100ms);  // within Driver::kCrashedReplayDelay (3 s)
  const auto t0 = std::chrono::steady_clock::now();
  driver_->Shutdown(0ms);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1500ms)
      << "the stop waited out the delay before a replay";
  // The recovery was in its delay (the last run was seen to have died) and ended early.
  EXPECT_NE(log.Text().find("did not stop cleanly"), std::string::npos) << log.Text();
  EXPECT_NE(log.Text().find("recovery: stopped after 0 of 1 journal(s)"), std::string::npos)
      << log.Text();
  EXPECT_FALSE(fs::exists(JournalDir(kId1) / std::string(ReplayGuard::kMarkerName)))
      << "a journal recovery did not reach kept a death the reader's journal was to blame for";
}

// A container id names a directory: only letters, digits and '_'. Bytes from 0x80 up are none
// of these whether `char` is signed (x86-64) or unsigned (arm64).
TEST_F(DriverTest, AContainerIdWithBytesOutsideAsciiIsRefused) {
  StartDriver();
  int fd = -1;
  const std::string fifo = MakeFifo("f-id", &fd);
  for (const std::string& id : {std::string(63, 'a') + "\xE9", std::string(62, 'a') + "\xC3\xA9",
                                std::string(63, 'a') + "\xFF", std::string(63, 'a') + "/"}) {
    EXPECT_THROW(driver_->StartLogging(fifo, Info(id)), StartRefused) << id;
  }
  EXPECT_NO_THROW(driver_->StartLogging(fifo, Info(kId1)));
}

// StartLogging registered the stream before writing the journal: when that failed, the stream
// stayed registered, and every later start of the container joined it and failed.
TEST_F(DriverTest, AStartWhoseJournalCannotBeWrittenLeavesNothingBehind) {
  StartDriver();
  // info.json cannot be replaced: a directory (not empty, so the journal's clean-up of temp
  // files leaves it) stands where its temp file goes.
  fs::create_directories(JournalDir(kId1) / "info.json.tmp" / "x");
  int w1;
  const std::string f1 = MakeFifo("f1", &w1);
  ASSERT_NO_THROW(driver_->StartLogging(f1, Info(kId1)));  // goes on in memory
  Write(w1, "in memory");
  ASSERT_TRUE(loki_.WaitForEntries(1, 10s));
  driver_->StopLogging(f1);
  CloseFd(w1);
  ASSERT_TRUE(WaitFor([&] { return driver_->LiveStreams() == 0; }, 10s));

  fs::remove_all(JournalDir(kId1) / "info.json.tmp");
  int w2;
  const std::string f2 = MakeFifo("f2", &w2);
  ASSERT_NO_THROW(driver_->StartLogging(f2, Info(kId1)));
  Write(w2, "journaled");
  ASSERT_TRUE(loki_.WaitForEntries(2, 10s));
  EXPECT_TRUE(fs::exists(JournalDir(kId1) / "info.json"));
  EXPECT_TRUE(fs::exists(JournalDir(kId1) / "0000000001.seg") ||
              fs::exists(JournalDir(kId1) / "0000000002.seg"));
  driver_->StopLogging(f2);
  CloseFd(w2);
}

// A container started while its journal cannot be made (a full disk) logs from memory. While
// Loki takes lines, its FIFO waits for them (Driver::HoldsMemoryStream) rather than filling
// the client's buffer past its bound: nothing is dropped, though Loki is slower than the
// container. (Unpaced, the 8 MB written here overflow the 2 MiB buffer: buffer_full.)
TEST_F(DriverTest, AContainerStartedOnAFullDiskWaitsForLokiInsteadOfDroppingLines) {
  config_.client_factory = [&](const LokiClientConfig& c) {
    LokiClientConfig small = c;
    small.max_buffered_bytes = 2 * 1024 * 1024;
    return MakeShippingClient(small, metrics_);
  };
  StartDriver();
  loki_.SetDelay(100ms);                                             // takes every push, slowly
  fs::create_directories(JournalDir(kId1) / "info.json.tmp" / "x");  // info.json cannot be made
  int keeper;
  const std::string f = MakeFifo("f1", &keeper);
  ASSERT_NO_THROW(driver_->StartLogging(f, Info(kId1)));  // goes on in memory
  constexpr int kLines = 8000;
  std::atomic<int> written{0};
  std::thread container([&] {
    const int w = open(f.c_str(), O_WRONLY | O_CLOEXEC);  // blocking writes, as a container's
    for (int i = 0; i < kLines; ++i) {
      const std::string frame = Frame("line " + std::to_string(i) + " " + std::string(1000, 'x'),
                                      std::chrono::nanoseconds(0));
      if (write(w, frame.data(), frame.size()) != static_cast<ssize_t>(frame.size())) break;
      ++written;
    }
    close(w);
  });
  container.join();
  EXPECT_EQ(written.load(), kLines);
  EXPECT_TRUE(loki_.WaitForEntries(kLines, testkit::Slowed(60s)))
      << loki_.TotalEntries() << " of " << kLines;
  EXPECT_EQ(loki_.TotalEntries(), static_cast<uint64_t>(kLines));
  EXPECT_EQ(metrics_.CounterTotal("skald_entries_dropped_total"), 0u)
      << "buffer_full: "
      << metrics_.GetCounter("skald_entries_dropped_total", "", {{"reason", "buffer_full"}}).Value()
      << ", queue_full: "
      << metrics_.GetCounter("skald_entries_dropped_total", "", {{"reason", "queue_full"}}).Value();
  loki_.SetDelay(0ms);
  driver_->StopLogging(f);
  CloseFd(keeper);
}

// A quiet stream's line leaves as soon as the input pauses, not when loki-batch-wait ends: here
// the wait is a minute and each line is in Loki within seconds (normally milliseconds), for a
// journaled stream and a no-file one (which hands its lines over another way) alike.
TEST_F(DriverTest, ALoneLineLeavesWhenTheInputGoesQuietNotAtBatchWait) {
  StartDriver();
  int w1, w2;
  const std::string f1 = MakeFifo("f1", &w1);
  const std::string f2 = MakeFifo("f2", &w2);
  driver_->StartLogging(f1, Info(kId1, {{"loki-batch-wait", "60s"}}));
  driver_->StartLogging(f2, Info(kId2, {{"loki-batch-wait", "60s"}, {"no-file", "true"}}));
  uint64_t expected = 0;
  for (int round = 0; round < 3; ++round) {
    Write(w1, "journaled " + std::to_string(round));
    EXPECT_TRUE(loki_.WaitForEntries(++expected, 5s)) << "round " << round;
    Write(w2, "no-file " + std::to_string(round));
    EXPECT_TRUE(loki_.WaitForEntries(++expected, 5s)) << "round " << round;
  }
  EXPECT_EQ(loki_.TotalEntries(), expected);
  EXPECT_GE(metrics_.CounterTotal("skald_quiet_sends_total"), 6u);
  driver_->StopLogging(f1);
  driver_->StopLogging(f2);
}

// With loki-on-full=block the user chose to lose nothing: a journal that cannot be written
// refuses the start, with the reason.
TEST_F(DriverTest, AJournalThatCannotBeWrittenRefusesABlockingContainer) {
  StartDriver();
  fs::create_directories(JournalDir(kId1) / "info.json.tmp" / "x");
  int w;
  const std::string f = MakeFifo("f1", &w);
  try {
    driver_->StartLogging(f, Info(kId1, {{"loki-on-full", "block"}}));
    FAIL() << "StartLogging succeeded";
  } catch (const OptionError& e) {
    EXPECT_NE(std::string(e.what()).find("loki-on-full=block"), std::string::npos) << e.what();
  }
  EXPECT_EQ(driver_->LiveStreams(), 0u);
}

// A plugin restarted while a container runs finds the container's FIFO in the journal's
// marker. Without usable options (info.json gone) it used to leave the FIFO unread, and the
// container blocked. It is drained into the journal; its lines are held there and counted.
TEST_F(DriverTest, RecoveryDrainsAFifoWhoseContainerHasNoUsableOptions) {
  int w;
  const std::string f = MakeFifo("f1", &w);
  StartDriver();
  driver_->StartLogging(f, Info(kId1));
  Write(w, "before the restart");
  ASSERT_TRUE(loki_.WaitForEntries(1, 10s));
  // Loki has the line; the plugin records that once Loki's answer is read. A restart before
  // then sends the line again (at least once), which this test does not look at: wait for the
  // cursor past it (a slow machine, or emulation, shows the window).
  ASSERT_TRUE(WaitFor(
      [&] {
        std::ifstream in(JournalDir(kId1) / std::string(kJournalCursorFile));
        unsigned long long segment = 0, offset = 0;
        return static_cast<bool>(in >> segment >> offset) && offset > 0;
      },
      10s));
  driver_.reset();  // the FIFO stays open on the daemon's side, as after a kill
  fs::remove(JournalDir(kId1) / "info.json");

  StartDriver();
  driver_->Recover();
  // Far more than the FIFO holds (1 MiB): written only if the plugin drains it.
  const std::string line(1000, 'h');
  int written = 0;
  for (auto until = std::chrono::steady_clock::now() + 20s;
       written < 3000 && std::chrono::steady_clock::now() < until;) {
    const std::string frame = Frame(line);
    if (write(w, frame.data(), frame.size()) == static_cast<ssize_t>(frame.size())) {
      ++written;
    } else {
      std::this_thread::sleep_for(5ms);
    }
  }
  EXPECT_EQ(written, 3000) << "the FIFO is not drained";
  EXPECT_TRUE(
      WaitFor([&] { return metrics_.CounterTotal("skald_entries_held_total") == 3000; }, 10s))
      << metrics_.CounterTotal("skald_entries_held_total");
  EXPECT_EQ(loki_.TotalEntries(), 1u);  // held, not sent
  uint64_t journaled = 0;
  for (auto& e : fs::directory_iterator(JournalDir(kId1))) {
    if (e.path().extension() == ".seg") journaled += fs::file_size(e.path());
  }
  EXPECT_GT(journaled, 3000u * 1000u);
}

// Loki clients (four lane threads each) used to live for ever, one per option set ever seen.
TEST_F(DriverTest, AClientNoStreamUsesIsFreed) {
  config_.client_idle_timeout = 0ms;
  config_.maintenance_interval = 10ms;
  StartDriver();
  for (int i = 0; i < 3; ++i) {
    int w;
    const std::string f = MakeFifo("f" + std::to_string(i), &w);
    // Distinct options: a client each.
    driver_->StartLogging(f, Info(std::string(63, 'c') + std::to_string(i),
                                  {{"loki-batch-size", std::to_string(1000 + i)}}));
    Write(w, "line " + std::to_string(i));
    driver_->StopLogging(f);
    CloseFd(w);
  }
  ASSERT_TRUE(loki_.WaitForEntries(3, 10s));
  EXPECT_TRUE(WaitFor([&] { return driver_->LiveClients() == 0; }, 10s))
      << driver_->LiveClients() << " clients left";
  // A new stream with the same options gets a working client again.
  int w;
  const std::string f = MakeFifo("again", &w);
  driver_->StartLogging(f, Info(std::string(63, 'c') + "0", {{"loki-batch-size", "1000"}}));
  Write(w, "again");
  EXPECT_TRUE(loki_.WaitForEntries(4, 10s));
}

}  // namespace
}  // namespace skald

namespace skald {
namespace {

// info.json keeps what a replay needs and no secret: of the environment and labels only what
// options select, credentials as references into the one 0600 secrets file. A restarted
// plugin replays with the credentials all the same.
TEST_F(DriverTest, InfoJsonHoldsNoSecretAndTheReplayStillAuthenticates) {
  loki_.FailAll(503);  // Loki away: the line waits in the journal
  StartDriver();
  int w;
  const std::string f = MakeFifo("f1", &w);
  ContainerInfo info = Info(kId1, {{"env", "APP_MODE"}});
  info.config["loki-url"] = loki_.PushUrl("ceo:S3cr3t/Pa55==");
  info.container_env = {"APP_MODE=blue", "DB_PASSWORD=hunter2"};
  info.container_labels = {{"com.docker.compose.service", "web"}, {"vault.token", "s.abc123"}};
  driver_->StartLogging(f, info);
  Write(w, "before the restart");
  driver_->StopLogging(f);
  CloseFd(w);
  std::this_thread::sleep_for(300ms);
  driver_.reset();

  std::ifstream in(JournalDir(kId1) / "info.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("APP_MODE=blue"), std::string::npos);
  EXPECT_NE(text.find("com.docker.compose.service"), std::string::npos);
  for (const char* secret : {"S3cr3t", "hunter2", "DB_PASSWORD", "s.abc123", "ceo:"}) {
    EXPECT_EQ(text.find(secret), std::string::npos) << secret << " in info.json: " << text;
  }
  const fs::path secrets = config_.state_dir / "secrets";
  ASSERT_TRUE(fs::exists(secrets));
  EXPECT_EQ(fs::status(secrets).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);

  loki_.ClearFailures();
  StartDriver();
  driver_->Recover();
  ASSERT_TRUE(loki_.WaitForEntries(1, 10s));
  auto auth = loki_.Authorizations();
  EXPECT_EQ(auth.back(), "ceo:S3cr3t/Pa55==");
}

// While Loki refuses, the oldest undelivered line's age counts from when the daemon read it (an
// hour ago here: a journal replayed after a restart), the journal's unacknowledged bytes are
// counted, and /healthz names the client without its credentials and with its last status.
// Once Loki takes the line, both are 0.
TEST_F(DriverTest, TheOldestUndeliveredLineIsAgedFromItsReadTime) {
  loki_.FailAll(503);
  StartDriver();
  int w;
  const std::string f = MakeFifo("f", &w);
  ContainerInfo info = Info(kId1, {{"loki-url", loki_.PushUrl("user:s3cret")},
                                   {"loki-min-backoff", "10ms"},
                                   {"loki-max-backoff", "20ms"}});
  driver_->StartLogging(f, info);
  Write(w, "an hour old", 3600s);
  ASSERT_TRUE(WaitFor(
      [&] {
        const auto clients = driver_->ClientsHealth();
        return clients.size() == 1 && clients[0].last_push_status == "503";
      },
      10s));
  std::vector<LokiClientHealth> clients = driver_->ClientsHealth();
  ASSERT_EQ(clients.size(), 1u);
  EXPECT_EQ(clients[0].url, loki_.PushUrl());
  EXPECT_EQ(clients[0].pending_entries, 1u);
  EXPECT_GE(clients[0].oldest_undelivered_seconds, 3600);
  EXPECT_LT(clients[0].oldest_undelivered_seconds, 3600 + 600);
  EXPECT_LE(clients[0].last_push_at, std::chrono::system_clock::now());
  driver_->UpdateGauges();
  const Gauge& oldest = metrics_.GetGauge("skald_oldest_undelivered_seconds", "");
  const Gauge& undelivered = metrics_.GetGauge("skald_journal_undelivered_bytes", "");
  EXPECT_GE(oldest.Value(), 3600);
  EXPECT_GE(undelivered.Value(), static_cast<double>(Frame("an hour old").size()));

  loki_.ClearFailures();
  ASSERT_TRUE(loki_.WaitForEntries(1, 10s));
  EXPECT_TRUE(WaitFor(
      [&] {
        driver_->UpdateGauges();
        return oldest.Value() == 0 && undelivered.Value() == 0;
      },
      10s))
      << oldest.Value() << " s, " << undelivered.Value() << " bytes";
  clients = driver_->ClientsHealth();
  ASSERT_EQ(clients.size(), 1u);
  EXPECT_EQ(clients[0].last_push_status, "204");
  EXPECT_EQ(clients[0].oldest_undelivered_seconds, 0);
}

// Without a journal the client's own buffer is what waits: its oldest entry ages from when it
// was handed over.
TEST_F(DriverTest, ANoFileStreamsUndeliveredLinesAgeInTheClient) {
  loki_.FailAll(503);
  StartDriver();
  int w;
  const std::string f = MakeFifo("f", &w);
  driver_->StartLogging(f, Info(kId1, {{"no-file", "true"},
                                       {"loki-retries", "1000"},
                                       {"loki-min-backoff", "10ms"},
                                       {"loki-max-backoff", "20ms"}}));
  Write(w, "waits");
  EXPECT_TRUE(WaitFor(
      [&] {
        const auto clients = driver_->ClientsHealth();
        return clients.size() == 1 && clients[0].oldest_undelivered_seconds >= 0.05;
      },
      10s));
  loki_.ClearFailures();
  ASSERT_TRUE(loki_.WaitForEntries(1, 30s));
  EXPECT_TRUE(WaitFor(
      [&] {
        const auto clients = driver_->ClientsHealth();
        return clients.size() == 1 && clients[0].oldest_undelivered_seconds == 0;
      },
      10s));
}

// Driver::Maintain / ScheduleAgeCheck (the schedule: plugin/journal/journal_retention.h): nothing
// checks the age limit on a timer any more; a stopped container's journal is looked at when it
// reaches the limit, and so is one found at start.
TEST_F(DriverTest, AStoppedContainersJournalGoesWhenItReachesTheAgeLimit) {
  config_.journal_max_age = 2s;
  StartDriver();
  ASSERT_NO_FATAL_FAILURE(LogOneLineAndStop(kId1, "f1"));
  ASSERT_TRUE(fs::exists(JournalDir(kId1)));
  EXPECT_TRUE(WaitFor([&] { return !fs::exists(JournalDir(kId1)); }, 20s))
      << "the journal outlived the age limit";
}

// keep-file is read as every option is: the container's --log-opt over the plugin-wide default
// (`docker plugin set skald KEEP_FILE=true`). The container that says keep-file=false is the
// control: its journal going shows that the age limit was applied.
TEST_F(DriverTest, APluginWideKeepFileKeepsStoppedContainersJournalsPastTheAgeLimit) {
  config_.journal_max_age = 1s;
  config_.env_defaults = {{"keep-file", "true"}};
  StartDriver();
  ASSERT_NO_FATAL_FAILURE(LogOneLineAndStop(kId1, "f1"));
  ASSERT_NO_FATAL_FAILURE(LogOneLineAndStop(kId2, "f2", {{"keep-file", "false"}}, 2));
  EXPECT_TRUE(WaitFor([&] { return !fs::exists(JournalDir(kId2)); }, 20s))
      << "keep-file=false: the journal outlived the age limit";
  EXPECT_TRUE(fs::exists(JournalDir(kId1))) << "KEEP_FILE=true plugin-wide was not honoured";
}

// info.json keeps a URL with credentials as a reference to the secret store: the age limit reads
// the options with their secrets put back, as a replay does. (Read as they stand, the reference
// is no URL, the options "no longer parse" and every such journal was kept for ever.)
TEST_F(DriverTest, TheAgeLimitReadsKeepFileOfOptionsWhoseUrlHoldsCredentials) {
  config_.journal_max_age = 1s;
  StartDriver();
  ASSERT_NO_FATAL_FAILURE(LogOneLineAndStop(
      kId1, "f1", {{"keep-file", "true"}, {"loki-url", loki_.PushUrl("team:s3cret")}}));
  ASSERT_NO_FATAL_FAILURE(
      LogOneLineAndStop(kId2, "f2", {{"loki-url", loki_.PushUrl("team:s3cret")}}, 2));
  EXPECT_TRUE(WaitFor([&] { return !fs::exists(JournalDir(kId2)); }, 20s))
      << "keep-file unset, credentials in the URL: the journal outlived the age limit";
  EXPECT_TRUE(fs::exists(JournalDir(kId1))) << "keep-file=true was not honoured";
}

TEST_F(DriverTest, AJournalFoundAtStartGoesWhenItReachesTheAgeLimit) {
  StartDriver();
  ASSERT_NO_FATAL_FAILURE(LogOneLineAndStop(kId1, "f1"));
  driver_.reset();
  config_.journal_max_age = 2s;
  StartDriver();
  driver_->Recover();
  ASSERT_TRUE(fs::exists(JournalDir(kId1)));
  EXPECT_TRUE(WaitFor([&] { return !fs::exists(JournalDir(kId1)); }, 20s))
      << "the journal outlived the age limit";
}

// The budget is checked while streams are live and once more after the last one left (no
// timer runs while nothing changes): stopped containers' journals beyond it go, oldest first.
TEST_F(DriverTest, StoppedContainersJournalsBeyondTheBudgetGo) {
  config_.journal_max_total_bytes = 3000;
  StartDriver();
  const std::string ids[] = {kId1, kId2, std::string(64, 'c')};
  for (const std::string& id : ids) {
    int w;
    const std::string f = MakeFifo("f" + id.substr(0, 1), &w);
    driver_->StartLogging(f, Info(id));
    Write(w, std::string(1200, 'x'));
    driver_->StopLogging(f);
    CloseFd(w);
    ASSERT_TRUE(WaitFor([&] { return driver_->LiveStreams() == 0; }, 10s));
    std::this_thread::sleep_for(20ms);  // distinct write times
  }
  ASSERT_TRUE(loki_.WaitForEntries(3, 10s));
  EXPECT_TRUE(WaitFor([&] { return !fs::exists(JournalDir(kId1)); }, 20s))
      << "3 x 1.2 kB kept with a budget of 3 kB";
  EXPECT_TRUE(fs::exists(JournalDir(ids[2]))) << "the newest journal went";
}

// The budget is looked at once bytes are journaled (the reader asks for the tick): a live
// container's journal beyond it loses its oldest segments while Loki is away.
TEST_F(DriverTest, ALiveJournalBeyondTheBudgetLosesItsOldestSegments) {
  config_.journal_max_total_bytes = 64 * 1024;
  loki_.FailAll(503);
  StartDriver();
  int w;
  const std::string f = MakeFifo("f1", &w);
  driver_->StartLogging(f, Info(kId1, {{"max-size", "16k"}, {"max-file", "100"}}));
  auto journal_bytes = [&] {
    uint64_t bytes = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(JournalDir(kId1), ec)) {
      if (e.path().extension() == ".seg") bytes += fs::file_size(e.path(), ec);
    }
    return bytes;
  };
  const std::string line(1000, 'x');
  for (int i = 0; i < 200; ++i) {
    const std::string frame = Frame(line);
    std::size_t off = 0;
    while (off < frame.size()) {  // the FIFO is non-blocking: wait for room
      const ssize_t n = write(w, frame.data() + off, frame.size() - off);
      if (n > 0) off += static_cast<std::size_t>(n);
      if (n < 0) std::this_thread::sleep_for(1ms);
    }
  }
  EXPECT_TRUE(WaitFor([&] { return journal_bytes() <= 64 * 1024 + 16 * 1024; }, 20s))
      << journal_bytes() << " bytes journaled with a budget of 64 KiB";
}

}  // namespace
}  // namespace skald

namespace skald {
namespace {

// Context switches of this process's thread named `name` (voluntary and not), or -1.
long ThreadSwitches(const std::string& name) {
  for (const auto& task : fs::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string n;
    std::getline(comm, n);
    if (n != name) continue;
    std::ifstream status(task.path() / "status");
    long total = 0;
    for (std::string line; std::getline(status, line);) {
      if (line.find("ctxt_switches:") != std::string::npos) {
        total += std::stol(line.substr(line.find(':') + 1));
      }
    }
    return total;
  }
  return -1;
}

// A stream held by loki-on-full=block (its journal full of lines Loki has not taken) whose
// container has gone (the FIFO hung up) leaves the reader's epoll set: the hang-up, which epoll
// reports whatever the interest, no longer wakes the reader about a thousand times a second.
TEST_F(DriverTest, ABlockedStreamWhoseContainerIsGoneDoesNotSpinTheReader) {
  loki_.FailAll(503);
  StartDriver();
  int w;
  const std::string f = MakeFifo("f1", &w);
  driver_->StartLogging(
      f, Info(kId1, {{"loki-on-full", "block"}, {"max-size", "16k"}, {"max-file", "2"}}));
  // Fill the journal and then the FIFO: the last writes find no room.
  const std::string frame = Frame(std::string(200, 'x'));
  int refused = 0;
  for (int i = 0; i < 100'000 && refused < 200; ++i) {
    if (write(w, frame.data(), frame.size()) < 0) {
      ++refused;
      std::this_thread::sleep_for(1ms);
    }
  }
  ASSERT_GE(refused, 200) << "the FIFO never filled: the stream is not blocked";
  CloseFd(w);  // the container is gone
  std::this_thread::sleep_for(200ms);
  const long before = ThreadSwitches("skald-reader");
  ASSERT_GE(before, 0);
  std::this_thread::sleep_for(1s);
  const long switches = ThreadSwitches("skald-reader") - before;
  std::printf("reader context switches in 1 s with a blocked, hung-up stream: %ld\n", switches);
  EXPECT_LT(switches, 200);  // a retry every 20 ms is 50; the hang-up spun at ~1000
}

}  // namespace
}  // namespace skald
