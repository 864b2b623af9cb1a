// fleet_bench: the real skald binary with many short containers and many retained journals,
// without Docker.
//
// Per-container cost: a fresh skald (FakeDaemon: unix socket, FIFOs, a state directory in its
// temporary directory) and a fresh in-process FakeLoki sink; StartLogging for N simulated
// containers, M pino-style lines written into each FIFO (one writer thread per container,
// all at once), StopLogging for each, then a wait until the sink holds every line and every
// stream has ended (skald_streams_live back at 0: the FIFO reached its end, every line was
// acknowledged and the final cursor written). The plugin's CPU-seconds over that span (utime +
// stime from /proc/PID/stat, all threads) divided by N is the cost per container.
//
// Idle: the same plugin is then given more containers (1 line each) until N_idle journals are
// kept in its state directory, every line delivered and every stream ended; after a settling
// pause the plugin's CPU and its wake-ups (voluntary context switches summed over
// /proc/PID/task/*/status) are measured over S seconds, per thread name. Then the plugin is
// killed and started again on the same state directory (a host reboot, a plugin upgrade) and
// the idle figures are taken again. An idle figure with no journal at all is taken first.
// Everything lives in the FakeDaemon's temporary directory and is removed at the end.
//
//   fleet_bench --skald PATH [--runs 100x10,100x2000] [--pipeline none|seed]
//               [--idle-journals 0,1000] [--idle-s S] [--repeat R] [--timeout-s T]
//               [--keep-alive 1|0] [--json FILE]
// --runs: the N x M workloads, each on a fresh plugin; the median CPU of --repeat runs counts.
// --idle-journals: numbers of retained journals to measure idle at ("" or 0 alone: none).
// --skald may be a wrapper script that execs the binary under a profiler (valgrind
// --tool=callgrind, strace -f -c): the process is the FakeDaemon's child either way.
// --keep-alive 1 (default): the API calls reuse one connection while the plugin keeps it open,
// as dockerd's plugin client does; 0: a connection per call.
// Exit status 1 when a run lost or duplicated lines or the plugin died.
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <latch>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "plugin/ingest/frame_codec.h"
#include "tests/bench/bench_cli.h"
#include "tests/bench/bench_lines.h"
#include "tests/bench/idle_stats.h"
#include "tests/bench/proc_stats.h"
#include "tests/integration/fake_daemon.h"
#include "tests/tools/fake_loki.h"

