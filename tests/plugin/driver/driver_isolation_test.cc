// The Driver in process, under what one container or its options can do to the others: a slow
// resolver for its Loki, a flood, labels it chooses, stages that hold lines, a restart, a
// journal removed by hand. Each test failed on the code before its fix (found by review).
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <malloc.h>
#include <netdb.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include "plugin/driver/driver.h"
#include "plugin/driver/shipping_client.h"
#include "plugin/ingest/frame_codec.h"
#include "plugin/journal/journal.h"
#include "tests/plugin/driver/quiet_shipping_client.h"
#include "tests/plugin/driver_fixture.h"
#include "tests/plugin/plugin_test_support.h"
#include "tests/tools/fake_loki.h"
#include "tests/tools/test_slowdown.h"

// A resolver that takes its time for one test name (as a resolver does whose nameserver does
// not answer: glibc waits `timeout` x `attempts` per name), and the real one for every other.
constexpr const char* kSlowDnsName = "slow-dns.skald-review.test";
extern "C" int getaddrinfo(const char* __restrict name, const char* __restrict service,
                           const struct addrinfo* __restrict req,
                           struct addrinfo** __restrict pai) {
  using Fn = int (*)(const char*, const char*, const struct addrinfo*, struct addrinfo**);
  static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "getaddrinfo"));
  if (name != nullptr && std::string_view(name) == kSlowDnsName) {
    std::this_thread::sleep_for(std::chrono::seconds(2));
    return EAI_AGAIN;
  }
  return real(name, service, req, pai);
}

namespace skald {
namespace {

using testkit::WaitFor;

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testkit::FakeLoki;
using testkit::Slowed;
using testkit::TestSlowdown;

int64_t NowNano() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Frame(const std::string& line, int64_t time_nano = NowNano()) {
  return testkit::StdoutFrame(line, time_nano);
}

// ---------------------------------------------------------------------------------------------
// Driver

class DriverIsolationTest : public testkit::DriverFixture {
 protected:
  DriverIsolationTest() : DriverFixture("skald-review-test") {}

  void TearDown() override {
    flood_ = false;
    for (std::thread& t : threads_) t.join();
    DriverFixture::TearDown();
  }
  // Writes a frame, waiting while the FIFO is full; false after `timeout`.
  bool Write(int fd, const std::string& line, std::chrono::milliseconds timeout = 10s) {
    const std::string frame = Frame(line);
    const auto until = std::chrono::steady_clock::now() + timeout;
    std::string_view rest = frame;
    while (!rest.empty()) {
      const ssize_t n = write(fd, rest.data(), rest.size());
      if (n > 0) {
        rest.remove_prefix(static_cast<std::size_t>(n));
      } else if (std::chrono::steady_clock::now() > until) {
        return false;
      } else {
        std::this_thread::sleep_for(1ms);
      }
    }
    return true;
  }
  std::vector<std::thread> threads_;
  // A test's writer thread runs while this is set (a member: an ASSERT that returns from the
  // test body leaves the thread running until TearDown).
  std::atomic<bool> flood_{true};
};

const std::string kIdA = std::string(64, 'a');
const std::string kIdB = std::string(64, 'b');

// WriteFileAtomically (0644), Journal::Open (directories with the default mode):
// info.json holds the StartLogging Info - the container's whole environment (ContainerEnv:
// database passwords, API keys) and its log-opts (loki-url with user:password@, the tenant) -
// and any local user of the host can read it (and every container's log lines in the .seg
// files, 0644 too), where dockerd keeps the same data in 0600/0710 files.
TEST_F(DriverIsolationTest, TheJournalWithTheContainersEnvironmentIsNotReadableByOtherUsers) {
  StartDriver();
  int w;
  const std::string f = MakeFifo("f1", &w);
  ContainerInfo info = Info(kIdA, {{"loki-url", loki_.PushUrl("user:s3cret-password")}});
  info.container_env = {"PATH=/bin", "DB_PASSWORD=hunter2"};
  driver_->StartLogging(f, info);
  ASSERT_TRUE(Write(w, "a line"));
  ASSERT_TRUE(loki_.WaitForEntries(1, 10s));
  const fs::path info_json = JournalDir(kIdA) / "info.json";
  ASSERT_TRUE(fs::exists(info_json));
  // Not readable by others: neither the file nor a way to it (what it holds: DriverTest.
  // InfoJsonHoldsNoSecretAndTheReplayStillAuthenticates).
  struct stat st {};
  ASSERT_EQ(stat(info_json.c_str(), &st), 0);
  const bool file_private = (st.st_mode & 0077) == 0;
  ASSERT_EQ(stat(JournalDir(kIdA).c_str(), &st), 0);
  const bool dir_private = (st.st_mode & 0007) == 0;
  ASSERT_EQ(stat((config_.state_dir / "containers").c_str(), &st), 0);
  const bool containers_private = (st.st_mode & 0007) == 0;
  EXPECT_TRUE(file_private || dir_private || containers_private)
      << "info.json (with DB_PASSWORD and the Loki password) is readable by every local user";
  driver_->StopLogging(f);
  CloseFd(w);
}

// A Loki client whose first PushAll holds the thread that calls it (the Driver's shipping
// thread) until Release(): the shipping thread busy for as long as a test needs.
class HoldingClient : public testkit::QuietShippingClient {
 public:
  using QuietShippingClient::QuietShippingClient;
  ~HoldingClient() override { Release(); }

