// plugin_load_bench: the real skald binary under load, without Docker.
//
// For each pipeline (none, the seed pipeline) and each container count K, it starts a
// fresh skald (FakeDaemon: unix socket in a temp dir, metrics on a free loopback port), a fresh
// in-process FakeLoki sink (decodes every request, counts entries), sends StartLogging for K
// simulated containers, writes pino-style JSON frames into their FIFOs as fast as the plugin
// takes them (one writer thread per container, the frames prepared beforehand), sends
// StopLogging and waits until the sink holds every line. It reports lines/s, the plugin's
// CPU-seconds per million lines (utime + stime from /proc), its peak RSS (VmHWM, the process
// is fresh for every run) and its idle VmHWM, and whether delivered == sent.
//
//   plugin_load_bench --skald PATH [--containers 1,10,50,100] [--lines N] [--pipelines none,seed]
//                     [--timeout-s S] [--frames-per-write N] [--repeat R] [--json FILE]
//                     [--outage-s S [--outage-rate LPS]]
// --lines is the number of lines per run (default 200000), split evenly over the containers.
// --frames-per-write: frames per write(2) into a FIFO; 1 (default) is what dockerd does.
// --repeat R: R runs per configuration (fresh plugin each); the one with the median CPU per
// line is reported, and all CPU figures are kept in the JSON.
// --outage-s adds a run where Loki answers 503 for S seconds while 10 containers log LPS
// lines/s in total (default 2000), sampling VmRSS each second; then every line must arrive.
// --containers "" runs no throughput run (only the outage, if asked).
// Exit status 1 when any run lost or duplicated lines.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
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
#include "tests/bench/proc_stats.h"
#include "tests/integration/fake_daemon.h"
#include "tests/tools/fake_loki.h"

