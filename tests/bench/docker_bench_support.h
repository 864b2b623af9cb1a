// What the real-Docker benchmarks (docker_bench, docker_fleet_bench) share: a Loki of their
// own, Grafana's Go driver (and a drain-only plugin) installed as managed plugins for the run, and
// finding a managed plugin's process.
#pragma once

#include <sys/types.h>

#include <string>

#include "tests/e2e/e2e_support.h"

namespace skald::bench {

// Throws std::runtime_error describing `r` unless it succeeded.
void Must(const e2e::CommandResult& r);

// An end-to-end test process (they install and restart the skald plugin): "PID: cmdline", or "".
std::string RunningE2eTests();

// `docker plugin inspect` Id of `plugin`, or "".
std::string PluginId(const std::string& plugin);
// The process of a managed plugin: the one whose cgroup names the plugin's id; -1 when none.
pid_t PluginPid(const std::string& plugin_id);

// Loki's own count of lines its distributor accepted (all tenants); -1 when it cannot be read.
double LokiLinesReceived(int port);

// Push requests Loki answered on /loki/api/v1/push (any status); -1 when they cannot be read.
double LokiPushRequests(int port);

// Loki (tests/e2e/loki/start-loki.sh) in `dir` on `port`, stopped when the object goes.
class LokiProcess {
 public:
  LokiProcess(std::string dir, int port);
  ~LokiProcess();
  LokiProcess(const LokiProcess&) = delete;
  LokiProcess& operator=(const LokiProcess&) = delete;
  std::string PushUrl() const;
  e2e::LokiQuery Query() const;
  int port() const { return port_; }

 private:
  std::string dir_;
  int port_;
};

// A static binary as the managed plugin `name`, from a rootfs holding just the binary (at
// /bin/<entry>) and the config.json of `config_dir` (tests/bench/go-driver/: Grafana's Go driver
// of tests/e2e/loki/build-go-driver.sh; tests/bench/drain-plugin/: drain_plugin.cc), for the
// lifetime of the object: disabled and removed at the end.
class BenchPlugin {
 public:
  BenchPlugin(const std::string& binary, const std::string& entry, const std::string& config_dir,
              std::string name);
  ~BenchPlugin();
  BenchPlugin(const BenchPlugin&) = delete;
  BenchPlugin& operator=(const BenchPlugin&) = delete;
  const std::string& name() const { return name_; }

 private:
  void Remove();
  std::string name_;
  std::string bundle_;
};

}  // namespace skald::bench
