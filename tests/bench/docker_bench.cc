// docker_bench: the real dockerd, one container writing pino-style JSON lines (`loggen --json`
// in the e2e test image) through `none`, `json-file`, the installed skald plugin and Grafana's
// Go driver, the two plugins pushing to the same real Loki, with and without the seed pipeline,
// and through a plugin that only drains its FIFO (drain_plugin.cc, as `skald-bench-drain`, reading
// with skald's reader's pipe size and pacing): the floor of any logging plugin, measured in the
// same run, against which the container's time with skald is printed (how long dockerd waits
// on the plugin's FIFO).
//
// The Go driver (tests/e2e/loki/build-go-driver.sh) is installed for the run as the managed
// plugin `skald-bench-go-driver`, from a rootfs holding just its static binary and Grafana's
// config.json (tests/bench/go-driver/); it is disabled and removed at the end. Loki is started
// with tests/e2e/loki/start-loki.sh in --loki-dir on --loki-port and stopped at the end.
//
// Per run: wall time from `docker run -d` until `docker wait` returns (run_s), the container's
// own StartedAt..FinishedAt (container_s), the plugin process's CPU-seconds (utime + stime from
// /proc, until Loki has received every line), dockerd's CPU-seconds over the same span, the
// plugin's peak RSS (VmHWM, reset before each run), and the lines Loki holds for the container
// (count_over_time), and the push requests Loki answered meanwhile. Variants run interleaved,
// --repeat times; the report shows medians. Then each plugin's freshness on a quiet stream
// (Freshness below).
//
//   docker_bench --go-driver PATH --drain-plugin PATH --loki-dir DIR [--loki-port P]
//                [--skald-plugin NAME] [--lines N] [--repeat R]
//                [--drivers none,json-file,drain,skald,go] [--json FILE]
//                [--skald-is-build true|false]   (recorded: is the installed skald the one built)
//                [--fresh-lines N] [--fresh-interval-ms MS]   (the freshness run; 0 lines: none)
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/bench/bench_cli.h"
#include "tests/bench/bench_lines.h"
#include "tests/bench/docker_bench_support.h"
#include "tests/bench/proc_stats.h"
#include "tests/e2e/e2e_support.h"

namespace skald::bench {
namespace {

using json = nlohmann::json;
using e2e::Docker;
using namespace std::chrono_literals;

constexpr const char* kGoPlugin = "skald-bench-go-driver";  // the bench's own plugin names
constexpr const char* kDrainPlugin = "skald-bench-drain";

struct Options {
  std::string go_driver;
  std::string drain_plugin;  // drain_plugin's binary
  std::string loki_dir;
  int loki_port = 0;
  std::string skald_plugin = "skald";
  int lines = 200'000;
  int repeat = 3;
  std::string json_path;
  std::string drivers = "none,json-file,drain,skald,go";
  std::string skald_is_build;    // "true"/"false": whether the installed skald is the one built
  std::string skald_state;       // host directory of skald's journals (found at start)
  int fresh_lines = 30;          // freshness: lines of the quiet container (0: no freshness run)
  int fresh_interval_ms = 1500;  // freshness: the pause after each line
};

std::string Trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// RFC 3339 with nanoseconds, UTC ("2026-11-30T14:50:01.123456789Z"), as seconds since epoch.
double ParseDockerTime(const std::string& s) {
  std::tm tm{};
  if (strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) return -1;
  double t = static_cast<double>(timegm(&tm));
  const auto dot = s.find('.');
  if (dot != std::string::npos) {
    std::size_t end = dot + 1;
    while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end]))) ++end;
    t += std::stod("0" + s.substr(dot, end - dot));
  }
  return t;
}

// The host directory of skald's journals: the mount whose destination is the plugin's
// STATE_DIR; "" when it keeps none.
std::string SkaldStateSource(const std::string& plugin) {
  auto r = Docker({"plugin", "inspect", "--format", "{{json .Settings}}", plugin}, 30s);
  if (!r.ok()) return "";
  const json settings = json::parse(r.out, nullptr, false);
  if (settings.is_discarded()) return "";
  std::string state_dir;
  for (const auto& e : settings.value("Env", json::array())) {
    const std::string kv = e.get<std::string>();
    if (kv.rfind("STATE_DIR=", 0) == 0) state_dir = kv.substr(10);
  }
  if (state_dir.empty()) return "";
  for (const auto& m : settings.value("Mounts", json::array())) {
    if (m.value("Destination", "") == state_dir) return m.value("Source", "");
  }
  return "";
}