namespace skald::bench {
namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

struct Options {
  std::string skald;
  std::vector<int> containers = {1, 10, 50, 100};
  uint64_t lines = 200'000;
  std::vector<std::string> pipelines = {"none", "seed"};
  int timeout_s = 120;
  int frames_per_write = 1;  // as dockerd writes them
  int repeat = 1;            // runs per configuration; the median CPU per line is reported
  std::string json_path;
  int outage_s = 0;        // > 0: also the Loki outage scenario, this long
  int outage_rate = 2000;  // lines per second over all containers during the outage
};

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// The frames of one container, back to back, and where each frame ends.
struct Frames {
  std::string bytes;
  std::vector<std::size_t> ends;
};

Frames ContainerFrames(int container, uint64_t lines) {
  Frames f;
  const int64_t base_ns = NowNs();
  const int64_t base_ms = base_ns / 1'000'000;
  for (uint64_t i = 0; i < lines; ++i) {
    const std::string line = PinoLine(i + static_cast<uint64_t>(container) * 1'000'003, base_ms);
    LogEntryView e;
    e.source = i % 20 == 19 ? "stderr" : "stdout";
    e.time_nano = base_ns + static_cast<int64_t>(i) * 1000;
    e.line = line;
    EncodeFrame(e, f.bytes);
    f.ends.push_back(f.bytes.size());
  }
  return f;
}

// Writes `frames` into the FIFO `per_write` frames at a time (dockerd writes one per write).
void WriteFrames(int fd, const Frames& frames, int per_write) {
  std::size_t from = 0;
  for (std::size_t i = 0; i < frames.ends.size(); i += static_cast<std::size_t>(per_write)) {
    const std::size_t to = frames.ends[std::min(frames.ends.size() - 1, i + per_write - 1)];
    while (from < to) {
      const ssize_t n = write(fd, frames.bytes.data() + from, to - from);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw std::runtime_error("write to FIFO failed");
      from += static_cast<std::size_t>(n);
    }
  }
}

pid_t PluginPid(const std::string& binary) {
  std::string comm = binary.substr(binary.rfind('/') + 1).substr(0, 15);
  for (pid_t pid : ChildPids(getpid())) {
    std::string c = ReadFileOr("/proc/" + std::to_string(pid) + "/comm");
    while (!c.empty() && c.back() == '\n') c.pop_back();
    if (c == comm) return pid;
  }
  return -1;
}

json RunOnce(const Options& opt, const std::string& pipeline, int k) {
  json r = {{"pipeline", pipeline}, {"containers", k}};
  testkit::FakeLoki sink;
  sink.SetRetainEntries(false);
  if (!sink.Start()) throw std::runtime_error("fake Loki cannot listen");
  testkit::FakeDaemon daemon(opt.skald, {"LOG_LEVEL=warn"});
  const pid_t pid = PluginPid(opt.skald);
  if (pid <= 0) throw std::runtime_error("cannot find the plugin's pid");

  // Idle: started, socket bound, no container yet.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  r["idle_hwm_bytes"] = ProcessStatusBytes(pid, "VmHWM");
  r["idle_rss_bytes"] = ProcessStatusBytes(pid, "VmRSS");

  const uint64_t per_container = (opt.lines + static_cast<uint64_t>(k) - 1) / k;
  const uint64_t total = per_container * static_cast<uint64_t>(k);
  std::vector<Frames> frames(static_cast<std::size_t>(k));
  for (int c = 0; c < k; ++c)
    frames[static_cast<std::size_t>(c)] = ContainerFrames(c, per_container);

  std::map<std::string, std::string> config = {{"loki-url", sink.PushUrl()}};
  if (pipeline == "seed") config["loki-pipeline-stages"] = kSeedPipeline;

  const double cpu0 = ProcessCpuSeconds(pid);
  const auto t0 = Clock::now();
  std::vector<testkit::FakeDaemon::Container> containers(static_cast<std::size_t>(k));
  for (auto& c : containers) {
    const std::string err = daemon.StartContainer(c, config);
    if (!err.empty()) throw std::runtime_error("StartLogging failed: " + err);
  }
  std::latch go(1);
  std::vector<std::thread> writers;
  for (int c = 0; c < k; ++c) {
    writers.emplace_back([&, c] {
      go.wait();
      try {
        WriteFrames(containers[static_cast<std::size_t>(c)].write_fd,
                    frames[static_cast<std::size_t>(c)], opt.frames_per_write);
      } catch (const std::exception& e) {
        std::cerr << "writer " << c << ": " << e.what() << "\n";
      }
    });
  }
  go.count_down();
  for (auto& w : writers) w.join();
  const auto t_written = Clock::now();
  for (auto& c : containers) daemon.StopContainer(c);
  const bool all = sink.WaitForEntries(total, std::chrono::seconds(opt.timeout_s));
  const auto t_delivered = Clock::now();
  const double cpu1 = ProcessCpuSeconds(pid);
  // Anything beyond `total` (duplicates) would arrive right behind.
  std::this_thread::sleep_for(std::chrono::milliseconds(all ? 300 : 0));
  const uint64_t delivered = sink.TotalEntries();

  const double wall = Seconds(t_delivered - t0);
  const auto cpu = CpuBetween(cpu0, cpu1);
  r["lines"] = total;
  r["delivered"] = delivered;
  r["ok"] = delivered == total && cpu.has_value();
  r["write_s"] = Seconds(t_written - t0);
  r["wall_s"] = wall;
  r["lines_per_s"] = static_cast<double>(total) / wall;
  if (cpu && *cpu > 0) {
    r["cpu_s"] = *cpu;
    r["cpu_s_per_million"] = *cpu / static_cast<double>(total) * 1e6;
    r["lines_per_cpu_s"] = static_cast<double>(total) / *cpu;
  } else {
    r["ok"] = false;
    r["error"] = "no CPU figure (the plugin's process was gone)";
  }
  r["peak_rss_bytes"] = ProcessStatusBytes(pid, "VmHWM");
  r["requests"] = sink.Requests();
  r["out_of_order"] = sink.OutOfOrder();
  r["streams"] = sink.Streams().size();
  r["plugin_sent"] = daemon.Metric("skald_entries_sent_total");
  r["plugin_dropped"] = daemon.Metric("skald_entries_dropped_total");
  if (!daemon.running()) {
    r["ok"] = false;
    r["error"] = "the plugin exited; its log:\n" + daemon.Log();
  }
  return r;
}

// Loki answers 503 for `outage_s` seconds while 10 containers log at a steady rate (seed
// pipeline); the plugin's VmRSS is sampled every second. Then Loki comes back and every line
// must arrive. The target: VmRSS at 60 s within +20% of VmRSS at 10 s.
json RunOutage(const Options& opt) {
  constexpr int kContainers = 10;
  json r = {{"containers", kContainers}, {"outage_s", opt.outage_s}, {"rate", opt.outage_rate}};
  testkit::FakeLoki sink;
  sink.SetRetainEntries(false);
  if (!sink.Start()) throw std::runtime_error("fake Loki cannot listen");
  sink.FailAll(503);
  testkit::FakeDaemon daemon(opt.skald, {"LOG_LEVEL=error"});
  const pid_t pid = PluginPid(opt.skald);
  if (pid <= 0) throw std::runtime_error("cannot find the plugin's pid");
  const std::map<std::string, std::string> config = {{"loki-url", sink.PushUrl()},
                                                     {"loki-max-backoff", "2s"},
                                                     {"loki-pipeline-stages", kSeedPipeline}};
  std::vector<testkit::FakeDaemon::Container> containers(kContainers);
  for (auto& c : containers) {
    const std::string err = daemon.StartContainer(c, config);
    if (!err.empty()) throw std::runtime_error("StartLogging failed: " + err);
  }
  const auto t0 = Clock::now();
  const auto until = t0 + std::chrono::seconds(opt.outage_s);
  std::atomic<uint64_t> sent{0};
  std::vector<std::thread> writers;
  for (int c = 0; c < kContainers; ++c) {
    writers.emplace_back([&, c] {
      const int per_tick = std::max(1, opt.outage_rate / kContainers / 10);  // 10 ticks a second
      uint64_t seq = static_cast<uint64_t>(c) * 1'000'003;
      auto next = Clock::now();
      while (Clock::now() < until) {
        std::string frames;
        for (int i = 0; i < per_tick; ++i, ++seq) {
          const std::string line = PinoLine(seq, NowNs() / 1'000'000);
          LogEntryView e;
          e.source = "stdout";
          e.time_nano = NowNs();
          e.line = line;
          EncodeFrame(e, frames);
        }
        daemon.WriteRaw(containers[static_cast<std::size_t>(c)], frames);
        sent += static_cast<uint64_t>(per_tick);
        next += std::chrono::milliseconds(100);
        std::this_thread::sleep_until(next);
      }
    });
  }
  json samples = json::array();
  for (int s = 1; s <= opt.outage_s; ++s) {
    std::this_thread::sleep_until(t0 + std::chrono::seconds(s));
    samples.push_back({{"t_s", s}, {"rss_bytes", ProcessStatusBytes(pid, "VmRSS")}});
  }
  for (auto& w : writers) w.join();
  sink.ClearFailures();
  for (auto& c : containers) daemon.StopContainer(c);
  const uint64_t total = sent.load();
  sink.WaitForEntries(total, std::chrono::seconds(opt.timeout_s));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const uint64_t delivered = sink.TotalEntries();
  auto rss_at = [&](int t) -> long long {
    for (const auto& s : samples) {
      if (s["t_s"] == t) return s["rss_bytes"].get<long long>();
    }
    return -1;
  };
  r["rss_10s_bytes"] = rss_at(std::min(10, opt.outage_s));
  r["rss_end_bytes"] = rss_at(opt.outage_s);
  r["peak_rss_bytes"] = ProcessStatusBytes(pid, "VmHWM");
  r["samples"] = samples;
  r["lines"] = total;
  r["delivered"] = delivered;
  r["recovery_s"] = Seconds(Clock::now() - until);
  r["plugin_dropped"] = daemon.Metric("skald_entries_dropped_total");
  r["ok"] = delivered == total && daemon.running();
  return r;
}

int Main(int argc, char** argv) {
  Options opt;
  const bool parsed =
      ParseFlags(argc, argv, "plugin_load_bench", [&](const std::string& a, const std::string& v) {
        if (a == "--skald") {
          opt.skald = v;
        } else if (a == "--containers") {
          opt.containers = IntList(v);
        } else if (a == "--lines") {
          opt.lines = std::stoull(v);
        } else if (a == "--pipelines") {
          opt.pipelines = SplitList(v);
        } else if (a == "--timeout-s") {
          opt.timeout_s = std::stoi(v);
        } else if (a == "--json") {
          opt.json_path = v;
        } else if (a == "--repeat") {
          opt.repeat = std::max(1, std::stoi(v));
        } else if (a == "--frames-per-write") {
          opt.frames_per_write = std::max(1, std::stoi(v));
        } else if (a == "--outage-s") {
          opt.outage_s = std::stoi(v);
        } else if (a == "--outage-rate") {
          opt.outage_rate = std::stoi(v);
        } else {
          return false;
        }
        return true;
      });
  if (!parsed) return 2;
  if (opt.skald.empty()) {
    std::cerr << "usage: plugin_load_bench --skald PATH [--containers 1,10,50,100] [--lines N]\n"
                 "                         [--pipelines none,seed] [--timeout-s S] [--json F]\n"
                 "                         [--frames-per-write N] [--repeat R]\n"
                 "                         [--outage-s S [--outage-rate LPS]]\n";
    return 2;
  }

  json out = {{"skald", opt.skald},
              {"lines_per_run", opt.lines},
              {"frames_per_write", opt.frames_per_write},
              {"runs", json::array()}};
  bool ok = true;
  for (const auto& pipeline : opt.pipelines) {
    for (int k : opt.containers) {
      // Repeats: the run with the median CPU per line stands for the configuration; a run
      // that lost lines fails it whatever the others did.
      json repeats = json::array();
      bool all_ok = true;
      for (int rep = 0; rep < opt.repeat; ++rep) {
        json r;
        try {
          r = RunOnce(opt, pipeline, k);
        } catch (const std::exception& e) {
          r = {{"pipeline", pipeline}, {"containers", k}, {"ok", false}, {"error", e.what()}};
        }
        all_ok = all_ok && r.value("ok", false);
        char line[256];
        std::snprintf(line, sizeof line,
                      "plugin alone: pipeline=%-4s K=%-3d %8.0f lines/s  %6.3f CPU-s/M lines  "
                      "peak %5.1f MB  delivered %llu/%llu%s",
                      pipeline.c_str(), k, r.value("lines_per_s", 0.0),
                      r.value("cpu_s_per_million", 0.0), r.value("peak_rss_bytes", 0LL) / 1048576.0,
                      static_cast<unsigned long long>(r.value("delivered", 0ULL)),
                      static_cast<unsigned long long>(r.value("lines", 0ULL)),
                      r.value("ok", false) ? "" : "  FAILED");
        std::cerr << line << "\n";
        if (r.contains("error")) std::cerr << "  error: " << r["error"].get<std::string>() << "\n";
        repeats.push_back(std::move(r));
      }
      std::vector<std::size_t> order(repeats.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return repeats[a].value("cpu_s_per_million", 0.0) <
               repeats[b].value("cpu_s_per_million", 0.0);
      });
      json chosen = repeats[order[order.size() / 2]];
      if (!all_ok) chosen["ok"] = false;
      chosen["repeats"] = repeats.size();
      chosen["cpu_s_per_million_all"] = json::array();
      for (const auto& r : repeats) {
        chosen["cpu_s_per_million_all"].push_back(r.value("cpu_s_per_million", 0.0));
      }
      ok = ok && all_ok;
      out["runs"].push_back(std::move(chosen));
    }
  }
  if (opt.outage_s > 0) {
    json r;
    try {
      r = RunOutage(opt);
    } catch (const std::exception& e) {
      r = {{"ok", false}, {"error", e.what()}};
    }
    ok = ok && r.value("ok", false);
    char line[256];
    std::snprintf(line, sizeof line,
                  "plugin alone: Loki outage %d s: VmRSS %.1f MB at 10 s, %.1f MB at the end, "
                  "delivered %llu/%llu%s",
                  opt.outage_s, r.value("rss_10s_bytes", 0LL) / 1048576.0,
                  r.value("rss_end_bytes", 0LL) / 1048576.0,
                  static_cast<unsigned long long>(r.value("delivered", 0ULL)),
                  static_cast<unsigned long long>(r.value("lines", 0ULL)),
                  r.value("ok", false) ? "" : "  FAILED");
    std::cerr << line << "\n";
    out["outage"] = std::move(r);
  }
  out["ok"] = ok;
  WriteJson(out, opt.json_path);
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace skald::bench

int main(int argc, char** argv) {
  return skald::bench::RunMain("plugin_load_bench", skald::bench::Main, argc, argv);
}
