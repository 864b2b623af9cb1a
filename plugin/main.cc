// skald: a Docker logging plugin that ships container logs to Grafana Loki.
//
// Wiring only: flags and environment -> the plugin API socket (bound first), the driver, the
// metrics endpoint; SIGTERM/SIGINT flush what can be sent within a few seconds, then exit.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "plugin/driver.h"
#include "plugin/log_options.h"
#include "plugin/metrics.h"
#include "plugin/metrics_http_server.h"
#include "plugin/plugin_api_server.h"

namespace {

std::string EnvOr(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : fallback;
}

void Usage() {
  std::puts(
      "usage: skald [--socket PATH]   serve the Docker logging-plugin API\n"
      "       skald options           print every --log-opt as a markdown table\n"
      "environment: METRICS_ADDR (127.0.0.1:9555; empty = off), LOG_LEVEL (info),\n"
      "             SHUTDOWN_FLUSH_SECONDS (5), and plugin-wide option defaults such as\n"
      "             LOKI_URL (see `skald options`)");
}

}  // namespace

int main(int argc, char** argv) {
  std::string socket_path = EnvOr("SKALD_SOCKET", "/run/docker/plugins/skald.sock");
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "options") {
      std::fputs(skald::OptionsMarkdownTable().c_str(), stdout);
      return 0;
    }
    if (arg == "--socket" && i + 1 < argc) {
      socket_path = argv[++i];
    } else {
      Usage();
      return arg == "-h" || arg == "--help" ? 0 : 2;
    }
  }

  spdlog::set_level(spdlog::level::from_str(EnvOr("LOG_LEVEL", "info")));
  signal(SIGPIPE, SIG_IGN);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);  // every thread inherits this

  skald::MetricsRegistry metrics;
  skald::DriverConfig config;
  config.env_defaults = skald::EnvDefaultsFromEnvironment();
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) config.hostname = host;
  skald::Driver driver(config, metrics);

  skald::PluginApiServer api(driver);
  if (!api.Bind(socket_path)) return 1;
  api.Start();
  spdlog::info("skald listening on {}", socket_path);

  skald::MetricsHttpServer metrics_server(metrics, [&driver] { driver.UpdateGauges(); });
  std::string metrics_addr = EnvOr("METRICS_ADDR", "127.0.0.1:9555");
  if (!metrics_addr.empty()) metrics_server.Start(metrics_addr);

  int sig = 0;
  sigwait(&stop_signals, &sig);
  int flush_seconds = std::atoi(EnvOr("SHUTDOWN_FLUSH_SECONDS", "5").c_str());
  spdlog::info("signal {}: flushing for at most {} s", strsignal(sig), flush_seconds);
  api.Stop();
  driver.Shutdown(std::chrono::seconds(flush_seconds));
  metrics_server.Stop();
  return 0;
}