struct Variant {
  std::string driver;    // none, json-file, drain, skald, go
  std::string pipeline;  // none, seed
  std::string log_driver;
  bool plugin = false;
  bool ships = false;  // pushes to Loki (not the drain-only plugin)
};

json RunOnce(const Options& opt, const Variant& v, const std::string& image,
             const LokiProcess& loki, int rep) {
  const std::string name = "skald-bench-" + v.driver + "-" + v.pipeline + "-" +
                           std::to_string(getpid()) + "-" + std::to_string(rep);
  std::vector<std::string> args = {"run",          "-d",        "--name",  name,
                                   "--network",    "none",      "--label", "skald-bench=1",
                                   "--log-driver", v.log_driver};
  if (v.ships) {
    args.insert(args.end(), {"--log-opt", "loki-url=" + loki.PushUrl()});
    if (v.pipeline == "seed") {
      args.insert(args.end(), {"--log-opt", std::string("loki-pipeline-stages=") + kSeedPipeline});
    }
  }
  args.insert(args.end(),
              {image, "loggen", "--json", "--lines", std::to_string(opt.lines), "--prefix", name});

  const auto dockerd = PidsByComm("dockerd");
  const pid_t dockerd_pid = dockerd.empty() ? -1 : dockerd.front();
  const std::string plugin_name = v.driver == "go"      ? kGoPlugin
                                  : v.driver == "drain" ? kDrainPlugin
                                                        : opt.skald_plugin;
  const std::string plugin_id = v.plugin ? PluginId(plugin_name) : "";
  const pid_t plugin_pid = v.plugin ? PluginPid(plugin_id) : -1;
  if (v.plugin && plugin_pid <= 0) throw std::runtime_error("cannot find the plugin's process");
  if (v.plugin) ResetPeakRss(plugin_pid);
  const double received0 = LokiLinesReceived(loki.port());
  const double pushes0 = LokiPushRequests(loki.port());
  const double plugin_cpu0 = v.plugin ? ProcessCpuSeconds(plugin_pid) : 0;
  const double dockerd_cpu0 = ProcessCpuSeconds(dockerd_pid);
  const auto t0 = std::chrono::steady_clock::now();

  json r = {{"container", name}};
  auto run = Docker(args, 300s);
  if (!run.ok()) throw std::runtime_error("docker run failed: " + run.Describe());
  const std::string container_id = Trim(run.out);
  auto exit_code = e2e::WaitContainerExit(name, 600s);
  const auto t_exit = std::chrono::steady_clock::now();
  r["run_s"] = Seconds(t_exit - t0);
  r["exit_code"] = exit_code.value_or(-1);
  auto started = e2e::DockerInspect(name, "{{.State.StartedAt}}");
  auto finished = e2e::DockerInspect(name, "{{.State.FinishedAt}}");
  if (started && finished) {
    r["container_s"] = ParseDockerTime(*finished) - ParseDockerTime(*started);
  }
  if (v.plugin && !v.ships) {
    // dockerd has written the last line into the FIFO when the container is reported exited;
    // the drain-only plugin reads what the pipe still holds within a moment.
    std::this_thread::sleep_for(300ms);
    if (PluginPid(PluginId(plugin_name)) != plugin_pid) {
      r["restarted"] = true;  // died (or was replaced) during the run: not its figures
    } else if (const auto cpu = CpuBetween(plugin_cpu0, ProcessCpuSeconds(plugin_pid))) {
      r["plugin_cpu_s"] = *cpu;
      r["peak_rss_bytes"] = ProcessStatusBytes(plugin_pid, "VmHWM");
    } else {
      r["restarted"] = true;
    }
  }
  if (v.ships) {
    // Wait on Loki's cheap counter until it has every line, or until it has not moved for 5 s
    // (a driver that lost lines); then count the container's lines once.
    const auto deadline = t_exit + 180s;
    double last = LokiLinesReceived(loki.port());
    auto last_change = std::chrono::steady_clock::now();
    auto t_last_line = last_change;
    while (last - received0 < opt.lines && std::chrono::steady_clock::now() < deadline &&
           std::chrono::steady_clock::now() - last_change < 5s) {
      std::this_thread::sleep_for(100ms);
      const double now = LokiLinesReceived(loki.port());
      if (now != last) {
        last = now;
        last_change = t_last_line = std::chrono::steady_clock::now();
      }
    }
    r["deliver_s"] = Seconds(t_last_line - t0);
    // Someone may have reinstalled the plugin meanwhile (`make install` elsewhere: another id),
    // or it may have died and been restarted by dockerd (same id, another process): either way
    // its CPU and memory figures are not the run's.
    const std::string id_after = PluginId(plugin_name);
    const pid_t pid_after = PluginPid(id_after);
    if (id_after != plugin_id) {
      r["interrupted"] = "the plugin was replaced during the run (docker plugin id " +
                         plugin_id.substr(0, 12) + " -> " + id_after.substr(0, 12) + ")";
    } else if (pid_after != plugin_pid) {
      r["restarted"] = true;
    } else {
      if (const auto cpu = CpuBetween(plugin_cpu0, ProcessCpuSeconds(plugin_pid))) {
        r["plugin_cpu_s"] = *cpu;
        r["peak_rss_bytes"] = ProcessStatusBytes(plugin_pid, "VmHWM");
      } else {
        r["restarted"] = true;  // gone as the run ended
      }
    }
    if (const double pushes = LokiPushRequests(loki.port()); pushes >= 0 && pushes0 >= 0) {
      r["pushes"] = pushes - pushes0;
    }
    std::this_thread::sleep_for(500ms);  // duplicates, if any, would arrive right behind
    r["delivered"] = loki.Query().Count("{container_name=" + e2e::LogqlQuote(name) + "}");
  }
  if (const auto cpu = CpuBetween(dockerd_cpu0, ProcessCpuSeconds(dockerd_pid))) {
    r["dockerd_cpu_s"] = *cpu;
  }
  Docker({"rm", "-f", name}, 60s);
  // skald keeps a stopped container's journal for `docker logs` (days); ours can go now.
  if (v.driver == "skald" && !opt.skald_state.empty() && !container_id.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(opt.skald_state + "/containers/" + container_id, ec);
  }
  return r;
}

