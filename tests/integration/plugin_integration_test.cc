// The real skald binary, driven over its socket and FIFOs by a fake daemon, pushing to a fake
// Loki that decodes and counts. No Docker here: tests/e2e has the real daemon and Loki.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <thread>

#include "plugin/ingest/frame_codec.h"
#include "plugin/loki/http_response_reader.h"
#include "tests/integration/fake_daemon.h"
#include "tests/tools/fake_loki.h"
#include "tests/tools/prometheus_text_parser.h"
#include "tests/tools/scripted_http_peer.h"

namespace skald::testkit {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

class PluginIntegration : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(loki_.Start());
    daemon_ = std::make_unique<FakeDaemon>(SKALD_BINARY, extra_env_);
  }
  void TearDown() override {
    if (HasFailure() && daemon_) std::cerr << "plugin log:\n" << daemon_->Log();
  }
  std::map<std::string, std::string> Opts(std::map<std::string, std::string> extra = {}) {
    extra["loki-url"] = loki_.PushUrl();
    extra.emplace("loki-batch-wait", "100ms");
    extra.emplace("loki-min-backoff", "50ms");
    extra.emplace("loki-max-backoff", "200ms");
    return extra;
  }
  // Waits for read == sent + dropped + pending with pending == 0.
  bool WaitSettled(std::chrono::milliseconds timeout) {
    auto until = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < until) {
      if (daemon_->Metric("skald_entries_pending") == 0) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }

  FakeLoki loki_;
  std::vector<std::string> extra_env_;
  std::unique_ptr<FakeDaemon> daemon_;
};

TEST_F(PluginIntegration, EveryLineArrivesInOrderWithLabels) {
  FakeDaemon::Container c;
  ASSERT_EQ(daemon_->StartContainer(c, Opts(), {{"com.docker.compose.service", "web"}}), "");
  const int kLines = 20000;
  for (int i = 0; i < kLines; ++i) daemon_->WriteLine(c, "line " + std::to_string(i));
  daemon_->WriteLine(c, "to stderr", "stderr");
  ASSERT_EQ(daemon_->StopContainer(c), "");
  ASSERT_TRUE(loki_.WaitForEntries(kLines + 1, 20s)) << loki_.StatsJson();
  EXPECT_EQ(loki_.Duplicates(), 0u);
  EXPECT_EQ(loki_.OutOfOrder(), 0u);

  auto streams = loki_.Streams();
  ASSERT_EQ(streams.size(), 2u);
  for (const auto& s : streams) {
    EXPECT_THAT(s.labels, HasSubstr("container_name=\"" + c.name + "\""));
    EXPECT_THAT(s.labels, HasSubstr("compose_service=\"web\""));
    EXPECT_THAT(s.labels, HasSubstr("host=\""));
    if (s.labels.find("source=\"stdout\"") != std::string::npos) {
      ASSERT_EQ(s.entries.size(), static_cast<std::size_t>(kLines));
      for (int i = 0; i < kLines; ++i) ASSERT_EQ(s.entries[i].line, "line " + std::to_string(i));
    } else {
      EXPECT_THAT(s.labels, HasSubstr("source=\"stderr\""));
      ASSERT_EQ(s.entries.size(), 1u);
      EXPECT_EQ(s.entries[0].line, "to stderr");
    }
  }
}

// A stream whose stderr lines are few fills its stderr batch slowly (when the two label sets
// are sent by different lanes of the client); the shipments they belong to hold the in-memory
// window (8 MiB) until they are acknowledged. A full window makes the client send what it
// holds, and so does the end of a stream, so delivery never waits for loki-batch-wait (30 s
// here; each container's 11 MB take well under a second when that works). Four containers one
// after the other: the stdout and stderr streams of all four share a lane 1 time in 256.
TEST_F(PluginIntegration, AFullWindowDoesNotWaitForTheBatchWait) {
  const int kLines = 40000;
  const std::string pad(230, 'p');
  for (int round = 0; round < 4; ++round) {
    FakeDaemon::Container c;
    ASSERT_EQ(daemon_->StartContainer(c, Opts({{"loki-batch-wait", "30s"}})), "");
    for (int i = 0; i < kLines; ++i) {
      daemon_->WriteLine(c, std::to_string(i) + pad, i % 20 == 19 ? "stderr" : "stdout");
    }
    ASSERT_EQ(daemon_->StopContainer(c), "");
    ASSERT_TRUE(loki_.WaitForEntries(kLines * (round + 1), 20s)) << loki_.StatsJson();
  }
  EXPECT_EQ(loki_.Duplicates(), 0u);
  EXPECT_EQ(loki_.OutOfOrder(), 0u);
}

