// docker_fleet_bench: many short containers and many retained journals on the real dockerd,
// skald and Grafana's Go driver side by side, both pushing to one real Loki.
//
// skald runs as a copy of its own, the managed plugin `skald-bench-fleet` created from
// --skald-bundle (make plugin), with its metrics on a free port and its journals in the
// directory Docker keeps for it; the Go driver as `skald-bench-go-driver`
// (tests/e2e/loki/build-go-driver.sh). Both are disabled and removed at the end, with the
// containers the bench made and skald's journals.
//
// Runs (--runs NxM,...): N containers (`loggen --json --lines M` of the e2e image) started at
// once (--parallel `docker run -d` at a time), per driver, interleaved. Measured: the plugin
// process's CPU-seconds (utime + stime from /proc, all threads) from before the first
// `docker run` until Loki holds every line of the run (for skald also until its
// skald_streams_live gauge is back at 0: every stream ended, every cursor final), and the lines
// Loki holds for the run's containers (LogQL count over their names).
// Idle (--idle-s S): CPU and wake-ups (voluntary context switches summed over
// /proc/PID/task/*/status, per thread name) of each plugin over S seconds, nothing logging:
// first with no journal kept, then after the runs, then once the runs' Loki clients have
// retired (--settle-s S after the runs ended, over 5 s: is the plugin back to its start's RSS
// and threads?), then (skald) with --journals N journals of stopped containers kept: the
// plugin is disabled, one journal a run left is copied under new container ids until N are
// kept, and the plugin is enabled again (it finds them as after a host reboot).
//
//   docker_fleet_bench --skald-bundle DIR --go-driver PATH --loki-dir DIR [--loki-port P]
//                      [--runs 100x10,100x2000] [--parallel 5] [--journals 1000]
//                      [--idle-s 30] [--settle-s 75] [--drivers skald,go] [--json FILE]
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/bench/bench_cli.h"
#include "tests/bench/docker_bench_support.h"
#include "tests/bench/idle_stats.h"
#include "tests/bench/proc_stats.h"
#include "tests/e2e/e2e_support.h"
#include "tests/tools/random_hex.h"