// Freshness: one container writes `lines` lines `interval_ms` apart (a quiet stream) through
// the driver; Loki is asked every 20 ms for the container's lines, and each line's freshness is
// the time of the first query that returned it minus the line's timestamp (dockerd's, which
// both drivers send): from the write to queryable, with the query's 20 ms granularity.
json Freshness(const Options& opt, const Variant& v, const std::string& image,
               const LokiProcess& loki) {
  const std::string name = "skald-bench-fresh-" + v.driver + "-" + std::to_string(getpid());
  const std::vector<std::string> args = {"run",           "-d",
                                         "--name",        name,
                                         "--network",     "none",
                                         "--label",       "skald-bench=1",
                                         "--log-driver",  v.log_driver,
                                         "--log-opt",     "loki-url=" + loki.PushUrl(),
                                         image,           "loggen",
                                         "--lines",       std::to_string(opt.fresh_lines),
                                         "--interval-ms", std::to_string(opt.fresh_interval_ms),
                                         "--prefix",      name};
  json r = {{"driver", v.driver},
            {"lines", opt.fresh_lines},
            {"interval_ms", opt.fresh_interval_ms},
            {"pipeline", "none"}};
  const double pushes0 = LokiPushRequests(loki.port());
  auto run = Docker(args, 300s);
  if (!run.ok()) throw std::runtime_error("docker run failed: " + run.Describe());
  const e2e::LokiQuery query = loki.Query();
  const std::string selector = "{container_name=" + e2e::LogqlQuote(name) + "}";
  std::map<std::string, double> seen;  // line -> freshness in ms
  std::vector<double> samples;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(opt.fresh_interval_ms) * opt.fresh_lines + 60s;
  while (static_cast<int>(seen.size()) < opt.fresh_lines &&
         std::chrono::steady_clock::now() < deadline) {
    const auto asked = std::chrono::system_clock::now();
    std::vector<e2e::LokiEntry> entries;
    try {
      entries = query.QueryAll(selector, 10min);
    } catch (const std::exception& e) {
      std::cerr << "freshness: " << e.what() << "\n";
    }
    const double asked_ns = static_cast<double>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(asked.time_since_epoch()).count());
    for (const auto& e : entries) {
      if (seen.count(e.line)) continue;
      const double ms = (asked_ns - static_cast<double>(e.timestamp_ns)) / 1e6;
      seen[e.line] = ms;
      samples.push_back(ms);
    }
    std::this_thread::sleep_for(20ms);
  }
  e2e::WaitContainerExit(name, 60s);
  if (const double pushes = LokiPushRequests(loki.port()); pushes >= 0 && pushes0 >= 0) {
    r["pushes"] = pushes - pushes0;
  }
  Docker({"rm", "-f", name}, 60s);
  if (v.driver == "skald" && !opt.skald_state.empty() && !Trim(run.out).empty()) {
    std::error_code ec;
    std::filesystem::remove_all(opt.skald_state + "/containers/" + Trim(run.out), ec);
  }
  r["delivered"] = samples.size();
  r["samples_ms"] = samples;
  std::sort(samples.begin(), samples.end());
  auto quantile = [&](double q) {
    const auto i = static_cast<std::size_t>(std::ceil(q * samples.size())) - 1;
    return samples[std::min(i, samples.size() - 1)];
  };
  if (!samples.empty()) {
    r["p50_ms"] = quantile(0.50);
    r["p99_ms"] = quantile(0.99);
    r["max_ms"] = samples.back();
  }
  return r;
}