// Lines not yet acknowledged are bounded per Loki client: a container whose Loki is away (a
// closed port here) holds its own client's window, and a container shipping to a Loki that
// answers keeps the whole of its own. With the room shared, the second would be held to 64 KiB
// of lines at a time: 30 MB in 460 requests or more, instead of about 30 of 1 MiB.
TEST_F(PluginIntegration, AContainerWhoseLokiIsAwayLeavesOthersTheirWindow) {
  FakeDaemon::Container away;
  ASSERT_EQ(daemon_->StartContainer(away, {{"loki-url", "http://127.0.0.1:1/loki/api/v1/push"},
                                           {"loki-min-backoff", "1s"},
                                           {"loki-max-backoff", "1s"}}),
            "");
  const std::string pad(230, 'p');
  for (int i = 0; i < 40000; ++i) daemon_->WriteLine(away, std::to_string(i) + pad);
  // Wait until its window is full: what it decoded stays pending.
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (daemon_->Metric("skald_entries_pending") < 14000 &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_GE(daemon_->Metric("skald_entries_pending"), 14000) << loki_.StatsJson();

  FakeDaemon::Container busy;
  ASSERT_EQ(daemon_->StartContainer(busy, Opts()), "");
  const int kLines = 120000;
  for (int i = 0; i < kLines; ++i) daemon_->WriteLine(busy, std::to_string(i) + pad);
  ASSERT_EQ(daemon_->StopContainer(busy), "");
  ASSERT_TRUE(loki_.WaitForEntries(kLines, 30s)) << loki_.StatsJson();
  EXPECT_LT(loki_.Requests(), 200u) << loki_.StatsJson();
  EXPECT_EQ(loki_.Duplicates(), 0u);
}

TEST_F(PluginIntegration, TheLastLinesArriveWhenStopLoggingPrecedesEof) {
  FakeDaemon::Container c;
  ASSERT_EQ(daemon_->StartContainer(c, Opts()), "");
  for (int i = 0; i < 4000; ++i) daemon_->WriteLine(c, "short job " + std::to_string(i));
  // StopLogging while the FIFO is open, then more lines still in the pipe, then EOF.
  auto reply = daemon_->Call("StopLogging", {{"File", c.fifo}});
  EXPECT_EQ(reply.value("Err", "?"), "");
  daemon_->WriteLine(c, "the very last line");
  daemon_->StopContainer(c);
  ASSERT_TRUE(loki_.WaitForEntries(4001, 20s)) << loki_.StatsJson();
  auto streams = loki_.Streams();
  ASSERT_EQ(streams.size(), 1u);
  EXPECT_EQ(streams[0].entries.back().line, "the very last line");
}

TEST_F(PluginIntegration, PartialChunksArriveAsOneEntry) {
  FakeDaemon::Container c;
  ASSERT_EQ(daemon_->StartContainer(c, Opts()), "");
  std::string big(100 * 1000, 'x');
  for (std::size_t i = 0; i < big.size(); i += 997) big[i] = static_cast<char>('a' + i % 26);
  daemon_->WritePartialLine(c, big, 16 * 1024);
  daemon_->StopContainer(c);
  ASSERT_TRUE(loki_.WaitForEntries(1, 10s));
  std::this_thread::sleep_for(300ms);
  auto streams = loki_.Streams();
  ASSERT_EQ(streams.size(), 1u);
  ASSERT_EQ(streams[0].entries.size(), 1u);
  EXPECT_EQ(streams[0].entries[0].line, big);
}

TEST_F(PluginIntegration, AFrameCutAcrossReadsIsJoined) {
  FakeDaemon::Container c;
  ASSERT_EQ(daemon_->StartContainer(c, Opts()), "");
  LogEntryView e;
  e.source = "stdout";
  e.time_nano = 1;
  std::string frames;
  std::size_t second = 0;  // where the second frame starts
  for (const char* text : {"first whole", "cut in three pieces", "after the cut"}) {
    if (e.line == "first whole") second = frames.size();
    e.line = text;
    EncodeFrame(e, frames);
  }
  // The reader sees the second frame in three reads: inside its length prefix, inside its
  // body, then the rest.
  daemon_->WriteRaw(c, frames.substr(0, second + 2));
  std::this_thread::sleep_for(100ms);
  daemon_->WriteRaw(c, frames.substr(second + 2, 10));
  std::this_thread::sleep_for(100ms);
  daemon_->WriteRaw(c, frames.substr(second + 12));
  daemon_->StopContainer(c);
  ASSERT_TRUE(loki_.WaitForEntries(3, 10s)) << loki_.StatsJson();
  auto streams = loki_.Streams();
  ASSERT_EQ(streams.size(), 1u);
  ASSERT_EQ(streams[0].entries.size(), 3u);
  EXPECT_EQ(streams[0].entries[0].line, "first whole");
  EXPECT_EQ(streams[0].entries[1].line, "cut in three pieces");
  EXPECT_EQ(streams[0].entries[2].line, "after the cut");
}

TEST_F(PluginIntegration, LinesOverMaxLineSizeArriveAsPieces) {
  FakeDaemon::Container c;
  ASSERT_EQ(daemon_->StartContainer(c, Opts({{"loki-max-line-size", "1000"}})), "");
  daemon_->WriteLine(c, std::string(2500, 'q'));
  daemon_->StopContainer(c);
  ASSERT_TRUE(loki_.WaitForEntries(3, 10s));
  auto streams = loki_.Streams();
  ASSERT_EQ(streams.size(), 1u);
  ASSERT_EQ(streams[0].entries.size(), 3u);
  EXPECT_EQ(streams[0].entries[0].line.size() + streams[0].entries[1].line.size() +
                streams[0].entries[2].line.size(),
            2500u);
  EXPECT_EQ(daemon_->Metric("skald_lines_split_total"), 1);
}

TEST_F(PluginIntegration, BadOptionsAreRefusedWithTheirNames) {
  FakeDaemon::Container a, b, d;
  EXPECT_THAT(daemon_->StartContainer(a, {{"loki-urll", loki_.PushUrl()}}),
              HasSubstr("unknown log-opt 'loki-urll' (did you mean 'loki-url'?)"));
  EXPECT_THAT(daemon_->StartContainer(b, Opts({{"loki-batch-wait", "fast"}})),
              AllOf(HasSubstr("loki-batch-wait"), HasSubstr("'fast'")));
  EXPECT_THAT(daemon_->StartContainer(d, {}), HasSubstr("loki-url is required"));
  EXPECT_TRUE(daemon_->running());
}

// Files that options name are a container's input: read only from STATE_DIR/files, only as
// regular files, only up to their kind's size. Each refusal names the option and the path at
// StartLogging (`docker run` fails); the plugin keeps running and a good container ships.
TEST_F(PluginIntegration, FilesOptionsNameAreReadOnlyFromTheFilesDirectory) {
  namespace fs = std::filesystem;
  const std::string state = daemon_->dir() + "/state";
  const std::string files = state + "/files";
  ASSERT_TRUE(fs::is_directory(files)) << files;
  const std::string stages = "pipeline_stages:\n- labels:\n    job:\n";
  std::ofstream(files + "/token") << "t0ken\n";
  std::ofstream(files + "/stages.yaml") << stages;
  std::ofstream(state + "/outside-token") << "s3cret-outside\n";
  std::ofstream(files + "/big.yaml") << "pipeline_stages:\n" << std::string(2 << 20, '#') << "\n";
  fs::create_directory(files + "/adir");
  ASSERT_EQ(::mkfifo((files + "/fifo").c_str(), 0600), 0);
  fs::create_symlink(state + "/outside-token", files + "/link-out");
  fs::create_symlink(files + "/token", files + "/link-in");

  struct Row {
    const char* option;
    std::string path;
    const char* why;
  };
  const std::vector<Row> rows = {
      {"loki-bearer-token-file", "/dev/zero", "not in "},
      // Outside files/, nothing is told but that: not whether the path exists.
      {"loki-bearer-token-file", "/no-such-dir/token", "not in "},
      {"loki-bearer-token-file", files + "/adir", "a directory"},
      {"loki-bearer-token-file", files + "/fifo", "a FIFO"},
      {"loki-bearer-token-file", state + "/outside-token", "not in "},
      {"loki-bearer-token-file", files + "/link-out", "not in "},
      {"loki-bearer-token-file", files + "/../outside-token", "not in "},
      {"loki-pipeline-stage-file", files + "/big.yaml", "larger than 1048576 bytes"},
      {"loki-pipeline-stage-file", "/dev/zero", "not in "},
      {"loki-pipeline-stage-file", files + "/fifo", "a FIFO"},
      {"loki-tls-ca-file", "/etc/ssl/certs/ca-certificates.crt", "not in "},
      {"loki-basic-auth-password-file", files + "/adir", "a directory"},
  };
  for (const Row& row : rows) {
    FakeDaemon::Container c;
    std::map<std::string, std::string> o = Opts({{row.option, row.path}});
    if (std::string(row.option) == "loki-basic-auth-password-file") {
      o["loki-basic-auth-username"] = "u";
    }
    const auto start = std::chrono::steady_clock::now();
    const std::string err = daemon_->StartContainer(c, o);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 10s) << row.path;  // a FIFO hangs nothing
    EXPECT_THAT(err, AllOf(HasSubstr(row.option), HasSubstr(row.why))) << row.path;
    EXPECT_THAT(err, Not(HasSubstr("s3cret-outside")));
    ASSERT_TRUE(daemon_->running()) << row.path;
  }
  // What lies in files/ is read, through a symlink that stays inside too.
  FakeDaemon::Container good;
  ASSERT_EQ(
      daemon_->StartContainer(good, Opts({{"loki-bearer-token-file", files + "/link-in"},
                                          {"loki-pipeline-stage-file", files + "/stages.yaml"}})),
      "");
  daemon_->WriteLine(good, "from files/");
  ASSERT_TRUE(loki_.WaitForEntries(1, 20s)) << loki_.StatsJson();
  EXPECT_THAT(loki_.Authorizations(), Contains(std::string("Bearer t0ken")));
}

namespace {

// VmHWM (peak resident set) of process `pid` in kB, -1 when unknown.
long PeakRssKb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

// 1 GiB of zeros, gzip-compressed (a few MB): a body that inflates a thousandfold.
std::string GzipBomb() {
  z_stream z{};
  deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY);
  std::string zeros(1 << 20, '\0');
  std::string out;
  char buf[1 << 16];
  for (int mib = 0; mib <= 1024; ++mib) {
    z.next_in = reinterpret_cast<Bytef*>(zeros.data());
    z.avail_in = mib < 1024 ? static_cast<uInt>(zeros.size()) : 0;
    const int flush = mib < 1024 ? Z_NO_FLUSH : Z_FINISH;
    do {
      z.next_out = reinterpret_cast<Bytef*>(buf);
      z.avail_out = sizeof buf;
      deflate(&z, flush);
      out.append(buf, sizeof buf - z.avail_out);
    } while (z.avail_out == 0);
  }
  deflateEnd(&z);
  return out;
}

// Sends `bytes` on a new connection to 127.0.0.1:`port`; returns the status line answered.
std::string SendRaw(int port, const std::string& bytes) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    for (std::size_t at = 0; at < bytes.size();) {
      const ssize_t w = ::send(fd, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
      if (w <= 0) break;
      at += static_cast<std::size_t>(w);
    }
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, n);
  }
  ::close(fd);
  return out.substr(0, out.find("\r\n"));
}

}  // namespace

// Any local user reaches the metrics port. A gzip bomb POSTed to it, an endless header line
// and a million header lines are refused unread: the plugin's peak memory does not follow
// what was sent, and /healthz still answers.
TEST_F(PluginIntegration, TheMetricsPortTakesOnlySmallGets) {
  const std::string bomb = GzipBomb();
  std::string many = "GET /healthz HTTP/1.1\r\n";
  for (int i = 0; i < 1'000'000; ++i) many += "A: b\r\n";
  const long before = PeakRssKb(daemon_->pid());
  ASSERT_GT(before, 0);
  EXPECT_EQ(SendRaw(daemon_->metrics_port(),
                    "POST /metrics HTTP/1.1\r\nContent-Encoding: gzip\r\nContent-Length: " +
                        std::to_string(bomb.size()) + "\r\n\r\n" + bomb),
            "HTTP/1.1 413 Content Too Large");
  EXPECT_EQ(SendRaw(daemon_->metrics_port(),
                    "GET /metrics HTTP/1.1\r\nX: " + std::string(64 << 20, 'h') + "\r\n\r\n"),
            "HTTP/1.1 431 Request Header Fields Too Large");
  EXPECT_EQ(SendRaw(daemon_->metrics_port(), many + "\r\n"),
            "HTTP/1.1 431 Request Header Fields Too Large");
  EXPECT_EQ(SendRaw(daemon_->metrics_port(), "GET /healthz HTTP/1.1\r\n\r\n"), "HTTP/1.1 200 OK");
  const long after = PeakRssKb(daemon_->pid());
  std::printf(
      "metrics port: %zu-byte gzip bomb, a 64 MiB header line, 1e6 header lines; plugin "
      "VmHWM %ld kB -> %ld kB\n",
      bomb.size(), before, after);
  EXPECT_LT(after - before, 8 * 1024) << "kB";
  EXPECT_TRUE(daemon_->running());
}