  void PushAll(std::vector<LokiEntry>& entries) override {
    std::unique_lock lock(mu_);
    holding_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return released_; });
    // Settled as delivered: the stream may end and retire.
    std::vector<DeliveryTicket> tickets;
    for (LokiEntry& e : entries) tickets.push_back(e.ticket);
    entries.clear();
    lock.unlock();
    if (!tickets.empty() && tickets.front().listener != nullptr) {
      tickets.front().listener->OnSettled(tickets, true);
    }
  }
  void Stop(std::chrono::milliseconds) override { Release(); }

  bool WaitHolding(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return holding_; });
  }
  void Release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool holding_ = false;
  bool released_ = false;
};

// driver.cc StartLogging (the `attempt` loop): a container restarted right after its previous
// stream's FIFO ended joins that stream while the stream's end waits in the shipping queue
// (FinishStream has not removed it from stream_by_container_). AddSession refuses (the reader
// ended it), and the loop tries again at once, five times in well under a millisecond, then
// refuses the container: "could not attach ... to its journal". A shipping thread busy with
// other containers' lines (pipelines run there) makes the window seconds long; here another
// container's Loki client holds it until the restart is done.
TEST_F(DriverIsolationTest, ARestartRightAfterTheStreamEndedIsNotRefusedWhileTheShipperIsBusy) {
  const std::string holding_url = "http://127.0.0.1:9/holding/loki/api/v1/push";
  std::shared_ptr<HoldingClient> holding;
  config_.client_factory = [&](const LokiClientConfig& c) -> std::shared_ptr<ShippingClient> {
    if (c.url != holding_url) return MakeShippingClient(c, metrics_);
    holding = std::make_shared<HoldingClient>(c);
    return holding;
  };
  StartDriver();
  // Container B's first line holds the shipping thread.
  int wb;
  const std::string fb = MakeFifo("fb", &wb);
  driver_->StartLogging(fb, Info(kIdB, {{"no-file", "true"}, {"loki-url", holding_url}}));
  ASSERT_TRUE(Write(wb, "b"));
  ASSERT_TRUE(WaitFor([&] { return holding && holding->WaitHolding(10ms); }, 10s));
  // Container A: one line, then its FIFO ends (the container stopped).
  int wa1;
  const std::string fa1 = MakeFifo("fa1", &wa1);
  driver_->StartLogging(fa1, Info(kIdA));
  ASSERT_TRUE(Write(wa1, "first run"));
  driver_->StopLogging(fa1);
  CloseFd(wa1);
  std::this_thread::sleep_for(500ms);  // the reader ends A's stream; its end waits in the queue
  ASSERT_EQ(loki_.TotalEntries(), 0u) << "precondition: the shipper is still busy";
  // docker restart: the same container starts again.
  int wa2;
  const std::string fa2 = MakeFifo("fa2", &wa2);
  bool refused = false;
  try {
    driver_->StartLogging(fa2, Info(kIdA));
  } catch (const std::exception& e) {
    ADD_FAILURE() << "the restarted container was refused: " << e.what();
    refused = true;
  }
  holding->Release();
  if (refused) return;
  ASSERT_TRUE(Write(wa2, "second run"));
  EXPECT_TRUE(loki_.WaitForEntries(2, Slowed(60s)));
}

