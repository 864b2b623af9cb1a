// Support for the end-to-end tests: a real dockerd, a real Loki, the installed skald plugin.
//
// Tests may shell out (the plugin may not): RunCommand runs a program with a deadline and
// captures its output. Docker helpers wrap the docker CLI; LokiQuery is a small client for
// Loki's query API (counts, paginated query_range, labels, series) and its JSON push API
// (used only to check the harness itself). E2eEnv is the process-wide state: one Loki per
// test process (started on first use from tests/e2e/loki/start-loki.sh, or reused from
// SKALD_E2E_LOKI_URL), the test image, and the plugin check.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skald::e2e {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------------------------
// Commands

struct CommandResult {
  int exit_code = -1;  // -1 when killed by a signal or timed out
  bool timed_out = false;
  std::string out;
  std::string err;
  std::chrono::milliseconds duration{0};

  bool ok() const { return exit_code == 0 && !timed_out; }
  // "`cmd` exited 1 after 12 ms; stdout: ...; stderr: ..." for assertion messages.
  std::string Describe() const;
  std::string command;
};

// Runs argv[0] (looked up in PATH) with the given arguments, no shell. Output is captured
// until the child exits (grandchildren that keep the pipes open do not hold us up). On
// timeout the child's process group is killed.
CommandResult RunCommand(const std::vector<std::string>& argv,
                         std::chrono::milliseconds timeout = 120s);

// `sh -c script`.
CommandResult RunShell(const std::string& script, std::chrono::milliseconds timeout = 120s);

// ---------------------------------------------------------------------------------------------
// Small utilities

// A name unique across processes and runs: "<prefix>-<pid>-<n>-<random hex>", lowercase,
// valid as a container name, compose project name and Loki label value.
std::string UniqueName(std::string_view prefix);

// The source tree (compiled in; SKALD_SOURCE_DIR in the environment overrides it).
std::string SourceDir();

// A TCP port on 127.0.0.1 that nothing listens on right now.
int FreeTcpPort();
bool TcpPortOpen(int port);

// Polls `pred` every `interval` until it returns true or `timeout` passes; returns the last
// result of `pred`.
bool WaitUntil(const std::function<bool()>& pred, std::chrono::milliseconds timeout,
               std::chrono::milliseconds interval = 250ms);

std::vector<std::string> SplitLines(std::string_view text);

// `s` without leading and trailing white space.
std::string Trim(std::string s);

// getenv(name), or `fallback` when unset or empty.
std::string EnvOr(const char* name, std::string_view fallback);

// ---------------------------------------------------------------------------------------------
// Docker

CommandResult Docker(const std::vector<std::string>& args,
                     std::chrono::milliseconds timeout = 120s);

// Puts /etc/docker/daemon.json back as it was when this was made, when it goes out of scope:
// dockerd is restarted on the saved copy (tests/e2e/restart-dockerd.sh --daemon-json), or
// without a file when there was none; a failure is a test failure. Make it before the test
// changes the file (through the same script).
class DaemonJsonRestorer {
 public:
  DaemonJsonRestorer();
  ~DaemonJsonRestorer();
  DaemonJsonRestorer(const DaemonJsonRestorer&) = delete;
  DaemonJsonRestorer& operator=(const DaemonJsonRestorer&) = delete;

 private:
  std::string saved_;  // the copy; empty: there was no daemon.json
};

// Removes the named containers (docker rm -f) when it goes out of scope.
class ContainerGuard {
 public:
  ContainerGuard() = default;
  explicit ContainerGuard(std::string name) { Add(std::move(name)); }
  ~ContainerGuard();
  ContainerGuard(const ContainerGuard&) = delete;
  ContainerGuard& operator=(const ContainerGuard&) = delete;
  void Add(std::string name) { names_.push_back(std::move(name)); }
  // Removes them now (docker rm -f); later calls remove only names added since.
  void RemoveAll();

 private:
  std::vector<std::string> names_;
};

