// skald: a Docker logging plugin that ships container logs to Grafana Loki.
//
// Wiring only: flags and environment -> the plugin API socket (bound first), the driver, the
// metrics endpoint; SIGTERM/SIGINT flush what can be sent within a few seconds, then exit.
#include <absl/synchronization/mutex.h>
#include <malloc.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SKALD_LEAK_CHECK_AT_EXIT 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(SKALD_LEAK_CHECK_AT_EXIT)
#define SKALD_LEAK_CHECK_AT_EXIT 1
#endif
#ifdef SKALD_LEAK_CHECK_AT_EXIT
#include <sanitizer/lsan_interface.h>
#endif

#include "plugin/api/plugin_api_server.h"
#include "plugin/cli/cli.h"
#include "plugin/common/fault_injection.h"
#include "plugin/common/user_files.h"
#include "plugin/config/log_options.h"
#include "plugin/config/plugin_settings.h"
#include "plugin/driver/driver.h"
#include "plugin/journal/journal_store.h"
#include "plugin/metrics/metrics.h"
#include "plugin/metrics/metrics_http_server.h"

namespace {

std::string EnvOr(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : fallback;
}

#ifndef SKALD_VERSION
#define SKALD_VERSION "unknown"
#endif
#ifndef SKALD_COMMIT
#define SKALD_COMMIT "unknown"
#endif

std::string Version() {
  // A test build says so: its end-to-end tests need the fault switch
  // (plugin/common/fault_injection.h).
  return std::string("skald ") + SKALD_VERSION + " (commit " + SKALD_COMMIT + ")" +
         (skald::FaultInjectionCompiledIn() ? " test build, with the fault switch" : "");
}

// The plugin settings from the environment; the log level is set from them first, so that a
// bad value's message is logged.
skald::PluginSettings ReadSettings() {
  std::vector<std::string> problems;
  const skald::PluginSettings settings = skald::ReadPluginSettings(std::getenv, &problems);
  spdlog::set_level(spdlog::level::from_str(settings.log_level));
  for (const std::string& problem : problems) spdlog::error("{}", problem);
  return settings;
}

// Each container holds a few descriptors (FIFO, segment, API connection): take all the process
// may have.
void RaiseOpenFileLimit() {
  if (rlimit files{}; getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
}

// SIGPIPE is ignored; SIGTERM and SIGINT are blocked in every thread (each inherits the mask)
// and waited for by main.
sigset_t BlockStopSignals() {
  signal(SIGPIPE, SIG_IGN);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);  // every thread inherits this
  return stop_signals;
}

// The driver's configuration from the plugin settings and the environment; prepares the
// directory of the files options name.
skald::DriverConfig DriverConfigFrom(const skald::PluginSettings& settings) {
  skald::DriverConfig config;
  config.env_defaults = skald::EnvDefaultsFromEnvironment();
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) config.hostname = host;
  config.state_dir = settings.state_dir;
  // Files that options name are read from STATE_DIR/files only (plugin/common/user_files.h),
  // whatever becomes of the journals below.
  skald::SetUserFilesRoot(
      ((config.state_dir.empty() ? skald::PluginSettings{}.state_dir : config.state_dir) / "files")
          .string());
  config.journal_max_total_bytes = settings.journal_max_bytes;
  config.journal_max_age = settings.journal_max_age;
  if (!config.state_dir.empty()) {
    // Where users put the files options name (tokens, TLS files, a stage file): in the managed
    // plugin the one host directory it sees is STATE_DIR (see plugin/common/user_files.h).
    std::error_code ec;
    std::filesystem::create_directories(config.state_dir / "files", ec);
    if (!ec) {
      std::filesystem::permissions(config.state_dir / "files", std::filesystem::perms::owner_all,
                                   std::filesystem::perm_options::replace, ec);
    }
  }
  return config;
}

// The driver, with journals when the state directory can hold them, else without: the reason
// is logged and `config.state_dir` cleared (a state directory another copy holds makes this
// copy refuse every container).
std::unique_ptr<skald::Driver> StartDriver(skald::DriverConfig& config,
                                           skald::MetricsRegistry& metrics) {
  std::unique_ptr<skald::Driver> driver_ptr;
  try {
    driver_ptr = std::make_unique<skald::Driver>(config, metrics);
  } catch (const skald::JournalStore::InUse& e) {
    // Sharing it, each copy would replay the other's journals: this one logs nothing.
    config.refuse_reason =
        "skald: this copy of the plugin cannot use STATE_DIR=" + config.state_dir.string() + ": " +
        e.what() +
        ". Give each copy its own state directory and metrics port: docker plugin disable "
        "NAME; docker plugin set NAME STATE_DIR=/var/lib/skald METRICS_ADDR=127.0.0.1:9556; "
        "docker plugin enable NAME (in the managed plugin /var/lib/skald is a directory Docker "
        "keeps for each copy)";
    spdlog::critical("{}", config.refuse_reason);
    config.state_dir.clear();
    driver_ptr = std::make_unique<skald::Driver>(config, metrics);
  } catch (const std::system_error& e) {
    spdlog::critical(
        "cannot keep journals in STATE_DIR={}: {}; running without them (no docker logs, "
        "lines are lost if Loki is away for long or the plugin restarts)",
        config.state_dir.string(), e.what());
    config.state_dir.clear();
    driver_ptr = std::make_unique<skald::Driver>(config, metrics);
  }
  return driver_ptr;
}