// driver.cc Ship/PushShipment and the ShipmentLedger with a pipeline that holds entries
// (multiline, limit with drop: false): a shipment after which the pipeline still holds something
// never moves the cursor (`held`). A multiline stage holds the last block after every shipment
// as long as the container logs more often than max_wait_time, so the cursor of a container
// that logs continuously never advances: nothing is persisted, a plugin restart sends the
// whole journal again (up to max-size x max-file), and with loki-on-full=block the journal
// cannot evict.
TEST_F(DriverIsolationTest, TheCursorOfAContainerWithAMultilineStageAdvancesWhileItLogs) {
  StartDriver();
  int w;
  const std::string f = MakeFifo("f1", &w);
  driver_->StartLogging(
      f, Info(kIdA, {{"loki-pipeline-stages", "- multiline:\n    firstline: \"^line\"\n"}}));
  // A line every 20 ms for 3 s (a busy service): each line ends the block before it.
  for (int i = 0; i < 150; ++i) {
    ASSERT_TRUE(Write(w, "line " + std::to_string(i)));
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_TRUE(loki_.WaitForEntries(140, 10s));  // delivered (all but the block still open)
  std::this_thread::sleep_for(500ms);           // cursors are persisted every 100 ms
  EXPECT_TRUE(fs::exists(JournalDir(kIdA) / "cursor"))
      << "140 lines were delivered but no cursor was ever persisted";
  // The plugin restarts (an upgrade; the container goes on): what was delivered is not resent.
  driver_.reset();
  const uint64_t before = loki_.Requests();
  StartDriver();
  driver_->Recover();
  std::this_thread::sleep_for(2s);
  EXPECT_LT(loki_.Duplicates(), 5u)
      << "a restart sent " << loki_.Duplicates() << " delivered lines again ("
      << loki_.Requests() - before << " requests)";
}

// driver.cc OpenJournalLocked / journals_: a Journal is opened once per container and kept
// (until the budget or the age limit removes it). The README tells users to remove
// /var/lib/skald/containers/<id> by hand to free a stopped container's journal; the Journal
// object stays cached with its directory gone, so every later start of that container
// fails to write info.json and its marker: it logs from memory only (no docker logs, lines lost
// on a restart), and with loki-on-full=block it is refused, until the plugin restarts.
TEST_F(DriverIsolationTest, AContainerWhoseJournalWasRemovedByHandIsJournaledAgainAtItsNextStart) {
  StartDriver();
  int w1;
  const std::string f1 = MakeFifo("f1", &w1);
  driver_->StartLogging(f1, Info(kIdA));
  ASSERT_TRUE(Write(w1, "first run"));
  ASSERT_TRUE(loki_.WaitForEntries(1, 10s));
  driver_->StopLogging(f1);
  CloseFd(w1);
  ASSERT_TRUE(WaitFor([&] { return driver_->LiveStreams() == 0; }, 10s));
  std::this_thread::sleep_for(300ms);  // its cursor is persisted: the journal is idle
  fs::remove_all(JournalDir(kIdA));    // as the README says, to free it sooner

  int w2;
  const std::string f2 = MakeFifo("f2", &w2);
  ASSERT_NO_THROW(driver_->StartLogging(f2, Info(kIdA)));
  ASSERT_TRUE(Write(w2, "second run"));
  ASSERT_TRUE(loki_.WaitForEntries(2, 10s));
  EXPECT_TRUE(fs::exists(JournalDir(kIdA) / "info.json")) << "the second run is not journaled";
  driver_->StopLogging(f2);
  CloseFd(w2);
  ASSERT_TRUE(WaitFor([&] { return driver_->LiveStreams() == 0; }, 10s));

  // With loki-on-full=block the container cannot start at all.
  int w3;
  const std::string f3 = MakeFifo("f3", &w3);
  try {
    driver_->StartLogging(f3, Info(kIdA, {{"loki-on-full", "block"}}));
  } catch (const std::exception& e) {
    ADD_FAILURE() << "refused: " << e.what();
  }
}

// driver.cc ClientFor: a container's first StartLogging with a new option set builds its
// LokiClient while holding Driver::mu_. With https and loki-tls-server-name the constructor
// resolves the URL's host once per lane (MakeHttpClient -> RefreshServerNameAddress ->
// getaddrinfo). The FIFO reader thread takes Driver::mu_ for every batch (OnLines, WantsLines)
// and so does the shipping thread: one container's options and a slow resolver stop every
// container's logs, for lanes x the resolver's timeout.
TEST_F(DriverIsolationTest, ASlowResolverForOneContainersLokiDoesNotStallTheOthers) {
  StartDriver();
  int wa;
  const std::string fa = MakeFifo("fa", &wa);
  driver_->StartLogging(fa, Info(kIdA));
  ASSERT_TRUE(Write(wa, "before"));
  ASSERT_TRUE(loki_.WaitForEntries(1, 10s));
  int wb;
  const std::string fb = MakeFifo("fb", &wb);
  threads_.emplace_back([&, fb] {
    try {
      driver_->StartLogging(
          fb,
          Info(kIdB, {{"loki-url", std::string("https://") + kSlowDnsName + "/loki/api/v1/push"},
                      {"loki-tls-server-name", "loki.test"}}));
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  });
  std::this_thread::sleep_for(300ms);  // B's StartLogging is building its client
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(Write(wa, "during"));
  ASSERT_TRUE(loki_.WaitForEntries(2, 30s));
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_LT(took, 1500ms) << "container A's line waited "
                          << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                          << " ms for container B's DNS lookups";
}

// driver.cc OnLines: no-file streams share one queue (max_queued_bytes) in front of the one
// shipping thread, and a full queue drops the oldest memory-only batch of any stream. A chatty
// no-file container whose lines ship slowly (a pipeline) makes a quiet no-file neighbour lose
// its lines as queue_full (the LokiClient's shared buffer does the same: buffer_full).
// Under load it also starved the neighbour: the reader read the flooding FIFO for as long as
// its writer kept it full (FifoReaderTest.AFifoItsWriterKeepsFullDoesNotKeepTheReaderFrom-
// TheOthers), and the neighbour's lines waited in the queue behind the flood's whole backlog
// (ShippingQueue.AStreamsBatchWaitsBehindAtMostOneBatchOfAFloodingStream).
TEST_F(DriverIsolationTest, AFloodingNoFileContainerDoesNotDropItsNeighboursLines) {
  config_.max_queued_bytes = 2 * 1024 * 1024;
  StartDriver();
  // A pipeline far slower than the flood: 8 regex stages natively, fewer where everything runs
  // slower (the queue it fills is drained at the end, through it).
  const int regexes = std::max(1, 8 / TestSlowdown());
  std::string stages;
  for (int i = 0; i < regexes; ++i) {
    stages += "- regex:\n    expression: \"(?P<a" + std::to_string(i) +
              ">[a-z]+)(?P<b>[0-9]+)(?P<c>.*)x(?P<d>.*)\"\n";
  }
  stages += "- drop:\n    expression: \".*\"\n";
  int wb;
  const std::string fb = MakeFifo("fb", &wb);
  driver_->StartLogging(fb, Info(kIdB, {{"no-file", "true"}, {"loki-pipeline-stages", stages}}));
  int wc;
  const std::string fc = MakeFifo("fc", &wc);
  driver_->StartLogging(fc, Info(kIdA, {{"no-file", "true"}}));
  std::atomic<bool>& flood = flood_;
  threads_.emplace_back([&] {
    std::string big = "abc123";
    while (big.size() < 16000) big += "x0123456789y";
    while (flood) Write(wb, big, 1s);
  });
  std::this_thread::sleep_for(1s);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(Write(wc, "neighbour " + std::to_string(i)));
  // Delivered while the flood goes on: the neighbour's lines wait for at most one hand-over of
  // the flood's on each thread (well under a second on an idle machine; the bound leaves room
  // for a sanitizer build on a loaded one).
  EXPECT_TRUE(loki_.WaitForEntries(20, Slowed(60s)))
      << "during the flood the neighbour delivered " << loki_.TotalEntries() << " of 20 lines";
  flood = false;
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(loki_.TotalEntries(), 20u)
      << "the quiet container lost lines to its neighbour's flood; queue_full drops: "
      << metrics_
             .GetCounter("skald_entries_dropped_total", "Entries not delivered, by reason.",
                         {{"reason", "queue_full"}})
             .Value();
}

std::size_t HeapInUse() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

// driver.cc SelectorFor: the selectors of a pipeline's output labels are cached per stream, up to
// 4096 per source, keyed by the label bytes the stages added, each holding the rendered label
// set. A pipeline that takes a label from the line (regex/json + labels: a very common
// promtail setup) lets the container choose those bytes: unique values of up to
// loki-max-line-size (256 KB) each are kept after their lines are gone - up to about
// 2 x 4096 x 2 x 256 KB = 4 GiB per stream - and Loki refuses such labels anyway.
TEST_F(DriverIsolationTest, LabelsAHostileContainerChoosesDoNotStayInMemory) {
  StartDriver();
  loki_.FailAll(400);  // Loki refuses the labels (too long): nothing is kept on its side
  int w;
  const std::string f = MakeFifo("f1", &w);
  driver_->StartLogging(f, Info(kIdA, {{"loki-pipeline-stages",
                                        "- regex:\n    expression: \"^id=(?P<id>\\\\S+)\"\n"
                                        "- labels:\n    id: id\n"}}));
  ASSERT_TRUE(Write(w, "id=warmup"));
  ASSERT_TRUE(
      WaitFor([&] { return metrics_.CounterTotal("skald_entries_dropped_total") >= 1; }, 10s));
  malloc_trim(0);
  const std::size_t before = HeapInUse();
  constexpr int kLines = 600;
  for (int i = 0; i < kLines; ++i) {
    std::string token = std::to_string(i) + "-";
    token.resize(100 * 1024, 'v');
    ASSERT_TRUE(Write(w, "id=" + token));
  }
  ASSERT_TRUE(WaitFor(
      [&] { return metrics_.CounterTotal("skald_entries_dropped_total") >= kLines + 1; }, 60s))
      << metrics_.CounterTotal("skald_entries_dropped_total");
  std::this_thread::sleep_for(500ms);
  malloc_trim(0);
  const std::size_t after = HeapInUse();
  const double grew_mb = (static_cast<double>(after) - static_cast<double>(before)) / 1048576.0;
  EXPECT_LT(grew_mb, 30.0) << "the heap kept " << grew_mb << " MB after " << kLines
                           << " lines of 100 KB were settled";
}

// driver.cc Ship/PushShipment + pipeline_stages/limit_stage.cc: with a limit stage and
// drop: false (its default) the entries over the rate are held in the stage (an unbounded
// deque). A shipment's window bytes are freed as soon as the entries it pushed settle; the held
// ones are counted nowhere, so the window never fills and the reader decodes the whole journal
// into the stage: a container that logs faster than its limit grows the plugin's heap without
// bound (where Promtail's limit stage blocks, and the journal was meant to hold the rest).
TEST_F(DriverIsolationTest, ALimitStageDoesNotBufferAContainersWholeJournalInMemory) {
  StartDriver();
  int w;
  const std::string f = MakeFifo("f1", &w);
  driver_->StartLogging(
      f, Info(kIdA, {{"loki-pipeline-stages", "- limit:\n    rate: 1\n    burst: 1\n"}}));
  ASSERT_TRUE(Write(w, "warm up"));
  ASSERT_TRUE(loki_.WaitForEntries(1, 10s));
  malloc_trim(0);
  const std::size_t before = HeapInUse();
  constexpr int kLines = 5000;
  const std::string pad(10 * 1024, 'p');
  for (int i = 0; i < kLines; ++i) ASSERT_TRUE(Write(w, std::to_string(i) + pad));
  WaitFor([&] { return metrics_.CounterTotal("skald_lines_read_total") >= kLines + 1; }, 20s);
  std::this_thread::sleep_for(500ms);
  malloc_trim(0);
  const double grew_mb =
      (static_cast<double>(HeapInUse()) - static_cast<double>(before)) / 1048576.0;
  EXPECT_LT(grew_mb, 20.0) << "the heap grew by " << grew_mb << " MB; lines read "
                           << metrics_.CounterTotal("skald_lines_read_total") << ", delivered "
                           << loki_.TotalEntries();
}

// pipeline_metrics_observer.cc + metrics.cc: a metrics stage's series are labelled with the
// entry's labels, and the registry never forgets a series (max_idle_duration is parsed and
// ignored; Promtail's default forgets series idle for 5 minutes). With a label taken from the
// line (regex/json + labels), a container creates one series per distinct value, for the
// plugin's life: memory, every scrape and Prometheus grow with what the container prints.
TEST_F(DriverIsolationTest, MetricSeriesAContainerCreatesAreForgottenAfterMaxIdleDuration) {
  StartDriver();
  int w;
  const std::string f = MakeFifo("f1", &w);
  driver_->StartLogging(f, Info(kIdA, {{"loki-pipeline-stages",
                                        "- regex:\n    expression: \"^id=(?P<id>\\\\S+)\"\n"
                                        "- labels:\n    id: id\n"
                                        "- metrics:\n    lines_total:\n      type: Counter\n"
                                        "      description: lines\n"
                                        "      max_idle_duration: 1s\n"
                                        "      config:\n        match_all: true\n"
                                        "        action: inc\n"}}));
  constexpr int kLines = 2000;
  for (int i = 0; i < kLines; ++i) ASSERT_TRUE(Write(w, "id=v" + std::to_string(i)));
  ASSERT_TRUE(loki_.WaitForEntries(kLines, 20s));
  std::this_thread::sleep_for(2500ms);  // every series is idle for more than 1 s now
  const std::string scrape = metrics_.RenderPrometheus();
  std::size_t series = 0;
  for (std::size_t at = scrape.find("\npromtail_custom_lines_total{"); at != std::string::npos;
       at = scrape.find("\npromtail_custom_lines_total{", at + 1)) {
    ++series;
  }
  EXPECT_LT(series, 100u) << series << " series of promtail_custom_lines_total are still exposed ("
                          << scrape.size() << " bytes per scrape)";
}

}  // namespace
}  // namespace skald