// Docker templates are rendered at StartLogging: an output over 1 MiB refuses the container,
// naming the option, at once and without the memory.
TEST_F(PluginIntegration, ADockerTemplateOverOneMebibyteIsRefusedNamingTheOption) {
  FakeDaemon::Container a, b, ok;
  const auto start = std::chrono::steady_clock::now();
  const std::string refused =
      daemon_->StartContainer(a, Opts({{"tag", "{{pad .Name 2000000000 0}}"}}));
  EXPECT_THAT(refused,
              HasSubstr("skald: invalid log-opt tag: template \"{{pad .Name 2000000000 0}}\": "));
  EXPECT_THAT(refused, HasSubstr("error calling pad: result longer than 1048576 bytes"));
  EXPECT_THAT(daemon_->StartContainer(
                  b, Opts({{"loki-external-labels", "job=x,name={{pad .ID 600000 600000}}"}})),
              HasSubstr("skald: invalid log-opt loki-external-labels: template "));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  ASSERT_EQ(daemon_->StartContainer(ok, Opts({{"tag", "{{pad .Name 2 0}}"}})), "");
  daemon_->WriteLine(ok, "still shipping");
  ASSERT_EQ(daemon_->StopContainer(ok), "");
  ASSERT_TRUE(loki_.WaitForEntries(1, 10s)) << loki_.StatsJson();
  EXPECT_THAT(loki_.Streams()[0].labels, HasSubstr("tag=\"  " + ok.name + "\""));
}

TEST_F(PluginIntegration, CapabilitiesAndActivateAnswerAsTheDaemonExpects) {
  auto caps = daemon_->Call("Capabilities", nlohmann::json::object());
  EXPECT_EQ(caps["Cap"]["ReadLogs"], true);
  EXPECT_EQ(daemon_->Call("StopLogging", {{"File", "/nowhere"}}).value("Err", "?"), "");
}

TEST_F(PluginIntegration, RetriesThroughServerErrorsWithoutDuplicates) {
  loki_.FailNext(500, 3);
  FakeDaemon::Container c;
  ASSERT_EQ(daemon_->StartContainer(c, Opts()), "");
  for (int i = 0; i < 3000; ++i) daemon_->WriteLine(c, "retry " + std::to_string(i));
  daemon_->StopContainer(c);
  ASSERT_TRUE(loki_.WaitForEntries(3000, 30s)) << loki_.StatsJson();
  EXPECT_EQ(loki_.Duplicates(), 0u);
  ASSERT_TRUE(WaitSettled(10s));
  EXPECT_EQ(daemon_->Metric("skald_pushes_total", "status_code=\"500\""), 3);
  EXPECT_EQ(daemon_->Metric("skald_entries_sent_total"), 3000);
}

TEST_F(PluginIntegration, WritersNeverBlockWhileLokiIsDown) {
  FakeDaemon::Container c;
  auto opts = Opts();
  opts["loki-url"] = "http://127.0.0.1:" + std::to_string(FreePort()) + "/loki/api/v1/push";
  ASSERT_EQ(daemon_->StartContainer(c, opts), "");
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 50000; ++i) daemon_->WriteLine(c, "nobody listens " + std::to_string(i));
  auto took = std::chrono::steady_clock::now() - start;
  // Normally well under a second; a blocked reader would stall the writer forever.
  EXPECT_LT(took, 10s);
  auto stop_start = std::chrono::steady_clock::now();
  EXPECT_EQ(daemon_->StopContainer(c), "");
  EXPECT_LT(std::chrono::steady_clock::now() - stop_start, 3s);
}

TEST_F(PluginIntegration, ReadEqualsSentPlusDroppedPlusPending) {
  FakeDaemon::Container c;
  ASSERT_EQ(daemon_->StartContainer(c, Opts()), "");
  for (int i = 0; i < 5000; ++i)
    daemon_->WriteLine(c, i % 10 == 0 ? "   " : "m " + std::to_string(i));
  daemon_->StopContainer(c);
  ASSERT_TRUE(loki_.WaitForEntries(4500, 20s));
  ASSERT_TRUE(WaitSettled(10s));
  double read = daemon_->Metric("skald_lines_read_total");
  double sent = daemon_->Metric("skald_entries_sent_total");
  double dropped = daemon_->Metric("skald_entries_dropped_total");
  double pending = daemon_->Metric("skald_entries_pending");
  EXPECT_EQ(read, 5000);
  EXPECT_EQ(sent, 4500);
  EXPECT_EQ(daemon_->Metric("skald_entries_dropped_total", "reason=\"blank_line\""), 500);
  EXPECT_EQ(read, sent + dropped + pending);
}

TEST_F(PluginIntegration, CorruptFrameClosesOnlyThatStream) {
  FakeDaemon::Container bad, good;
  ASSERT_EQ(daemon_->StartContainer(bad, Opts()), "");
  ASSERT_EQ(daemon_->StartContainer(good, Opts()), "");
  daemon_->WriteRaw(bad, std::string("\x7f\xff\xff\xff", 4));  // a 2 GiB frame
  daemon_->WriteLine(good, "still fine");
  daemon_->StopContainer(good);
  ASSERT_TRUE(loki_.WaitForEntries(1, 10s));
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(daemon_->Metric("skald_streams_corrupt_total"), 1);
  EXPECT_TRUE(daemon_->running());
  daemon_->StopContainer(bad);
}

TEST_F(PluginIntegration, SigtermFlushesAndExits) {
  FakeDaemon::Container c;
  ASSERT_EQ(daemon_->StartContainer(c, Opts({{"loki-batch-wait", "5s"}})), "");
  for (int i = 0; i < 100; ++i) daemon_->WriteLine(c, "before term " + std::to_string(i));
  std::this_thread::sleep_for(200ms);  // read, but waiting in a 5 s batch
  int status = daemon_->Signal(SIGTERM, 10s);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(loki_.TotalEntries(), 100u);
}