namespace skald::bench {
namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;
using testkit::FakeDaemon;

struct Workload {
  int containers = 0;
  int lines = 0;
};

struct Options {
  std::string skald;
  std::vector<Workload> runs = {{100, 10}, {100, 2000}};
  std::string pipeline = "none";
  std::vector<int> idle_journals = {0, 1000};
  int idle_s = 30;
  int repeat = 1;
  int timeout_s = 300;
  bool keep_alive = true;  // API calls reuse a connection, as dockerd's do
  std::string json_path;
};

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string Frames(int container, int lines) {
  std::string bytes;
  const int64_t base_ns = NowNs();
  for (int i = 0; i < lines; ++i) {
    const uint64_t seq = static_cast<uint64_t>(i) + static_cast<uint64_t>(container) * 1'000'003;
    const std::string line = PinoLine(seq, base_ns / 1'000'000);
    LogEntryView e;
    e.source = i % 20 == 19 ? "stderr" : "stdout";
    e.time_nano = base_ns + static_cast<int64_t>(i) * 1000;
    e.line = line;
    EncodeFrame(e, bytes);
  }
  return bytes;
}

// CPU and wake-ups of `pid` over `seconds`, nothing else touching it.
json MeasureIdle(pid_t pid, int seconds) {
  json m =
      skald::bench::MeasureIdle(std::map<std::string, pid_t>{{"skald", pid}}, seconds)["skald"];
  m.erase("rss_bytes");
  return m;
}

// Waits until no stream is live (every FIFO ended, every line acknowledged, cursors final).
bool WaitStreamsEnded(FakeDaemon& daemon, std::chrono::seconds timeout) {
  const auto until = Clock::now() + timeout;
  while (Clock::now() < until) {
    if (daemon.Metric("skald_streams_live") == 0) return true;
    if (!daemon.running()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// N containers x M lines, all started, written and stopped at once. Returns the run's figures.
json RunContainers(const Options& opt, FakeDaemon& daemon, testkit::FakeLoki& sink, int n, int m,
                   uint64_t* expected_total) {
  std::map<std::string, std::string> config = {{"loki-url", sink.PushUrl()}};
  if (opt.pipeline == "seed") config["loki-pipeline-stages"] = kSeedPipeline;
  std::vector<std::string> frames(static_cast<std::size_t>(n));
  for (int c = 0; c < n; ++c) frames[static_cast<std::size_t>(c)] = Frames(c, m);
  const pid_t pid = daemon.pid();
  const double cpu0 = ProcessCpuSeconds(pid);
  const auto t0 = Clock::now();
  std::vector<FakeDaemon::Container> containers(static_cast<std::size_t>(n));
  for (auto& c : containers) {
    const std::string err = daemon.StartContainer(c, config);
    if (!err.empty()) throw std::runtime_error("StartLogging failed: " + err);
  }
  const auto t_started = Clock::now();
  {
    std::vector<std::thread> writers;
    for (int c = 0; c < n; ++c) {
      writers.emplace_back([&, c] {
        daemon.WriteRaw(containers[static_cast<std::size_t>(c)],
                        frames[static_cast<std::size_t>(c)]);
      });
    }
    for (auto& w : writers) w.join();
  }
  for (auto& c : containers) daemon.StopContainer(c);
  *expected_total += static_cast<uint64_t>(n) * static_cast<uint64_t>(m);
  const bool all = sink.WaitForEntries(*expected_total, std::chrono::seconds(opt.timeout_s));
  const auto t_delivered = Clock::now();
  const bool ended = all && WaitStreamsEnded(daemon, std::chrono::seconds(opt.timeout_s));
  const auto t_ended = Clock::now();
  const auto cpu = CpuBetween(cpu0, ProcessCpuSeconds(pid));
  std::this_thread::sleep_for(std::chrono::milliseconds(all ? 300 : 0));  // duplicates?
  const uint64_t delivered = sink.TotalEntries();
  json r = {{"containers", n},
            {"lines_per_container", m},
            {"pipeline", opt.pipeline},
            {"start_s", Seconds(t_started - t0)},
            {"deliver_s", Seconds(t_delivered - t0)},
            {"end_s", Seconds(t_ended - t0)},
            {"delivered_total", delivered},
            {"expected_total", *expected_total},
            {"streams_ended", ended},
            {"ok", delivered == *expected_total && ended && daemon.running() && cpu}};
  if (cpu) {
    r["cpu_s"] = *cpu;
    r["cpu_ms_per_container"] = *cpu * 1000.0 / n;
  }
  if (!daemon.running()) r["error"] = "the plugin exited; its log:\n" + daemon.Log();
  return r;
}

json RunWorkload(const Options& opt, const Workload& w) {
  testkit::FakeLoki sink;
  sink.SetRetainEntries(false);
  if (!sink.Start()) throw std::runtime_error("fake Loki cannot listen");
  FakeDaemon daemon(opt.skald, {"LOG_LEVEL=warn"});
  daemon.KeepAlive(opt.keep_alive);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  uint64_t total = 0;
  return RunContainers(opt, daemon, sink, w.containers, w.lines, &total);
}

// Idle with `journals` retained journals: made through the plugin, then measured; then the
// plugin restarted on them and measured again.
json RunIdle(const Options& opt, int journals) {
  json out = {{"journals", journals}};
  testkit::FakeLoki sink;
  sink.SetRetainEntries(false);
  if (!sink.Start()) throw std::runtime_error("fake Loki cannot listen");
  FakeDaemon daemon(opt.skald, {"LOG_LEVEL=warn"});
  daemon.KeepAlive(opt.keep_alive);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  uint64_t total = 0;
  bool ok = true;
  if (journals > 0) {
    constexpr int kBatch = 100;
    const auto t0 = Clock::now();
    for (int made = 0; made < journals; made += kBatch) {
      json r = RunContainers(opt, daemon, sink, std::min(kBatch, journals - made), 1, &total);
      ok = ok && r.value("ok", false);
      if (!ok) {
        out["error"] = r.value("error", std::string("lines lost or streams not ended"));
        break;
      }
    }
    out["make_s"] = Seconds(Clock::now() - t0);
    std::this_thread::sleep_for(std::chrono::seconds(3));  // settle
  }
  if (ok) out["after_run"] = MeasureIdle(daemon.pid(), opt.idle_s);
  if (ok && journals > 0) {
    daemon.KillAndRestartPlugin();
    // A killed plugin waits 3 s before it replays (Driver::kCrashedReplayDelay), then Recover()
    // goes through the journals (the plugin logs how long it took) and settles.
    std::this_thread::sleep_for(std::chrono::seconds(6));
    out["after_restart"] = MeasureIdle(daemon.pid(), opt.idle_s);
    out["after_restart"]["rss_bytes"] = ProcessStatusBytes(daemon.pid(), "VmRSS");
  }
  ok = ok && daemon.running();
  out["ok"] = ok;
  return out;
}

void PrintIdle(const json& idle, const char* phase) {
  if (!idle.contains(phase)) return;
  const json& m = idle[phase];
  std::string threads;
  for (const auto& [name, rate] : m["wakeups_per_s_by_thread"].items()) {
    char part[64];
    std::snprintf(part, sizeof part, " %s=%.2f", name.c_str(), rate.get<double>());
    threads += part;
  }
  std::fprintf(stderr,
               "fleet: idle, %d journals kept, %-13s: %.3f%% of a core, %.2f wake-ups/s "
               "(%d threads:%s)\n",
               idle["journals"].get<int>(), phase, m["cpu_percent"].get<double>(),
               m["wakeups_per_s"].get<double>(), m["threads"].get<int>(), threads.c_str());
}

int Main(int argc, char** argv) {
  Options opt;
  const bool parsed =
      ParseFlags(argc, argv, "fleet_bench", [&](const std::string& a, const std::string& v) {
        if (a == "--skald") {
          opt.skald = v;
        } else if (a == "--runs") {
          opt.runs.clear();
          for (const auto& [containers, lines] : WorkloadList(v, a)) {
            opt.runs.push_back({containers, lines});
          }
        } else if (a == "--pipeline") {
          opt.pipeline = v;
        } else if (a == "--idle-journals") {
          opt.idle_journals = IntList(v);
        } else if (a == "--idle-s") {
          opt.idle_s = std::max(1, std::stoi(v));
        } else if (a == "--repeat") {
          opt.repeat = std::max(1, std::stoi(v));
        } else if (a == "--timeout-s") {
          opt.timeout_s = std::stoi(v);
        } else if (a == "--keep-alive") {
          opt.keep_alive = v != "0" && v != "false";
        } else if (a == "--json") {
          opt.json_path = v;
        } else {
          return false;
        }
        return true;
      });
  if (!parsed) return 2;
  if (opt.skald.empty()) {
    std::cerr << "usage: fleet_bench --skald PATH [--runs 100x10,100x2000] [--pipeline none|seed]\n"
                 "                   [--idle-journals 0,1000] [--idle-s S] [--repeat R]\n"
                 "                   [--timeout-s T] [--json FILE]\n";
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);

  json out = {{"skald", opt.skald}, {"runs", json::array()}, {"idle", json::array()}};
  bool ok = true;
  for (const Workload& w : opt.runs) {
    json repeats = json::array();
    bool all_ok = true;
    for (int rep = 0; rep < opt.repeat; ++rep) {
      json r;
      try {
        r = RunWorkload(opt, w);
      } catch (const std::exception& e) {
        r = {{"containers", w.containers},
             {"lines_per_container", w.lines},
             {"ok", false},
             {"error", e.what()}};
      }
      all_ok = all_ok && r.value("ok", false);
      std::fprintf(stderr,
                   "fleet: %d containers x %d lines (pipeline %s): plugin CPU %.3f s = %.2f ms "
                   "per container; delivered %llu/%llu in %.2f s, streams ended in %.2f s%s\n",
                   w.containers, w.lines, opt.pipeline.c_str(), r.value("cpu_s", 0.0),
                   r.value("cpu_ms_per_container", 0.0),
                   static_cast<unsigned long long>(r.value("delivered_total", 0ULL)),
                   static_cast<unsigned long long>(r.value("expected_total", 0ULL)),
                   r.value("deliver_s", 0.0), r.value("end_s", 0.0),
                   r.value("ok", false) ? "" : "  FAILED");
      if (r.contains("error")) std::cerr << "  error: " << r["error"].get<std::string>() << "\n";
      repeats.push_back(std::move(r));
    }
    std::vector<std::size_t> order(repeats.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return repeats[a].value("cpu_s", 0.0) < repeats[b].value("cpu_s", 0.0);
    });
    json chosen = repeats[order[order.size() / 2]];
    chosen["repeats"] = repeats.size();
    chosen["cpu_s_all"] = json::array();
    for (const auto& r : repeats) chosen["cpu_s_all"].push_back(r.value("cpu_s", 0.0));
    if (!all_ok) chosen["ok"] = false;
    ok = ok && all_ok;
    out["runs"].push_back(std::move(chosen));
  }
  for (int journals : opt.idle_journals) {
    json r;
    try {
      r = RunIdle(opt, journals);
    } catch (const std::exception& e) {
      r = {{"journals", journals}, {"ok", false}, {"error", e.what()}};
    }
    PrintIdle(r, "after_run");
    PrintIdle(r, "after_restart");
    if (r.contains("error")) std::cerr << "  error: " << r["error"].get<std::string>() << "\n";
    ok = ok && r.value("ok", false);
    out["idle"].push_back(std::move(r));
  }
  out["ok"] = ok;
  WriteJson(out, opt.json_path);
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace skald::bench

int main(int argc, char** argv) {
  return skald::bench::RunMain("fleet_bench", skald::bench::Main, argc, argv);
}