// `docker wait NAME` with a deadline; the container's exit code, or nullopt on timeout/error.
std::optional<int> WaitContainerExit(const std::string& name, std::chrono::milliseconds timeout);

// `docker inspect --format FORMAT NAME`, trimmed; nullopt if the object does not exist.
std::optional<std::string> DockerInspect(const std::string& name, const std::string& format);

// The process of the installed managed plugin `plugin` (matched by its id in the process's
// cgroup), or nullopt.
// `plugin` "" means the plugin under test (E2eEnv::Driver()), here and below.
std::optional<int> PluginPid(const std::string& plugin = "");
// VmRSS of a process in kB, or nullopt.
std::optional<long> VmRssKb(int pid);
// Open sockets of a process (its /proc/PID/fd entries that are sockets), or nullopt.
std::optional<int> SocketCount(int pid);
// The host directory Docker keeps for the plugin's propagated mount (its data root's
// plugins/ID/propagated-mount), or nullopt.
std::optional<std::string> PluginPropagatedMount(const std::string& plugin = "");
// Where the plugin keeps its journals on the host: its STATE_DIR, seen through the propagated
// mount (/var/lib/skald inside).
std::optional<std::string> PluginStateDir(const std::string& plugin = "");

// ---------------------------------------------------------------------------------------------
// Loki

struct LokiEntry {
  std::map<std::string, std::string> labels;
  int64_t timestamp_ns = 0;
  std::string line;
};

using LabelSet = std::map<std::string, std::string>;

// A client for one Loki, base URL like "http://127.0.0.1:3100". Query methods throw
// std::runtime_error with Loki's answer when a request fails.
class LokiQuery {
 public:
  explicit LokiQuery(std::string base_url);

  const std::string& base_url() const { return base_url_; }
  std::string PushUrl() const { return base_url_ + "/loki/api/v1/push"; }

  // GET /ready answers 200 "ready".
  bool Ready(std::string* why = nullptr) const;

  // sum(count_over_time(SELECTOR [RANGE])) at now, via /loki/api/v1/query; 0 when nothing
  // matches. `selector` may carry line filters: {a="b"} |= "x".
  uint64_t Count(const std::string& selector, const std::string& range = "1h") const;
  // sum(bytes_over_time(SELECTOR [RANGE])): the bytes of the lines that match.
  uint64_t Bytes(const std::string& selector, const std::string& range = "1h") const;

  // Every entry matching `selector` from `since` to now, oldest first, paging through
  // /loki/api/v1/query_range `page_limit` entries at a time (Loki answers at most 5000).
  // Stops with an error past `max_entries`.
  std::vector<LokiEntry> QueryAll(const std::string& selector,
                                  std::chrono::system_clock::duration since = 1h,
                                  std::size_t page_limit = 5000,
                                  std::size_t max_entries = 2'000'000) const;

  // /loki/api/v1/label/NAME/values over the last `since`.
  std::vector<std::string> LabelValues(const std::string& name,
                                       std::chrono::system_clock::duration since = 1h) const;

  // /loki/api/v1/series: the label sets of the streams matching `selector`.
  std::vector<LabelSet> Series(const std::string& selector,
                               std::chrono::system_clock::duration since = 1h) const;

  // Waits until Count(selector) >= want (or timeout); returns the last count seen.
  uint64_t WaitForCount(const std::string& selector, uint64_t want,
                        std::chrono::milliseconds timeout) const;

  // JSON push of one stream (harness self-checks only). Returns the HTTP status.
  int PushJson(const LabelSet& labels,
               const std::vector<std::pair<int64_t, std::string>>& entries) const;

 private:
  std::string Get(const std::string& path,
                  const std::vector<std::pair<std::string, std::string>>& params) const;
  std::string base_url_;
  std::string host_;
  int port_ = 80;
};

// Quotes a label value for a LogQL selector: "a\"b".
std::string LogqlQuote(std::string_view value);

// ---------------------------------------------------------------------------------------------
// Prometheus text exposition (the plugin's /metrics)