// Stops the driver within the flush time and a little more, whatever its clients do (one may
// be stuck connecting to a Loki that does not answer): the cursors acknowledged so far are
// persisted first, the rest is replayed at the next start.
void StopWithin(skald::Driver& driver, int flush_seconds) {
  // Shared with the stopping thread, which may outlive this call (it is never joined).
  struct Done {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
  };
  auto done = std::make_shared<Done>();
  std::thread([&driver, done, flush_seconds] {
    driver.Shutdown(std::chrono::seconds(flush_seconds));
    std::lock_guard lock(done->mu);
    done->done = true;
    done->cv.notify_all();
  }).detach();
  std::unique_lock lock(done->mu);
  if (!done->cv.wait_for(lock, std::chrono::seconds(flush_seconds) + std::chrono::milliseconds(700),
                         [&] { return done->done; })) {
    spdlog::warn(
        "stopping took longer than SHUTDOWN_FLUSH_SECONDS={}: exiting now; what was "
        "not delivered stays in the journals",
        flush_seconds);
  }
}

// Exits without running destructors: workers of the API and metrics servers may still be
// closing their connections (the cursors are persisted).
[[noreturn]] void ExitNow() {
  skald::LeakIfAsked();  // test builds only (plugin/common/fault_injection.h)
  spdlog::info("stopped");
  spdlog::shutdown();
  std::fflush(nullptr);
  // Workers of the API and metrics servers may still be closing their connections: exit
  // without running destructors under them (the cursors are persisted).
#ifdef SKALD_LEAK_CHECK_AT_EXIT
  // _exit skips LeakSanitizer's check at exit, so the sanitizer build runs it here: a leak is
  // reported and the exit status is LeakSanitizer's.
  __lsan_do_leak_check();
#endif
  _exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  // Debian's abseil is built with the lock-order graph on (absl::Mutex checks every
  // acquisition for a potential deadlock): ten times the cost of a lock, on every batch of
  // every container. The tests keep it on; the lock order is also checked by the compiler
  // (-Wthread-safety).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // glibc raises its mmap threshold each time a large block is freed, and its trim threshold
  // with it (to twice that): a per-thread arena then keeps megabytes of freed memory at its
  // top, which malloc_trim does not give back for such an arena. Fixed thresholds keep each
  // arena's free top small, so an idle plugin returns to its start's memory after a burst.
  // A thread's arena gives its top back only when a free leaves more than the trim threshold
  // plus the top pad there (malloc_trim trims the main arena's top alone): each of the ten or
  // so arenas a burst's threads used kept up to 384 KiB with glibc's 128 KiB pad and a 256 KiB
  // threshold (1.8 MB in all after a fleet of containers); with 64 KiB for both they keep
  // 1.2 MB, at no cost a 200k-line run can tell.
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
  mallopt(M_TRIM_THRESHOLD, 64 * 1024);
  mallopt(M_TOP_PAD, 64 * 1024);
  // The plugin's own log lines, while a command runs here, go to stderr and only when they are
  // errors (all commands print their own report).
  spdlog::set_level(spdlog::level::off);
  const skald::CommandLine command_line =
      skald::RunCommandLine({argv + 1, argv + argc}, Version(), std::cin, std::cout, std::cerr);
  if (!command_line.serve) return command_line.status;
  const std::string socket_path = !command_line.socket_path.empty()
                                      ? command_line.socket_path
                                      : EnvOr("SKALD_SOCKET", "/run/docker/plugins/skald.sock");

  const skald::PluginSettings settings = ReadSettings();
  RaiseOpenFileLimit();
  sigset_t stop_signals = BlockStopSignals();

  skald::MetricsRegistry metrics;
  skald::DriverConfig config = DriverConfigFrom(settings);
  std::unique_ptr<skald::Driver> driver_ptr = StartDriver(config, metrics);
  skald::Driver& driver = *driver_ptr;

  skald::PluginApiServer api(driver);
  if (!config.state_dir.empty()) {
    // docker logs (ReadLogs) is served from the journals; without them the daemon's own
    // cache serves it.
    api.SetJournalResolver(
        [&driver](const skald::ContainerInfo& info) { return driver.JournalFor(info); });
  }
  if (!api.Bind(socket_path)) return 1;
  // The daemon reaches the plugin before any journal is replayed: a journal whose replay ends
  // the process cannot keep the socket from answering (plugin/journal/replay_guard.h).
  api.Start();
  driver.RecoverInBackground();
  spdlog::info("{} listening on {}", Version(), socket_path);

  skald::MetricsHttpServer metrics_server(
      metrics, [&driver] { driver.UpdateGauges(); },
      [&driver, &api] {
        return skald::HealthReport{api.Serving(), driver.ClientsHealth(),
                                   driver.QuarantinedJournals()};
      });
  if (!settings.metrics_addr.empty()) metrics_server.Start(settings.metrics_addr);

  int sig = 0;
  sigwait(&stop_signals, &sig);
  const auto flush_seconds = static_cast<int>(settings.shutdown_flush.count());
  spdlog::info("signal {}: flushing for at most {} s", strsignal(sig), flush_seconds);
  // The daemon kills a plugin that does not exit soon: nothing here waits for a client
  // (idle keep-alive connections, `docker logs` readers) beyond the flush.
  api.BeginStop();
  StopWithin(driver, flush_seconds);
  ExitNow();
}