json Medians(const json& runs) {
  json m = json::object();
  for (const char* key : {"run_s", "container_s", "deliver_s", "plugin_cpu_s", "dockerd_cpu_s",
                          "peak_rss_bytes", "delivered", "pushes"}) {
    std::vector<double> v;
    for (const auto& r : runs) {
      if (r.contains(key) && !r.contains("interrupted")) v.push_back(r[key].get<double>());
    }
    if (v.empty()) continue;
    std::sort(v.begin(), v.end());
    m[key] = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  }
  return m;
}

int Main(int argc, char** argv) {
  Options opt;
  const bool parsed =
      ParseFlags(argc, argv, "docker_bench", [&](const std::string& a, const std::string& v) {
        if (a == "--go-driver") {
          opt.go_driver = v;
        } else if (a == "--drain-plugin") {
          opt.drain_plugin = v;
        } else if (a == "--loki-dir") {
          opt.loki_dir = v;
        } else if (a == "--loki-port") {
          opt.loki_port = std::stoi(v);
        } else if (a == "--skald-plugin") {
          opt.skald_plugin = v;
        } else if (a == "--lines") {
          opt.lines = std::stoi(v);
        } else if (a == "--repeat") {
          opt.repeat = std::stoi(v);
        } else if (a == "--json") {
          opt.json_path = v;
        } else if (a == "--skald-is-build") {
          opt.skald_is_build = v;
        } else if (a == "--fresh-lines") {
          opt.fresh_lines = std::stoi(v);
        } else if (a == "--fresh-interval-ms") {
          opt.fresh_interval_ms = std::stoi(v);
        } else if (a == "--drivers") {
          opt.drivers = v;
        } else {
          return false;
        }
        return true;
      });
  if (!parsed) return 2;
  auto wanted = [&](const std::string& driver) {
    return ("," + opt.drivers + ",").find("," + driver + ",") != std::string::npos;
  };
  if ((wanted("go") && opt.go_driver.empty()) || (wanted("drain") && opt.drain_plugin.empty()) ||
      opt.loki_dir.empty()) {
    std::cerr << "usage: docker_bench --go-driver PATH --drain-plugin PATH --loki-dir DIR\n"
                 "                    [--loki-port P] [--drivers none,json-file,drain,skald,go]\n"
                 "                    [--skald-plugin NAME] [--lines N] [--repeat R] [--json F]\n";
    return 2;
  }
  if (opt.loki_port == 0) opt.loki_port = e2e::FreeTcpPort();
  signal(SIGPIPE, SIG_IGN);

  json out = {{"lines", opt.lines},
              {"repeat", opt.repeat},
              {"skald_plugin", opt.skald_plugin},
              {"skald_is_build", opt.skald_is_build},
              {"go_driver", opt.go_driver}};
  {
    // docker-driver-<version>/docker-driver
    const std::string dir = std::filesystem::path(opt.go_driver).parent_path().filename();
    out["go_driver_version"] = dir.rfind("docker-driver-", 0) == 0 ? dir.substr(14) : dir;
  }
  auto enabled = Docker({"plugin", "inspect", "--format", "{{.Enabled}}", opt.skald_plugin}, 30s);
  if (wanted("skald") && (!enabled.ok() || Trim(enabled.out) != "true")) {
    std::cerr << "docker_bench: the plugin '" << opt.skald_plugin
              << "' is not installed and enabled (make install)\n";
    return 1;
  }
  opt.skald_state = SkaldStateSource(opt.skald_plugin);
  const std::string image = e2e::E2eEnv::Get().TestImage();
  std::cerr << "docker side by side: starting Loki on 127.0.0.1:" << opt.loki_port << "\n";
  LokiProcess loki(opt.loki_dir, opt.loki_port);
  std::optional<BenchPlugin> go;
  if (wanted("go")) {
    std::cerr << "docker side by side: installing Grafana's Go driver as " << kGoPlugin << "\n";
    go.emplace(opt.go_driver, "docker-driver", e2e::SourceDir() + "/tests/bench/go-driver",
               kGoPlugin);
  }
  std::optional<BenchPlugin> drain;
  if (wanted("drain")) {
    std::cerr << "docker side by side: installing the drain-only plugin as " << kDrainPlugin
              << "\n";
    drain.emplace(opt.drain_plugin, "drain-plugin", e2e::SourceDir() + "/tests/bench/drain-plugin",
                  kDrainPlugin);
  }

  std::vector<Variant> variants;
  for (const Variant& v : std::vector<Variant>{
           {"none", "none", "none", false, false},
           {"json-file", "none", "json-file", false, false},
           {"drain", "none", kDrainPlugin, true, false},
           {"skald", "none", opt.skald_plugin, true, true},
           {"skald", "seed", opt.skald_plugin, true, true},
           {"go", "none", kGoPlugin, true, true},
           {"go", "seed", kGoPlugin, true, true},
       }) {
    if (wanted(v.driver)) variants.push_back(v);
  }
  std::vector<json> runs(variants.size(), json::array());
  std::string stopped;
  for (int rep = 1; rep <= opt.repeat && stopped.empty(); ++rep) {
    for (std::size_t i = 0; i < variants.size(); ++i) {
      const Variant& v = variants[i];
      if (const std::string e2e = RunningE2eTests(); !e2e.empty()) {
        stopped = "end-to-end tests started (pid " + e2e.substr(0, 120) +
                  "); they reinstall the skald plugin, so the runs stopped here";
        std::cerr << "docker side by side: " << stopped << "\n";
        break;
      }
      json r = RunOnce(opt, v, image, loki, rep);
      char line[256];
      std::snprintf(line, sizeof line,
                    "docker side by side: run %d %-9s pipeline=%-4s run->exit %5.2f s  plugin "
                    "CPU %5.2f s  peak %5.1f MB  delivered %lld",
                    rep, v.driver.c_str(), v.pipeline.c_str(), r.value("run_s", 0.0),
                    r.value("plugin_cpu_s", 0.0), r.value("peak_rss_bytes", 0.0) / 1048576.0,
                    r.value("delivered", -1LL));
      std::cerr << line << "\n";
      if (r.contains("interrupted")) {
        std::cerr << "  NOT COUNTED: " << r["interrupted"].get<std::string>() << "\n";
      } else if (r.value("restarted", false)) {
        std::cerr << "  the plugin process died during the run and dockerd restarted it\n";
      }
      runs[i].push_back(std::move(r));
    }
  }
  json freshness = json::array();
  for (const Variant& v : variants) {
    if (!v.ships || v.pipeline != "none" || opt.fresh_lines <= 0 || !stopped.empty()) continue;
    json f = Freshness(opt, v, image, loki);
    char line[256];
    std::snprintf(line, sizeof line,
                  "docker side by side: freshness %-5s %d lines %d ms apart: p50 %.0f ms  p99 "
                  "%.0f ms  pushes %.0f",
                  v.driver.c_str(), opt.fresh_lines, opt.fresh_interval_ms, f.value("p50_ms", -1.0),
                  f.value("p99_ms", -1.0), f.value("pushes", -1.0));
    std::cerr << line << "\n";
    freshness.push_back(std::move(f));
  }
  out["freshness"] = freshness;
  json results = json::array();
  bool ok = true;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    bool all = true;
    int interrupted = 0, restarted = 0;
    if (variants[i].plugin) {
      for (const auto& r : runs[i]) {
        if (r.contains("interrupted")) {
          ++interrupted;
          continue;
        }
        if (r.value("restarted", false)) ++restarted;
        if (variants[i].ships) {
          all = all && r.value("delivered", -1LL) == opt.lines && !r.value("restarted", false);
        }
      }
    }
    // Only skald's losses fail the benchmark; the Go driver's are reported.
    if (variants[i].driver == "skald") ok = ok && all;
    results.push_back({{"driver", variants[i].driver},
                       {"pipeline", variants[i].pipeline},
                       {"plugin", variants[i].plugin},
                       {"ships", variants[i].ships},
                       {"runs", runs[i]},
                       {"median", Medians(runs[i])},
                       {"all_delivered", all},
                       {"interrupted_runs", interrupted},
                       {"restarted_runs", restarted}});
  }
  for (const auto& f : freshness) {
    if (f.value("driver", "") == "skald" && f.value("delivered", 0) != opt.fresh_lines) ok = false;
  }
  out["results"] = results;
  if (!stopped.empty()) out["stopped"] = stopped;
  out["ok"] = ok;
  WriteJson(out, opt.json_path);
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace skald::bench

int main(int argc, char** argv) {
  return skald::bench::RunMain("docker_bench", skald::bench::Main, argc, argv);
}