// Sums every sample of each metric family by name (labels ignored). Comments are skipped.
std::map<std::string, double> ParsePrometheusTotals(std::string_view text);
// The value of one series, written as in the exposition: `name` or `name{a="b"}`; 0 when absent.
double PrometheusSeries(std::string_view text, std::string_view series);

// GET http://127.0.0.1:PORT/metrics body, or nullopt when it cannot be fetched. `port` 0 is
// the plugin under test's (E2eEnv::MetricsPort()).
std::optional<std::string> FetchMetrics(int port = 0);

// A Loki of its own (tests/e2e/loki/start-loki.sh in a temp dir), stopped and removed when it
// goes out of scope. For scenarios that start and stop Loki; most tests share E2eEnv's.
class ScopedLoki {
 public:
  // Starts Loki on 127.0.0.1:http_port and waits until it is ready; throws on failure.
  explicit ScopedLoki(int http_port);
  ~ScopedLoki();
  ScopedLoki(const ScopedLoki&) = delete;
  ScopedLoki& operator=(const ScopedLoki&) = delete;

  LokiQuery& query() { return query_; }

 private:
  std::string data_dir_;
  LokiQuery query_;
};

// ---------------------------------------------------------------------------------------------
// Process-wide environment

class E2eEnv {
 public:
  static E2eEnv& Get();

  // The shared Loki: started on first call (or SKALD_E2E_LOKI_URL). Throws if it cannot start.
  LokiQuery& Loki();
  // Ensures skald-test:latest exists (tests/e2e/image/build-image.sh). Throws on failure.
  const std::string& TestImage();
  // Empty when `docker plugin inspect skald` shows it enabled; otherwise a message that says
  // what is wrong and to run `make install`.
  std::string PluginProblem();
  // The plugin name to pass to --log-driver (SKALD_E2E_DRIVER overrides, default "skald").
  std::string Driver() const;
  // Its metrics port (SKALD_E2E_METRICS_PORT overrides, default 9555).
  int MetricsPort() const;
  // The plugin bundle the plugin was created from (SKALD_E2E_BUNDLE; default
  // build-release/plugin-bundle in the source tree).
  std::string Bundle() const;

  // Stops the Loki this process started (atexit does it too).
  void Shutdown();

 private:
  E2eEnv() = default;
  std::optional<LokiQuery> loki_;
  std::string loki_data_dir_;
  bool loki_started_here_ = false;
  std::string image_;
};

// ---------------------------------------------------------------------------------------------
// Fixtures

// Base for tests that need docker and the test image, and perhaps Loki (started on the first
// loki() call), but not the plugin. Containers named through NewContainer() are removed after
// the test.
class DockerLokiTest : public ::testing::Test {
 protected:
  void SetUp() override;

  LokiQuery& loki();
  const std::string& image() const { return image_; }
  // A unique container name (prefix from the test name) that TearDown removes.
  std::string NewContainer(std::string_view tag = "");

  ContainerGuard guard_;
  LokiQuery* loki_ = nullptr;
  std::string image_;
};

// Base for scenarios against the installed plugin: SetUp fails the test with a message saying
// to run `make install` when the plugin is missing or disabled.
class SkaldTest : public DockerLokiTest {
 protected:
  void SetUp() override;

  // `docker run --name NAME --network none --log-driver skald --log-opt loki-url=<our Loki>
  //  OPTS... IMAGE CMD...`. `loki_url`: nullopt = our Loki's push URL; "" = no loki-url.
  std::vector<std::string> RunArgs(const std::string& name, const std::vector<std::string>& opts,
                                   const std::vector<std::string>& cmd,
                                   std::optional<std::string> loki_url = std::nullopt) const;

  // {container_name="NAME"} plus extra matchers, e.g. Selector(n, "source=\"stderr\"").
  static std::string Selector(const std::string& container, const std::string& extra = "");

  std::string driver_;
};

}  // namespace skald::e2e