namespace skald::bench {
namespace {

using json = nlohmann::json;
using e2e::Docker;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;
using testkit::RandomHex;

constexpr const char* kSkaldPlugin = "skald-bench-fleet";
constexpr const char* kGoPlugin = "skald-bench-go-driver";

struct Workload {
  int containers = 0;
  int lines = 0;
};

struct Options {
  std::string skald_bundle;
  std::string go_driver;
  std::string loki_dir;
  int loki_port = 0;
  std::vector<Workload> runs = {{100, 10}, {100, 2000}};
  int parallel = 5;
  int journals = 1000;
  int idle_s = 30;
  // skald frees a Loki client no stream used for 60 s (its threads go with it), then gives
  // the freed memory back to the system.
  int settle_s = 75;
  std::string drivers = "skald,go";
  std::string json_path;
};

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// skald, copy of its own: created from the bundle, metrics on `metrics_port`.
class SkaldPlugin {
 public:
  SkaldPlugin(const std::string& bundle, int metrics_port) {
    Remove();
    Must(Docker({"plugin", "create", kSkaldPlugin, bundle}, 300s));
    Must(Docker(
        {"plugin", "set", kSkaldPlugin, "METRICS_ADDR=127.0.0.1:" + std::to_string(metrics_port)},
        60s));
    Must(Docker({"plugin", "enable", "--timeout", "0", kSkaldPlugin}, 120s));
  }
  ~SkaldPlugin() { Remove(); }
  SkaldPlugin(const SkaldPlugin&) = delete;
  SkaldPlugin& operator=(const SkaldPlugin&) = delete;
  static void Remove() {
    Docker({"plugin", "disable", "-f", kSkaldPlugin}, 60s);
    Docker({"plugin", "rm", "-f", kSkaldPlugin}, 60s);  // its journals with it
  }
};

struct Driver {
  std::string name;  // skald, go
  std::string plugin;
};

// N x M on `driver`: starts the containers (`parallel` at a time), waits for them to exit, for
// Loki to hold every line and (skald) for every stream to end; removes them.
json RunFleet(const Options& opt, const Driver& driver, const Workload& w, const std::string& image,
              const LokiProcess& loki, int skald_metrics_port) {
  const std::string prefix = "skald-fleet-" + driver.name + "-" + std::to_string(w.containers) +
                             "x" + std::to_string(w.lines) + "-" + std::to_string(getpid()) + "-" +
                             RandomHex(4);
  const pid_t pid = PluginPid(PluginId(driver.plugin));
  if (pid <= 0) throw std::runtime_error("cannot find the process of " + driver.plugin);
  const double received0 = LokiLinesReceived(loki.port());
  const double cpu0 = ProcessCpuSeconds(pid);
  const auto t0 = Clock::now();
  std::atomic<int> next{0};
  std::atomic<int> failed{0};
  std::mutex err_mu;
  std::string first_error;
  std::vector<std::thread> starters;
  for (int t = 0; t < std::max(1, opt.parallel); ++t) {
    starters.emplace_back([&] {
      for (int i = next++; i < w.containers; i = next++) {
        const std::string name = prefix + "-" + std::to_string(i);
        auto r =
            Docker({"run", "-d", "--name", name, "--network", "none", "--label", "skald-bench=1",
                    "--log-driver", driver.plugin, "--log-opt", "loki-url=" + loki.PushUrl(), image,
                    "loggen", "--json", "--lines", std::to_string(w.lines), "--prefix", name},
                   300s);
        if (!r.ok()) {
          ++failed;
          std::lock_guard lock(err_mu);
          if (first_error.empty()) first_error = r.Describe();
        }
      }
    });
  }
  for (auto& s : starters) s.join();
  const auto t_started = Clock::now();
  // Every container exited.
  for (int i = 0; i < w.containers; ++i) {
    e2e::WaitContainerExit(prefix + "-" + std::to_string(i), 600s);
  }
  const auto t_exited = Clock::now();
  const double expected = static_cast<double>(w.containers) * w.lines;
  // Loki's cheap counter until it has every line, or it has not moved for 10 s.
  double last = LokiLinesReceived(loki.port());
  auto last_change = Clock::now();
  while (last - received0 < expected && Clock::now() - last_change < 10s) {
    std::this_thread::sleep_for(100ms);
    const double now = LokiLinesReceived(loki.port());
    if (now != last) {
      last = now;
      last_change = Clock::now();
    }
  }
  const auto t_delivered = Clock::now();
  bool ended = true;
  if (driver.name == "skald") {
    ended = e2e::WaitUntil(
        [&] {
          auto text = e2e::FetchMetrics(skald_metrics_port);
          return text && e2e::PrometheusSeries(*text, "skald_streams_live") == 0;
        },
        120s, 100ms);
  }
  const auto cpu = CpuBetween(cpu0, ProcessCpuSeconds(pid));
  const auto t_end = Clock::now();
  std::this_thread::sleep_for(1s);  // duplicates, if any, right behind
  uint64_t delivered = 0;
  try {
    delivered = loki.Query().Count("{container_name=~" + e2e::LogqlQuote(prefix + "-.*") + "}");
  } catch (const std::exception& e) {
    std::cerr << "docker fleet: Loki query failed: " << e.what() << "\n";
  }
  const bool same_process = PluginPid(PluginId(driver.plugin)) == pid;
  // The containers go; skald keeps their journals (stopped containers', for docker logs).
  std::string ids;
  {
    auto r = Docker({"ps", "-aq", "--filter", "name=" + prefix}, 60s);
    for (const std::string& id : e2e::SplitLines(r.out)) {
      if (!id.empty()) Docker({"rm", "-f", id}, 60s);
    }
  }
  json r = {{"driver", driver.name},
            {"containers", w.containers},
            {"lines_per_container", w.lines},
            {"start_s", Seconds(t_started - t0)},
            {"exit_s", Seconds(t_exited - t0)},
            {"deliver_s", Seconds(t_delivered - t0)},
            {"end_s", Seconds(t_end - t0)},
            {"start_failures", failed.load()},
            {"delivered", delivered},
            {"expected", static_cast<uint64_t>(expected)},
            {"streams_ended", ended},
            {"all_delivered", delivered == static_cast<uint64_t>(expected)}};
  if (cpu && same_process) {
    r["plugin_cpu_s"] = *cpu;
    r["cpu_ms_per_container"] = *cpu * 1000.0 / w.containers;
  } else {
    r["error"] =
        "the plugin's process " + std::to_string(pid) + " ended during the run: no CPU figure";
  }
  if (!same_process) r["restarted"] = true;
  if (!first_error.empty()) r["start_error"] = first_error;
  return r;
}

// Copies journals under new container ids until `journals` are kept in `state_dir`.
int FillJournals(const std::string& state_dir, int journals) {
  const fs::path containers = fs::path(state_dir) / "containers";
  std::vector<fs::path> existing;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(containers, ec)) {
    if (e.is_directory()) existing.push_back(e.path());
  }
  if (existing.empty()) throw std::runtime_error("no journal to copy in " + containers.string());
  int kept = static_cast<int>(existing.size());
  for (int i = 0; kept < journals; ++i, ++kept) {
    fs::copy(existing[static_cast<std::size_t>(i) % existing.size()], containers / RandomHex(64),
             fs::copy_options::recursive, ec);
    if (ec) throw std::runtime_error("cannot copy a journal: " + ec.message());
  }
  return kept;
}

int Main(int argc, char** argv) {
  Options opt;
  const bool parsed =
      ParseFlags(argc, argv, "docker_fleet_bench", [&](const std::string& a, const std::string& v) {
        if (a == "--skald-bundle") {
          opt.skald_bundle = v;
        } else if (a == "--go-driver") {
          opt.go_driver = v;
        } else if (a == "--loki-dir") {
          opt.loki_dir = v;
        } else if (a == "--loki-port") {
          opt.loki_port = std::stoi(v);
        } else if (a == "--runs") {
          opt.runs.clear();
          for (const auto& [containers, lines] : WorkloadList(v, a)) {
            opt.runs.push_back({containers, lines});
          }
        } else if (a == "--parallel") {
          opt.parallel = std::stoi(v);
        } else if (a == "--journals") {
          opt.journals = std::stoi(v);
        } else if (a == "--idle-s") {
          opt.idle_s = std::max(1, std::stoi(v));
        } else if (a == "--settle-s") {
          opt.settle_s = std::max(0, std::stoi(v));
        } else if (a == "--drivers") {
          opt.drivers = v;
        } else if (a == "--json") {
          opt.json_path = v;
        } else {
          return false;
        }
        return true;
      });
  if (!parsed) return 2;
  auto wanted = [&](const std::string& d) {
    return ("," + opt.drivers + ",").find("," + d + ",") != std::string::npos;
  };
  if ((wanted("go") && opt.go_driver.empty()) || (wanted("skald") && opt.skald_bundle.empty()) ||
      opt.loki_dir.empty()) {
    std::cerr << "usage: docker_fleet_bench --skald-bundle DIR --go-driver PATH --loki-dir DIR\n"
                 "         [--loki-port P] [--runs 100x10,100x2000] [--parallel 5]\n"
                 "         [--journals 1000] [--idle-s 30] [--settle-s 75]\n"
                 "         [--drivers skald,go] [--json F]\n";
    return 2;
  }
  if (opt.loki_port == 0) opt.loki_port = e2e::FreeTcpPort();
  signal(SIGPIPE, SIG_IGN);
  json out = {{"runs_asked", json::array()},
              {"parallel", opt.parallel},
              {"journals", opt.journals},
              {"idle_s", opt.idle_s},
              {"settle_s", opt.settle_s}};
  for (const Workload& w : opt.runs) out["runs_asked"].push_back({w.containers, w.lines});
  {
    const std::string dir = fs::path(opt.go_driver).parent_path().filename();
    out["go_driver_version"] = dir.rfind("docker-driver-", 0) == 0 ? dir.substr(14) : dir;
  }
  const std::string image = e2e::E2eEnv::Get().TestImage();
  std::cerr << "docker fleet: starting Loki on 127.0.0.1:" << opt.loki_port << "\n";
  LokiProcess loki(opt.loki_dir, opt.loki_port);
  const int metrics_port = e2e::FreeTcpPort();
  std::optional<SkaldPlugin> skald;
  std::optional<BenchPlugin> go;
  std::vector<Driver> drivers;
  if (wanted("skald")) {
    std::cerr << "docker fleet: installing " << opt.skald_bundle << " as " << kSkaldPlugin << "\n";
    skald.emplace(opt.skald_bundle, metrics_port);
    drivers.push_back({"skald", kSkaldPlugin});
  }
  if (wanted("go")) {
    std::cerr << "docker fleet: installing Grafana's Go driver as " << kGoPlugin << "\n";
    go.emplace(opt.go_driver, "docker-driver", e2e::SourceDir() + "/tests/bench/go-driver",
               kGoPlugin);
    drivers.push_back({"go", kGoPlugin});
  }
  auto pids = [&] {
    std::map<std::string, pid_t> p;
    for (const Driver& d : drivers) p[d.name] = PluginPid(PluginId(d.plugin));
    return p;
  };
  auto print_idle = [](const std::string& what, const std::map<std::string, json>& m) {
    for (const auto& [name, r] : m) {
      std::string threads;
      const json by_thread = r.value("wakeups_per_s_by_thread", json::object());
      for (const auto& [t, rate] : by_thread.items()) {
        threads += " " + t + "=" + std::to_string(rate.get<double>()).substr(0, 5);
      }
      std::fprintf(stderr,
                   "docker fleet: idle %s, %-5s: %.3f%% of a core, %.2f wake-ups/s, RSS %.1f "
                   "MB (%d threads:%s)\n",
                   what.c_str(), name.c_str(), r.value("cpu_percent", -1.0),
                   r.value("wakeups_per_s", -1.0), r.value("rss_bytes", 0.0) / 1048576.0,
                   r.value("threads", 0), threads.c_str());
    }
  };
  bool ok = true;
  json idle = json::object();
  std::this_thread::sleep_for(5s);
  {
    auto m = MeasureIdle(pids(), opt.idle_s);
    print_idle("(nothing kept)", m);
    for (auto& [name, r] : m) idle["empty"][name] = r;
  }
  json runs = json::array();
  for (const Workload& w : opt.runs) {
    for (const Driver& d : drivers) {
      json r;
      try {
        r = RunFleet(opt, d, w, image, loki, metrics_port);
      } catch (const std::exception& e) {
        r = {{"driver", d.name},
             {"containers", w.containers},
             {"lines_per_container", w.lines},
             {"error", e.what()}};
      }
      std::fprintf(stderr,
                   "docker fleet: %-5s %d containers x %d lines: plugin CPU %.2f s (%.1f ms per "
                   "container), delivered %llu/%llu, %.1f s to deliver%s\n",
                   d.name.c_str(), w.containers, w.lines, r.value("plugin_cpu_s", 0.0),
                   r.value("cpu_ms_per_container", 0.0),
                   static_cast<unsigned long long>(r.value("delivered", 0ULL)),
                   static_cast<unsigned long long>(r.value("expected", 0ULL)),
                   r.value("deliver_s", 0.0), r.contains("error") ? "  FAILED" : "");
      if (r.contains("error")) std::cerr << "  " << r["error"].get<std::string>() << "\n";
      if (d.name == "skald" && (!r.value("all_delivered", false) || r.value("restarted", false) ||
                                !r.value("streams_ended", false))) {
        ok = false;  // only skald's losses fail the bench; the Go driver's are reported
      }
      runs.push_back(std::move(r));
    }
  }
  out["runs"] = runs;
  const auto runs_ended = Clock::now();
  std::this_thread::sleep_for(5s);
  {
    auto m = MeasureIdle(pids(), opt.idle_s);
    print_idle("(after the runs)", m);
    for (auto& [name, r] : m) idle["after_runs"][name] = r;
  }
  if (opt.settle_s > 0) {
    std::this_thread::sleep_until(runs_ended + std::chrono::seconds(opt.settle_s));
    auto m = MeasureIdle(pids(), 5);
    print_idle("(" + std::to_string(opt.settle_s) + " s after the runs)", m);
    for (auto& [name, r] : m) idle["settled"][name] = r;
  }
  if (skald && opt.journals > 0) {
    try {
      const auto state = e2e::PluginStateDir(kSkaldPlugin);
      if (!state) throw std::runtime_error("cannot find the plugin's state directory");
      Must(Docker({"plugin", "disable", kSkaldPlugin}, 120s));
      const int kept = FillJournals(*state, opt.journals);
      Must(Docker({"plugin", "enable", "--timeout", "0", kSkaldPlugin}, 120s));
      std::this_thread::sleep_for(10s);  // Recover() and settle
      auto m = MeasureIdle({{"skald", PluginPid(PluginId(kSkaldPlugin))}}, opt.idle_s);
      print_idle("(" + std::to_string(kept) + " journals kept, after a restart)", m);
      idle["journals"]["skald"] = m["skald"];
      idle["journals"]["skald"]["journals"] = kept;
    } catch (const std::exception& e) {
      std::cerr << "docker fleet: idle with " << opt.journals << " journals: " << e.what() << "\n";
      idle["journals"]["error"] = e.what();
    }
  }
  out["idle"] = idle;
  out["ok"] = ok;
  WriteJson(out, opt.json_path);
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace skald::bench

int main(int argc, char** argv) {
  return skald::bench::RunMain("docker_fleet_bench", skald::bench::Main, argc, argv);
}