// GET /healthz on the metrics listener: 200 with each Loki client (its URL without the password,
// how its last push ended and when, the age of its oldest undelivered line) while the API
// serves; 503 once it stopped (after SIGTERM, while a client still has lines to flush).
TEST_F(PluginIntegration, HealthzReportsTheApiAndEachLokiClient) {
  daemon_.reset();
  extra_env_ = {"SHUTDOWN_FLUSH_SECONDS=60"};
  daemon_ = std::make_unique<FakeDaemon>(SKALD_BINARY, extra_env_);
  auto healthz = [&](nlohmann::json* body) {
    httplib::Client cli("127.0.0.1", daemon_->metrics_port());
    cli.set_read_timeout(5);
    auto res = cli.Get("/healthz");
    if (!res) return 0;
    *body = nlohmann::json::parse(res->body);
    return res->status;
  };
  nlohmann::json body;
  int status = 0;
  // The API socket takes connections (the FakeDaemon's readiness) a moment before its server
  // thread counts itself running; until then /healthz rightly answers 503 "not serving".
  for (auto until = std::chrono::steady_clock::now() + 10s;
       status != 200 && std::chrono::steady_clock::now() < until;) {
    status = healthz(&body);
    if (status != 200) std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(status, 200) << body;
  EXPECT_EQ(body["status"], "ok");
  EXPECT_EQ(body["clients"], nlohmann::json::array());

  FakeDaemon::Container good, away;
  auto good_opts = Opts();
  good_opts["loki-url"] = loki_.PushUrl("skald:s3cret");
  ASSERT_EQ(daemon_->StartContainer(good, good_opts), "");
  daemon_->WriteLine(good, "delivered");
  ASSERT_TRUE(loki_.WaitForEntries(1, 10s));
  ASSERT_EQ(daemon_->StartContainer(away, {{"loki-url", "http://127.0.0.1:1/loki/api/v1/push"},
                                           {"loki-min-backoff", "50ms"},
                                           {"loki-max-backoff", "200ms"}}),
            "");
  daemon_->WriteLine(away, "waits");
  nlohmann::json good_client, away_client;
  auto settled = [&] {
    if (healthz(&body) != 200 || body["clients"].size() != 2) return false;
    for (const auto& c : body["clients"]) {
      if (c["url"] == loki_.PushUrl()) good_client = c;
      if (c["url"] == "http://127.0.0.1:1/loki/api/v1/push") away_client = c;
    }
    return !good_client.is_null() && !away_client.is_null() &&
           !good_client["last_push"].is_null() && !away_client["last_push"].is_null() &&
           away_client["oldest_undelivered_seconds"] > 0.1 && good_client["pending_entries"] == 0 &&
           good_client["oldest_undelivered_seconds"] == 0;
  };
  bool ok = false;
  for (auto until = std::chrono::steady_clock::now() + 20s;
       !ok && std::chrono::steady_clock::now() < until;) {
    ok = settled();
    if (!ok) std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(ok) << body;
  EXPECT_EQ(body.dump().find("s3cret"), std::string::npos) << body;
  EXPECT_EQ(good_client["last_push"]["status"], "204");
  EXPECT_THAT(good_client["last_push"]["time"].get<std::string>(),
              ::testing::MatchesRegex("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"
                                      "\\.[0-9]{3}Z"));
  EXPECT_EQ(good_client["oldest_undelivered_seconds"], 0);
  EXPECT_EQ(good_client["pending_entries"], 0);
  EXPECT_EQ(away_client["last_push"]["status"], "error");
  EXPECT_EQ(away_client["pending_entries"], 1);
  EXPECT_GE(daemon_->Metric("skald_oldest_undelivered_seconds"),
            away_client["oldest_undelivered_seconds"].get<double>());

  // Stopping: the API is gone at once, the flush goes on (the away client's line).
  ASSERT_EQ(kill(daemon_->pid(), SIGTERM), 0);
  status = 0;
  for (auto until = std::chrono::steady_clock::now() + 20s;
       status != 503 && std::chrono::steady_clock::now() < until;) {
    status = healthz(&body);
    if (status != 503) std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(status, 503) << body;
  EXPECT_EQ(body["status"], "unavailable");
  EXPECT_EQ(body["api"], "not serving");
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The metric names a PromQL expression queries: its identifiers that are not functions,
// keywords, label names or values, grouping labels, durations or numbers.
std::set<std::string> QueriedMetricNames(const std::string& expr) {
  std::string e = expr;
  e = std::regex_replace(e, std::regex(R"("(\\.|[^"\\])*"|'(\\.|[^'\\])*'|`[^`]*`)"), " ");
  e = std::regex_replace(e, std::regex(R"(\{[^}]*\})"), " ");
  e = std::regex_replace(e, std::regex(R"(\[[^\]]*\])"), " ");
  e = std::regex_replace(
      e, std::regex(R"(\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\))"), " ");
  static const std::set<std::string> kKeywords = {
      "by", "without", "on",          "ignoring", "bool", "group_left", "and",
      "or", "unless",  "group_right", "offset",   "inf",  "nan",        "atan2"};
  std::set<std::string> names;
  static const std::regex kIdent(R"([a-zA-Z_:][a-zA-Z0-9_:]*)");
  for (auto it = std::sregex_iterator(e.begin(), e.end(), kIdent); it != std::sregex_iterator();
       ++it) {
    const auto begin = static_cast<std::size_t>(it->position());
    std::size_t after = begin + static_cast<std::size_t>(it->length());
    while (after < e.size() && e[after] == ' ') ++after;
    if (after < e.size() && e[after] == '(') continue;  // a function
    if (begin > 0 && (std::isdigit(static_cast<unsigned char>(e[begin - 1])) ||
                      e[begin - 1] == '.' || e[begin - 1] == '$')) {
      continue;  // 1e3, $variable
    }
    if (kKeywords.count(Lower(it->str()))) continue;
    names.insert(it->str());
  }
  return names;
}

// Every "expr" in `node`, and the metrics of label_values(metric, label) variable queries.
void CollectQueries(const nlohmann::json& node, std::vector<std::string>& out) {
  if (node.is_object()) {
    for (const auto& [key, value] : node.items()) {
      if (key == "expr" && value.is_string()) out.push_back(value.get<std::string>());
      if ((key == "query" || key == "definition") && value.is_string()) {
        std::smatch m;
        const std::string q = value.get<std::string>();
        if (std::regex_search(q, m, std::regex(R"(label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*))"))) {
          out.push_back(m[1].str());
        }
      }
      CollectQueries(value, out);
    }
  } else if (node.is_array()) {
    for (const auto& v : node) CollectQueries(v, out);
  }
}

TEST(GrafanaDashboard, MetricNamesAreFoundInExpressions) {
  EXPECT_EQ(QueriedMetricNames(
                "histogram_quantile(0.99, sum by (le, status) (rate(x_bucket{a=\"b\", "
                "instance=~\"$instance\"}[$__rate_interval]))) / on(instance) group_left y + 1e3"),
            (std::set<std::string>{"x_bucket", "y"}));
  EXPECT_EQ(QueriedMetricNames("sum without (reason) (increase(a:b_total[5m] offset 1h)) > bool 0"),
            (std::set<std::string>{"a:b_total"}));
}

// Each metric the dashboard (plugin/grafana-dashboard.json) queries is on /metrics after a run
// against Loki: a renamed metric or a panel for one that does not exist fails here.
TEST_F(PluginIntegration, EveryMetricTheDashboardQueriesIsExported) {
  std::ifstream in(std::string(SKALD_SOURCE_DIR) + "/plugin/grafana-dashboard.json");
  ASSERT_TRUE(in) << "plugin/grafana-dashboard.json";
  const nlohmann::json dashboard = nlohmann::json::parse(in);
  std::vector<std::string> queries;
  CollectQueries(dashboard, queries);
  std::set<std::string> queried;
  for (const std::string& q : queries) {
    for (const std::string& name : QueriedMetricNames(q)) queried.insert(name);
  }
  // The panels the dashboard is for.
  for (const char* name :
       {"skald_entries_sent_total", "skald_sent_bytes_total", "skald_oldest_undelivered_seconds",
        "skald_entries_dropped_total", "skald_batch_retries_total",
        "skald_push_duration_seconds_bucket", "skald_journal_bytes",
        "skald_journal_undelivered_bytes", "skald_streams_live"}) {
    EXPECT_TRUE(queried.count(name)) << name << " is not on the dashboard";
  }

  FakeDaemon::Container c;
  ASSERT_EQ(daemon_->StartContainer(c, Opts()), "");
  daemon_->WriteLine(c, "one line");
  ASSERT_TRUE(loki_.WaitForEntries(1, 10s));
  // Counted once Loki's answer is in (skald_pushes_total{status_code} first).
  for (auto until = std::chrono::steady_clock::now() + 10s;
       daemon_->Metric("skald_entries_sent_total") < 1 &&
       std::chrono::steady_clock::now() < until;) {
    std::this_thread::sleep_for(20ms);
  }
  const auto families = ParsePrometheusText(daemon_->MetricsText());
  std::map<std::string, std::string> exported;  // family -> type
  for (const auto& f : families) exported[f.name] = f.type;
  for (const std::string& name : queried) {
    std::string family = name;
    for (std::string_view suffix : {"_bucket", "_sum", "_count"}) {
      const std::string stem = name.substr(0, name.size() - std::min(name.size(), suffix.size()));
      if (name.ends_with(suffix) && exported.count(stem) && exported[stem] == "histogram") {
        family = stem;
      }
    }
    EXPECT_TRUE(exported.count(family)) << name << " (queried by the dashboard) is not on /metrics";
  }
  ASSERT_EQ(daemon_->StopContainer(c), "");
}

TEST_F(PluginIntegration, PipelineStagesSetLabelsLineAndStructuredMetadata) {
  const std::string stages = R"(
- json:
    expressions: {level: level, context: context, traceID: traceID, msg: msg}
- labels: {level: , context: }
- structured_metadata: {traceID: }
- output: {source: msg}
)";
  FakeDaemon::Container c;
  ASSERT_EQ(daemon_->StartContainer(c, Opts({{"loki-pipeline-stages", stages}})), "");
  daemon_->WriteLine(
      c, R"({"level":"info","context":"HttpService","traceID":"abc123","msg":"GET /"})");
  daemon_->WriteLine(c, R"({"level":"error","context":"Db","traceID":"def456","msg":"timeout"})");
  daemon_->StopContainer(c);
  ASSERT_TRUE(loki_.WaitForEntries(2, 10s));
  auto streams = loki_.Streams();
  ASSERT_EQ(streams.size(), 2u);
  for (const auto& st : streams) {
    ASSERT_EQ(st.entries.size(), 1u);
    const auto& e = st.entries[0];
    if (st.labels.find("level=\"info\"") != std::string::npos) {
      EXPECT_THAT(st.labels, HasSubstr("context=\"HttpService\""));
      EXPECT_EQ(e.line, "GET /");
      ASSERT_EQ(e.structured_metadata.size(), 1u);
      EXPECT_EQ(e.structured_metadata[0].first, "traceID");
      EXPECT_EQ(e.structured_metadata[0].second, "abc123");
    } else {
      EXPECT_THAT(st.labels, HasSubstr("level=\"error\""));
      EXPECT_EQ(e.line, "timeout");
    }
    EXPECT_THAT(st.labels, ::testing::Not(HasSubstr("traceID")));
  }
}

// Selectors of the pipeline's output are cached per stream by the labels the stages set: lines
// whose labels alternate (and whose stages set them in either order) each reach the stream of
// their own labels, on stdout and stderr alike.
TEST_F(PluginIntegration, EveryLineReachesTheStreamOfItsOwnPipelineLabels) {
  const std::string stages = R"(
- json:
    expressions: {level: level, context: context}
- match:
    selector: '{source="stderr"}'
    stages:
    - labels: {context: }
    - labels: {level: }
- labels: {level: , context: }
)";
  FakeDaemon::Container c;
  ASSERT_EQ(daemon_->StartContainer(c, Opts({{"loki-pipeline-stages", stages}})), "");
  const char* levels[] = {"info", "warn", "error"};
  const char* contexts[] = {"a", "b"};
  const int kLines = 600;
  for (int i = 0; i < kLines; ++i) {
    const std::string level = levels[i % 3], context = contexts[(i / 3) % 2];
    const std::string source = i % 5 == 0 ? "stderr" : "stdout";
    daemon_->WriteLine(c,
                       R"({"level":")" + level + R"(","context":")" + context + R"(","for":")" +
                           level + "/" + context + "/" + source + R"("})",
                       source);
  }
  daemon_->StopContainer(c);
  ASSERT_TRUE(loki_.WaitForEntries(kLines, 10s));
  auto streams = loki_.Streams();
  EXPECT_EQ(streams.size(), 12u);
  std::size_t seen = 0;
  for (const auto& st : streams) {
    for (const auto& e : st.entries) {
      const std::string want = e.line.substr(e.line.find(R"("for":")") + 7);
      const std::string level = want.substr(0, want.find('/'));
      const std::string context = want.substr(level.size() + 1, want.rfind('/') - level.size() - 1);
      const std::string source =
          want.substr(want.rfind('/') + 1, want.size() - want.rfind('/') - 3);
      EXPECT_THAT(st.labels, HasSubstr("level=\"" + level + "\""));
      EXPECT_THAT(st.labels, HasSubstr("context=\"" + context + "\""));
      EXPECT_THAT(st.labels, HasSubstr("source=\"" + source + "\""));
      ++seen;
    }
  }
  EXPECT_EQ(seen, static_cast<std::size_t>(kLines));
}

TEST_F(PluginIntegration, DropStageCountsWhatItDrops) {
  FakeDaemon::Container c;
  ASSERT_EQ(daemon_->StartContainer(c, Opts({{"loki-pipeline-stages",
                                              "- drop:\n    expression: debug\n"
                                              "    drop_counter_reason: noisy\n"}})),
            "");
  for (int i = 0; i < 10; ++i)
    daemon_->WriteLine(c, (i % 2 ? "debug " : "info ") + std::to_string(i));
  daemon_->StopContainer(c);
  ASSERT_TRUE(loki_.WaitForEntries(5, 10s));
  ASSERT_TRUE(WaitSettled(10s));
  EXPECT_EQ(daemon_->Metric("skald_entries_dropped_total", "reason=\"noisy\""), 5);
  EXPECT_EQ(
      daemon_->Metric("skald_lines_read_total"),
      daemon_->Metric("skald_entries_sent_total") + daemon_->Metric("skald_entries_dropped_total"));
}

TEST_F(PluginIntegration, MultilineBlocksAreJoinedAndReleasedAtTheEnd) {
  FakeDaemon::Container c;
  ASSERT_EQ(daemon_->StartContainer(
                c, Opts({{"loki-pipeline-stages",
                          "- multiline:\n    firstline: '^\\d{4}'\n    max_wait_time: 60s\n"}})),
            "");
  daemon_->WriteLine(c, "2026 first");
  daemon_->WriteLine(c, "  at frame 1");
  daemon_->WriteLine(c, "2026 second");
  daemon_->WriteLine(c, "  at frame 2");
  daemon_->StopContainer(c);  // EOF releases the last block
  ASSERT_TRUE(loki_.WaitForEntries(2, 10s)) << loki_.StatsJson();
  auto streams = loki_.Streams();
  ASSERT_EQ(streams.size(), 1u);
  ASSERT_EQ(streams[0].entries.size(), 2u);
  EXPECT_EQ(streams[0].entries[0].line, "2026 first\n  at frame 1");
  EXPECT_EQ(streams[0].entries[1].line, "2026 second\n  at frame 2");
}

// A multiline block goes on when it reaches loki-max-line-size, rather than growing past what
// Loki takes (max_lines alone lets 128 long lines make megabytes).
TEST_F(PluginIntegration, MultilineBlocksStopAtTheMaxLineSize) {
  FakeDaemon::Container c;
  ASSERT_EQ(daemon_->StartContainer(
                c, Opts({{"loki-max-line-size", "100"},
                         {"loki-pipeline-stages",
                          "- multiline:\n    firstline: '^\\d{4}'\n    max_wait_time: 60s\n"}})),
            "");
  std::string all = "2026 first";
  daemon_->WriteLine(c, all);
  for (int i = 0; i < 10; ++i) {
    const std::string frame = "  at frame " + std::to_string(i) + " of twenty-nine bytes";
    daemon_->WriteLine(c, frame);
    all += "\n" + frame;
  }
  daemon_->StopContainer(c);
  ASSERT_TRUE(loki_.WaitForEntries(5, 10s)) << loki_.StatsJson();
  ASSERT_TRUE(WaitSettled(10s));
  auto streams = loki_.Streams();
  ASSERT_EQ(streams.size(), 1u);
  std::string joined;
  for (const auto& e : streams[0].entries) {
    EXPECT_LE(e.line.size(), 100u) << e.line;
    joined += (joined.empty() ? "" : "\n") + e.line;
  }
  EXPECT_EQ(joined, all);
  EXPECT_EQ(streams[0].entries.size(), 5u);  // 78, 67, 67, 67 and 67 bytes
  EXPECT_EQ(daemon_->Metric("skald_lines_split_total"), 0);
}

TEST_F(PluginIntegration, BadPipelineIsRefusedNamingTheStage) {
  FakeDaemon::Container c;
  std::string err =
      daemon_->StartContainer(c, Opts({{"loki-pipeline-stages", "- jsn:\n    expressions: {}\n"}}));
  EXPECT_THAT(err, HasSubstr("loki-pipeline-stages"));
  EXPECT_THAT(err, HasSubstr("jsn"));
}

// Two containers whose metrics stages give one name two types: the later one is refused at
// StartLogging, naming both declarations, while the others keep shipping. Once the first
// container's stream ended, the name is free for the other type.
TEST_F(PluginIntegration, AMetricNameHasOneTypeAcrossContainersWhileItsDeclarerRuns) {
  const std::string counter =
      "- metrics:\n    hits:\n      type: Counter\n      config: {match_all: true, action: inc}\n";
  const std::string gauge =
      "- regex: {expression: 'n=(?P<hits>\\d+)'}\n"
      "- metrics:\n    hits:\n      type: Gauge\n      config: {action: set}\n";
  FakeDaemon::Container first, plain, second;
  ASSERT_EQ(daemon_->StartContainer(first, Opts({{"loki-pipeline-stages", counter}})), "");
  ASSERT_EQ(daemon_->StartContainer(plain, Opts()), "");
  for (int i = 0; i < 100; ++i) daemon_->WriteLine(first, "n=" + std::to_string(i));

  const std::string err = daemon_->StartContainer(second, Opts({{"loki-pipeline-stages", gauge}}));
  EXPECT_THAT(err, HasSubstr("loki-pipeline-stages: pipeline stage 2 (metrics): metric \"hits\": "
                             "metric name promtail_custom_hits is already a counter, declared by "
                             "container " +
                             first.name + " (" + first.id.substr(0, 12) +
                             "), pipeline stage 1 (metrics); here it would be a gauge"));
  for (int i = 0; i < 1000; ++i) daemon_->WriteLine(plain, "plain " + std::to_string(i));
  ASSERT_TRUE(loki_.WaitForEntries(1100, 20s)) << loki_.StatsJson();
  EXPECT_EQ(daemon_->Metric("promtail_custom_hits"), 100);
  EXPECT_THAT(daemon_->MetricsText(), HasSubstr("# TYPE promtail_custom_hits counter\n"));

  ASSERT_EQ(daemon_->StopContainer(first), "");
  // The first container's pipeline goes once its stream retired.
  std::string retry_err = "not tried";
  for (auto until = std::chrono::steady_clock::now() + 10s;
       !retry_err.empty() && std::chrono::steady_clock::now() < until;) {
    std::this_thread::sleep_for(50ms);
    retry_err = daemon_->StartContainer(second, Opts({{"loki-pipeline-stages", gauge}}));
  }
  ASSERT_EQ(retry_err, "");
  daemon_->WriteLine(second, "n=42");
  for (auto until = std::chrono::steady_clock::now() + 10s;
       daemon_->Metric("promtail_custom_hits") != 42 && std::chrono::steady_clock::now() < until;) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(daemon_->Metric("promtail_custom_hits"), 42);
  EXPECT_THAT(daemon_->MetricsText(), HasSubstr("# TYPE promtail_custom_hits gauge\n"));
  ASSERT_EQ(daemon_->StopContainer(second), "");
  ASSERT_EQ(daemon_->StopContainer(plain), "");
  ASSERT_TRUE(loki_.WaitForEntries(1101, 20s)) << loki_.StatsJson();
  EXPECT_TRUE(daemon_->running());
}

TEST_F(PluginIntegration, RelabelRulesRewriteTheContainerLabels) {
  FakeDaemon::Container c;
  ASSERT_EQ(daemon_->StartContainer(c, Opts({{"loki-relabel-config",
                                              "- source_labels: [container_name]\n"
                                              "  target_label: app\n"
                                              "- action: labeldrop\n"
                                              "  regex: host\n"}})),
            "");
  daemon_->WriteLine(c, "relabelled");
  daemon_->StopContainer(c);
  ASSERT_TRUE(loki_.WaitForEntries(1, 10s));
  auto streams = loki_.Streams();
  ASSERT_EQ(streams.size(), 1u);
  EXPECT_THAT(streams[0].labels, HasSubstr("app=\"" + c.name + "\""));
  EXPECT_THAT(streams[0].labels, ::testing::Not(HasSubstr("host=")));
}

// ---- The journal: durable delivery (issue 4) ----

TEST_F(PluginIntegration, LinesOfAnOutageAreRetriedUntilLokiTakesThemWithoutDuplicates) {
  loki_.FailAll(503);
  FakeDaemon::Container c;
  ASSERT_EQ(daemon_->StartContainer(c, Opts({{"loki-retries", "1"}})), "");
  for (int i = 0; i < 20000; ++i) daemon_->WriteLine(c, "outage " + std::to_string(i));
  ASSERT_EQ(daemon_->StopContainer(c), "");
  // Far more failures than loki-retries allows: with the journal nothing is given up.
  std::this_thread::sleep_for(2s);
  EXPECT_GT(daemon_->Metric("skald_pushes_total", "status_code=\"503\""), 3);
  EXPECT_EQ(loki_.TotalEntries(), 0u);
  loki_.ClearFailures();
  ASSERT_TRUE(loki_.WaitForEntries(20000, 30s)) << loki_.StatsJson();
  ASSERT_TRUE(WaitSettled(10s));
  EXPECT_EQ(loki_.Duplicates(), 0u);
  EXPECT_EQ(loki_.OutOfOrder(), 0u);
  EXPECT_EQ(daemon_->Metric("skald_entries_sent_total"), 20000);
  EXPECT_EQ(daemon_->Metric("skald_entries_dropped_total"), 0);
}

TEST_F(PluginIntegration, AKilledPluginResumesTheFifoAndEveryLineArrives) {
  FakeDaemon::Container c;
  ASSERT_EQ(daemon_->StartContainer(c, Opts()), "");
  for (int i = 0; i < 5000; ++i) daemon_->WriteLine(c, "before kill " + std::to_string(i));
  ASSERT_TRUE(loki_.WaitForEntries(1, 10s));
  // Half a frame in the FIFO when the plugin dies: the restarted plugin completes it.
  std::string frame;
  LogEntryView e;
  e.source = "stdout";
  e.time_nano = 1;
  e.line = "the frame cut by the kill";
  EncodeFrame(e, frame);
  daemon_->WriteRaw(c, frame.substr(0, 9));
  std::this_thread::sleep_for(300ms);
  daemon_->KillAndRestartPlugin();
  daemon_->WriteRaw(c, frame.substr(9));
  for (int i = 0; i < 5000; ++i) daemon_->WriteLine(c, "after kill " + std::to_string(i));
  ASSERT_EQ(daemon_->StopContainer(c), "");
  ASSERT_TRUE(loki_.WaitForEntries(10001, 30s)) << loki_.StatsJson() << daemon_->Log();
  std::printf("kill -9 mid-stream: %llu entries stored, %llu duplicates received\n",
              static_cast<unsigned long long>(loki_.TotalEntries()),
              static_cast<unsigned long long>(loki_.Duplicates()));
  EXPECT_EQ(loki_.TotalEntries(), 10001u);
}

TEST_F(PluginIntegration, AJournalLeftUndeliveredIsReplayedAfterARestartWithItsFifoGone) {
  loki_.FailAll(503);
  FakeDaemon::Container c;
  ASSERT_EQ(daemon_->StartContainer(c, Opts()), "");
  for (int i = 0; i < 3000; ++i) daemon_->WriteLine(c, "undelivered " + std::to_string(i));
  ASSERT_EQ(daemon_->StopContainer(c), "");
  std::this_thread::sleep_for(500ms);  // read into the journal, Loki still refusing
  daemon_->KillAndRestartPlugin();
  loki_.ClearFailures();
  ASSERT_TRUE(loki_.WaitForEntries(3000, 30s)) << loki_.StatsJson() << daemon_->Log();
  EXPECT_EQ(loki_.TotalEntries(), 3000u);
  EXPECT_EQ(loki_.OutOfOrder(), 0u);
}

TEST_F(PluginIntegration, TheJournalBudgetDropsTheOldestAndCountsThem) {
  loki_.FailAll(503);
  FakeDaemon::Container c;
  ASSERT_EQ(daemon_->StartContainer(c, Opts({{"max-size", "64k"}, {"max-file", "2"}})), "");
  const std::string pad(200, 'x');
  for (int i = 0; i < 10000; ++i) daemon_->WriteLine(c, "budget " + std::to_string(i) + pad);
  ASSERT_EQ(daemon_->StopContainer(c), "");
  std::this_thread::sleep_for(1s);
  loki_.ClearFailures();
  double dropped = 0;
  for (auto until = std::chrono::steady_clock::now() + 30s;
       std::chrono::steady_clock::now() < until;) {
    dropped = daemon_->Metric("skald_entries_dropped_total", "reason=\"journal_full\"");
    if (static_cast<double>(loki_.TotalEntries()) + dropped >= 10000) break;
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(WaitSettled(10s));
  std::this_thread::sleep_for(300ms);
  std::printf("budget 2 x 64k: %llu delivered, %.0f dropped (journal_full) of 10000\n",
              static_cast<unsigned long long>(loki_.TotalEntries()), dropped);
  EXPECT_GT(dropped, 0);
  EXPECT_EQ(static_cast<double>(loki_.TotalEntries()) + dropped, 10000);
  EXPECT_EQ(loki_.Duplicates(), 0u);
}

TEST_F(PluginIntegration, NoFileKeepsTheMemoryOnlyRetryBound) {
  loki_.FailAll(503);
  FakeDaemon::Container c;
  ASSERT_EQ(daemon_->StartContainer(c, Opts({{"no-file", "true"}, {"loki-retries", "2"}})), "");
  for (int i = 0; i < 100; ++i) daemon_->WriteLine(c, "memory only " + std::to_string(i));
  ASSERT_EQ(daemon_->StopContainer(c), "");
  // Pending is 0 before the lines are read, too: wait for the drops themselves.
  double dropped = 0;
  for (auto until = std::chrono::steady_clock::now() + 20s;
       std::chrono::steady_clock::now() < until && dropped < 100;) {
    std::this_thread::sleep_for(50ms);
    dropped = daemon_->Metric("skald_entries_dropped_total", "reason=\"retries_exhausted\"");
  }
  EXPECT_EQ(dropped, 100);
  ASSERT_TRUE(WaitSettled(10s));
  EXPECT_EQ(loki_.TotalEntries(), 0u);
}

// --- One container's hostile input: the plugin stays up and bounded, the others ship.

// The frames of one partial line as dockerd writes a line with no newline: 16 KiB chunks with
// one id, none of them the last.
std::string EndlessChunks(const std::string& id, int first_ordinal, int count, int64_t ts) {
  const std::string text(16 * 1024, 'y');
  std::string frames;
  for (int i = 0; i < count; ++i) {
    LogEntryView e;
    e.source = "stdout";
    e.time_nano = ts;
    e.line = text;
    e.partial = true;
    e.has_partial_metadata = true;
    e.partial_id = id;
    e.partial_ordinal = first_ordinal + i;
    EncodeFrame(e, frames);
  }
  return frames;
}

// Bytes and entries of the streams whose labels name `container`.
std::pair<uint64_t, uint64_t> Received(const FakeLoki& loki, const std::string& container) {
  uint64_t bytes = 0, entries = 0;
  for (const auto& stream : loki.Streams()) {
    if (stream.labels.find("\"" + container + "\"") == std::string::npos) continue;
    for (const auto& e : stream.entries) bytes += e.line.size();
    entries += stream.entries.size();
  }
  return {bytes, entries};
}

// `yes | tr -d '\n'`: a line that never ends. It used to be assembled in memory without bound
// (hundreds of MB, then an OOM kill, and the replay of its journal did it again).
TEST_F(PluginIntegration, ALineThatNeverEndsIsSentInPiecesWithBoundedMemory) {
  FakeDaemon::Container endless, neighbour;
  ASSERT_EQ(daemon_->StartContainer(endless, Opts({{"loki-max-line-size", "100000"}})), "");
  ASSERT_EQ(daemon_->StartContainer(neighbour, Opts()), "");
  constexpr int kChunks = 4096;  // 64 MiB
  for (int i = 0; i < kChunks; i += 256) {
    daemon_->WriteRaw(endless, EndlessChunks("forever", i + 1, 256, 1'000'000'000));
    for (int j = 0; j < 10; ++j)
      daemon_->WriteLine(neighbour, "neighbour " + std::to_string(i + j));
  }
  const uint64_t written = uint64_t{kChunks} * 16 * 1024;
  const uint64_t full_pieces = written / 100000;
  ASSERT_TRUE(loki_.WaitForEntries(full_pieces + 160, 60s))
      << loki_.TotalEntries() << " entries; plugin log:\n"
      << daemon_->Log();
  EXPECT_EQ(Received(loki_, neighbour.name).second, 160u);
  EXPECT_EQ(Received(loki_, endless.name), std::make_pair(full_pieces * 100000, full_pieces));
  EXPECT_EQ(daemon_->Metric("skald_lines_split_total"), 1);
  const long peak_kb = PeakRssKb(daemon_->pid());
  EXPECT_GT(peak_kb, 0);
  EXPECT_LT(peak_kb, 100 * 1024) << "peak RSS " << peak_kb << " kB for a 64 MiB line";
  // The pieces sent move the journal's cursor (a restart does not send the line again).
  std::this_thread::sleep_for(300ms);
  std::ifstream cursor(daemon_->dir() + "/state/containers/" + endless.id + "/cursor");
  uint64_t segment = 0, offset = 0;
  ASSERT_TRUE(cursor >> segment >> offset);
  EXPECT_GT(segment * 20 * 1024 * 1024 + offset, written / 2);
  // Its end sends the rest.
  ASSERT_EQ(daemon_->StopContainer(endless), "");
  ASSERT_TRUE(loki_.WaitForEntries(full_pieces + 161, 20s));
  EXPECT_EQ(Received(loki_, endless.name).first, written);
  EXPECT_TRUE(daemon_->running());
  daemon_->StopContainer(neighbour);
}

// A plugin killed in the middle of an endless line goes on after the pieces it sent: the line
// is not sent again from its start.
TEST_F(PluginIntegration, AKillInTheMiddleOfAnEndlessLineDoesNotResendIt) {
  FakeDaemon::Container c;
  ASSERT_EQ(daemon_->StartContainer(c, Opts({{"loki-max-line-size", "100000"}})), "");
  daemon_->WriteRaw(c, EndlessChunks("forever", 1, 512, 1'000'000'000));  // 8 MiB
  const uint64_t half = 512ull * 16 * 1024;
  ASSERT_TRUE(loki_.WaitForEntries(half / 100000, 30s));
  std::this_thread::sleep_for(500ms);  // the cursor is persisted every 100 ms
  daemon_->KillAndRestartPlugin();
  daemon_->WriteRaw(c, EndlessChunks("forever", 513, 512, 1'000'000'000));
  ASSERT_EQ(daemon_->StopContainer(c), "");
  // Every byte arrives (the last piece goes when the FIFO ends, after the full ones).
  uint64_t received = 0;
  for (auto until = std::chrono::steady_clock::now() + 30s;
       received < 2 * half && std::chrono::steady_clock::now() < until;) {
    std::this_thread::sleep_for(50ms);
    received = Received(loki_, c.name).first;
  }
  ASSERT_TRUE(WaitSettled(20s));
  std::this_thread::sleep_for(200ms);
  received = Received(loki_, c.name).first;
  EXPECT_GE(received, 2 * half);
  // Sent again: at most the frame the remainder began in and the piece it was filling.
  EXPECT_LE(received, 2 * half + 16 * 1024 + 100000) << "received " << received;
}

// dockerd kills a plugin that does not exit soon after SIGTERM. Idle keep-alive connections
// used to hold the API server for a minute, its pool for 5 + 5 s more.
TEST_F(PluginIntegration, SigtermWithOpenConnectionsExitsWithinTheFlushTime) {
  daemon_.reset();
  extra_env_ = {"SHUTDOWN_FLUSH_SECONDS=1"};
  daemon_ = std::make_unique<FakeDaemon>(SKALD_BINARY, extra_env_);
  FakeDaemon::Container c;
  ASSERT_EQ(daemon_->StartContainer(c, Opts()), "");
  daemon_->WriteLine(c, "followed");
  // Idle keep-alive connections, as dockerd keeps them.
  std::vector<std::unique_ptr<httplib::Client>> idle;
  for (int i = 0; i < 3; ++i) {
    auto cli = std::make_unique<httplib::Client>(daemon_->socket());
    cli->set_address_family(AF_UNIX);
    cli->set_keep_alive(true);
    auto res = cli->Post("/LogDriver.Capabilities", "{}", "application/json");
    ASSERT_TRUE(res);
    idle.push_back(std::move(cli));
  }
  // A `docker logs -f` answer in progress, on a connection of its own.
  const int follower = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(follower, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", daemon_->socket().c_str());
  ASSERT_EQ(connect(follower, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string body =
      nlohmann::json{{"Info", {{"ContainerID", c.id}, {"ContainerName", "/" + c.name}}},
                     {"Config", {{"Follow", true}, {"Tail", -1}}}}
          .dump();
  const std::string request =
      "POST /LogDriver.ReadLogs HTTP/1.1\r\nHost: plugin\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  ASSERT_EQ(write(follower, request.data(), request.size()), static_cast<ssize_t>(request.size()));
  std::string answer;
  char buf[4096];
  while (answer.find("followed") == std::string::npos) {
    const ssize_t n = read(follower, buf, sizeof buf);
    ASSERT_GT(n, 0) << answer;
    answer.append(buf, static_cast<std::size_t>(n));
  }
  ASSERT_NE(answer.find(" 200 "), std::string::npos) << answer;
  const auto start = std::chrono::steady_clock::now();
  const int status = daemon_->Signal(SIGTERM, 20s);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_LT(took, 2s) << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                      << " ms; SHUTDOWN_FLUSH_SECONDS=1";
  close(follower);
  EXPECT_EQ(loki_.TotalEntries(), 1u);
}

// A push stuck in a TLS handshake with a Loki that accepts the connection and says nothing
// cannot be cut from outside (httplib holds its socket for the whole handshake, up to
// loki-timeout): the plugin still exits within SHUTDOWN_FLUSH_SECONDS + 1 s of SIGTERM, its
// cursors persisted first (found by review: Stop took loki-timeout per client).
TEST_F(PluginIntegration, SigtermExitsInTimeWhileAPushIsStuckInATlsHandshake) {
  daemon_.reset();
  daemon_ = std::make_unique<FakeDaemon>(SKALD_BINARY,
                                         std::vector<std::string>{"SHUTDOWN_FLUSH_SECONDS=1"});
  ScriptedHttpPeer silent;
  ScriptedHttpPeer::Script nothing;
  nothing.answer = "";
  nothing.close_after = false;
  ASSERT_TRUE(silent.Start(nothing));  // reads a request that never ends: answers nothing
  FakeDaemon::Container stuck, fine;
  ASSERT_EQ(daemon_->StartContainer(
                stuck, {{"loki-url", "https://127.0.0.1:" + std::to_string(silent.port()) +
                                         "/loki/api/v1/push"},
                        {"loki-timeout", "60s"},
                        {"loki-tls-insecure-skip-verify", "true"},
                        {"loki-batch-wait", "100ms"}}),
            "");
  ASSERT_EQ(daemon_->StartContainer(fine, Opts()), "");
  daemon_->WriteLine(stuck, "never delivered");
  daemon_->WriteLine(fine, "delivered");
  ASSERT_TRUE(loki_.WaitForEntries(1, 10s));
  std::this_thread::sleep_for(500ms);  // the stuck push is in its handshake
  const auto start = std::chrono::steady_clock::now();
  const int status = daemon_->Signal(SIGTERM, 30s);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_LT(took, 2500ms) << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                          << " ms; SHUTDOWN_FLUSH_SECONDS=1, loki-timeout=60s";
  // The delivered line's cursor was persisted: a restart does not send it again.
  daemon_->KillAndRestartPlugin();
  std::this_thread::sleep_for(1s);
  EXPECT_EQ(loki_.TotalEntries(), 1u);
  EXPECT_EQ(loki_.Duplicates(), 0u);
}

// Two installed copies (say `skald` and an alias `loki`) sharing a state directory would
// replay each other's journals: the second refuses every container, naming what to set.
TEST_F(PluginIntegration, ASecondCopyOnTheSameStateDirectoryRefusesContainers) {
  FakeDaemon::Container first;
  ASSERT_EQ(daemon_->StartContainer(first, Opts()), "");
  FakeDaemon second(SKALD_BINARY, {"STATE_DIR=" + daemon_->dir() + "/state"});
  FakeDaemon::Container c;
  const std::string err = second.StartContainer(c, Opts());
  EXPECT_THAT(err, HasSubstr("STATE_DIR=" + daemon_->dir() + "/state"));
  EXPECT_THAT(err, HasSubstr("METRICS_ADDR"));
  EXPECT_THAT(err, HasSubstr("another process holds"));
  second.StopContainer(c);
  // The first copy is not disturbed.
  daemon_->WriteLine(first, "first copy");
  EXPECT_TRUE(loki_.WaitForEntries(1, 10s));
  daemon_->StopContainer(first);
}

// A test build (every build with tests) says it has the fault switch; `make plugin` does not.
TEST(PluginBinary, VersionNamesTheVersionAndTheCommit) {
  FILE* p = popen((std::string(SKALD_BINARY) + " --version").c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[256] = {};
  const std::size_t n = fread(buf, 1, sizeof buf - 1, p);
  EXPECT_EQ(pclose(p), 0);
  const std::string out(buf, n);
  EXPECT_THAT(
      out, ::testing::MatchesRegex("skald [0-9]+\\.[0-9]+\\.[0-9]+ \\(commit [0-9a-f]+(-dirty)?\\)"
                                   "( test build, with the fault switch)?\n"))
      << out;
}

class PluginWideDefaults : public PluginIntegration {
 protected:
  void SetUp() override {
    ASSERT_TRUE(loki_.Start());
    extra_env_ = {"LOKI_URL=" + loki_.PushUrl(), "LOKI_BATCH_WAIT=100ms"};
    daemon_ = std::make_unique<FakeDaemon>(SKALD_BINARY, extra_env_);
  }
};

TEST_F(PluginWideDefaults, ServeAContainerThatGivesNoUrl) {
  FakeDaemon::Container c;
  ASSERT_EQ(daemon_->StartContainer(c, {}), "");
  daemon_->WriteLine(c, "configured once for the fleet");
  daemon_->StopContainer(c);
  ASSERT_TRUE(loki_.WaitForEntries(1, 10s));
}

}  // namespace
}  // namespace skald::testkit

namespace skald::testkit {
namespace {

// Voluntary context switches of every thread of `pid` (how often its threads went to sleep).
long long VoluntarySwitches(pid_t pid) {
  long long total = 0;
  const std::string task_dir = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& task : std::filesystem::directory_iterator(task_dir)) {
    std::ifstream in(task.path() / "status");
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) total += std::stoll(line.substr(24));
    }
  }
  return total;
}

// An idle plugin sleeps: no maintenance tick, shipping timer or pool timeout fires while
// nothing changes, with stopped containers' journals kept and their Loki client still alive.
// (It used to wake up about 15 times a second: a 100 ms tick and a 200 ms shipping timer.)
TEST_F(PluginIntegration, AnIdlePluginDoesNotWakeUp) {
  for (int i = 0; i < 20; ++i) {
    FakeDaemon::Container c;
    ASSERT_EQ(daemon_->StartContainer(c, Opts()), "");
    daemon_->WriteLine(c, "line of container " + std::to_string(i));
    ASSERT_EQ(daemon_->StopContainer(c), "");
  }
  ASSERT_TRUE(loki_.WaitForEntries(20, 20s));
  ASSERT_TRUE([&] {
    for (int i = 0; i < 1000; ++i) {
      if (daemon_->Metric("skald_streams_live") == 0) return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }()) << "the streams did not end";
  std::this_thread::sleep_for(1500ms);  // the last cursors, the budget check after the streams
  const long long before = VoluntarySwitches(daemon_->pid());
  std::this_thread::sleep_for(3s);
  const long long woke = VoluntarySwitches(daemon_->pid()) - before;
  EXPECT_LE(woke, 4) << "the idle plugin woke up " << woke << " times in 3 s";
}

// The API keeps a connection for the next request, as dockerd expects (it keeps its own open),
// without polling it while it is idle. (Its HTTP library used to poll an idle connection every
// 10 ms, so each connection carried one request.)
TEST_F(PluginIntegration, TheApiKeepsAConnectionWithoutPollingIt) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", daemon_->socket().c_str());
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  timeval timeout{10, 0};  // a liveness bound: each answer comes at once
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  const std::string request =
      "POST /LogDriver.Capabilities HTTP/1.1\r\nHost: plugin\r\nContent-Length: 3\r\n\r\n{}\n";
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(::write(fd, request.data(), request.size()), static_cast<ssize_t>(request.size()));
    HttpResponseReader reader;
    char buf[4096];
    while (reader.state() == HttpResponseReader::State::kReading) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      ASSERT_GT(n, 0) << "request " << i << ": the connection ended before the answer";
      reader.Feed(std::string_view(buf, static_cast<std::size_t>(n)));
    }
    ASSERT_EQ(reader.state(), HttpResponseReader::State::kDone) << reader.error();
    EXPECT_THAT(reader.body(), HasSubstr("\"ReadLogs\""));
    EXPECT_TRUE(reader.keeps_connection()) << "request " << i;
  }
  std::this_thread::sleep_for(200ms);
  const long long before = VoluntarySwitches(daemon_->pid());
  std::this_thread::sleep_for(2s);
  const long long woke = VoluntarySwitches(daemon_->pid()) - before;
  EXPECT_LE(woke, 4) << "the plugin woke up " << woke << " times in 2 s with an idle connection";
  // Still served after the idle time.
  ASSERT_EQ(::write(fd, request.data(), request.size()), static_cast<ssize_t>(request.size()));
  HttpResponseReader later;
  char buf[4096];
  while (later.state() == HttpResponseReader::State::kReading) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    ASSERT_GT(n, 0) << "the idle connection was closed";
    later.Feed(std::string_view(buf, static_cast<std::size_t>(n)));
  }
  EXPECT_EQ(later.status(), 200);
  ::close(fd);
  // A client that keeps its connections (as dockerd does) gets every answer.
  daemon_->KeepAlive(true);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(daemon_->Call("Capabilities", nlohmann::json::object()).value("Err", ""), "");
  }
}

}  // namespace
}  // namespace skald::testkit
