// bench_report: turns the JSON of the benchmark parts into markdown tables, checks the
// issue's targets (PASS / MISS / n/a when a part did not run) and writes one results.json.
//
//   bench_report [--micro FILE]... [--load FILE] [--docker FILE] [--fleet-alone FILE]
//                [--fleet-docker FILE] [--out FILE]
// --fleet-alone takes fleet_bench's JSON, --fleet-docker docker_fleet_bench's (the fleet part,
// tests/bench/fleet_report.h).
// --micro takes Google Benchmark JSON (--benchmark_format=json); with repetitions, the median
// is shown. Exit status 1 when a part reports lost or duplicated lines, when a target is missed
// (a figure over its bound, or no figure from a part that ran: a program that failed, a plugin
// that died), or when an input cannot be read; each is named on stderr. 0 otherwise.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tests/bench/fleet_report.h"

namespace {

using json = nlohmann::json;

std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string Mb(double bytes) { return bytes < 0 ? "-" : Fmt("%.1f", bytes / 1048576.0); }

std::string Thousands(double v) {
  if (v >= 1e6) return Fmt("%.2fM", v / 1e6);
  if (v >= 1e3) return Fmt("%.0fk", v / 1e3);
  return Fmt("%.0f", v);
}

std::optional<json> ReadJson(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

// --- micro ---------------------------------------------------------------------------------

json MicroRows(const std::vector<std::string>& files) {
  json rows = json::array();
  for (const auto& f : files) {
    auto j = ReadJson(f);
    if (!j) {
      std::cerr << "bench_report: cannot read " << f << "\n";
      continue;
    }
    // With repetitions, keep the medians; otherwise every plain run.
    bool has_median = false;
    for (const auto& b : (*j)["benchmarks"]) {
      if (b.value("aggregate_name", "") == "median") has_median = true;
    }
    for (const auto& b : (*j)["benchmarks"]) {
      const bool median = b.value("aggregate_name", "") == "median";
      if (has_median != median) continue;
      if (!b.contains("items_per_second")) continue;
      const double items = b["items_per_second"].get<double>();
      json row = {{"name", b.value("run_name", b.value("name", ""))},
                  {"items_per_second", items},
                  {"ns_per_item", items > 0 ? 1e9 / items : 0}};
      if (b.contains("bytes_per_second")) row["bytes_per_second"] = b["bytes_per_second"];
      if (b.contains("ratio")) row["compression_ratio"] = b["ratio"];
      rows.push_back(row);
    }
  }
  return rows;
}

void PrintMicro(const json& rows) {
  std::cout << "### Micro benchmarks (CPU time per item; median of the repetitions)\n\n"
               "| benchmark | ns per item | items per CPU-s | MB per CPU-s | note |\n"
               "|---|---:|---:|---:|---|\n";
  for (const auto& r : rows) {
    std::string note;
    if (r.contains("compression_ratio")) {
      note = "snappy ratio " + Fmt("%.2f", r["compression_ratio"].get<double>());
    }
    std::cout << "| " << r["name"].get<std::string>() << " | "
              << Fmt("%.1f", r["ns_per_item"].get<double>()) << " | "
              << Thousands(r["items_per_second"].get<double>()) << " | "
              << (r.contains("bytes_per_second")
                      ? Fmt("%.0f", r["bytes_per_second"].get<double>() / 1048576.0)
                      : "-")
              << " | " << note << " |\n";
  }
  std::cout << "\n";
}

// --- plugin alone --------------------------------------------------------------------------

void PrintLoad(const json& load) {
  if (!load["runs"].empty()) {
    std::cout << "### Plugin alone (fake daemon -> skald -> fake Loki sink; "
              << load.value("lines_per_run", 0)
              << " lines per run, split over K containers; each row the median of "
              << (load["runs"].empty() ? 1 : load["runs"][0].value("repeats", 1))
              << " runs by CPU per line)\n\n"
              << "| pipeline | K | lines/s into the FIFOs | lines/s delivered | CPU-s per M lines "
                 "| lines per CPU-s | peak RSS MB | idle VmHWM MB | delivered / sent |\n"
                 "|---|---:|---:|---:|---:|---:|---:|---:|---|\n";
    for (const auto& r : load["runs"]) {
      std::cout << "| " << r.value("pipeline", "") << " | " << r.value("containers", 0) << " | "
                << (r.value("write_s", 0.0) > 0
                        ? Thousands(r.value("lines", 0.0) / r.value("write_s", 1.0))
                        : std::string("-"))
                << " | " << Thousands(r.value("lines_per_s", 0.0)) << " | "
                << Fmt("%.3f", r.value("cpu_s_per_million", 0.0)) << " | "
                << Thousands(r.value("lines_per_cpu_s", 0.0)) << " | "
                << Mb(r.value("peak_rss_bytes", -1.0)) << " | "
                << Mb(r.value("idle_hwm_bytes", -1.0)) << " | " << r.value("delivered", 0ULL)
                << " / " << r.value("lines", 0ULL) << (r.value("ok", false) ? "" : " **FAIL**")
                << " |\n";
      if (r.contains("error")) {
        std::cout << "\nerror: " << r["error"].get<std::string>() << "\n\n";
      }
    }
    std::cout << "\n";
  }
  if (load.contains("outage")) {
    std::cout << "### Plugin alone, Loki outage\n\n";
    const json& o = load["outage"];
    std::cout << "Loki outage (503 for " << o.value("outage_s", 0) << " s, "
              << o.value("containers", 0) << " containers, " << o.value("rate", 0)
              << " lines/s, seed pipeline): VmRSS " << Mb(o.value("rss_10s_bytes", -1.0))
              << " MB at 10 s, " << Mb(o.value("rss_end_bytes", -1.0)) << " MB at the end, peak "
              << Mb(o.value("peak_rss_bytes", -1.0)) << " MB; delivered "
              << o.value("delivered", 0ULL) << " / " << o.value("lines", 0ULL) << " within "
              << Fmt("%.1f", o.value("recovery_s", 0.0)) << " s of Loki's return"
              << (o.value("ok", false) ? "" : " **FAIL**") << "\n\n";
    if (o.contains("error")) std::cout << "error: " << o["error"].get<std::string>() << "\n\n";
  }
}

// --- docker --------------------------------------------------------------------------------

const json* DockerResult(const json& docker, const std::string& driver,
                         const std::string& pipeline) {
  for (const auto& r : docker["results"]) {
    if (r.value("driver", "") == driver && r.value("pipeline", "") == pipeline) return &r;
  }
  return nullptr;
}

double Median(const json& r, const std::string& key) {
  if (!r.contains("median") || !r["median"].contains(key)) return -1;
  return r["median"][key].get<double>();
}

void PrintDocker(const json& docker) {
  std::cout << "### Real Docker, side by side (" << docker.value("lines", 0)
            << " pino JSON lines from one container; median of " << docker.value("repeat", 0)
            << " runs; Go driver " << docker.value("go_driver_version", "?") << ")\n\n";
  if (docker.contains("stopped")) {
    std::cout << "**Incomplete: " << docker["stopped"].get<std::string>() << ".**\n\n";
  }
  if (docker.value("skald_is_build", "") == "false") {
    std::cout << "**Note: the installed skald plugin is not the binary built for parts 1-2 "
                 "(make install failed?).**\n\n";
  }
  std::cout << "| driver | pipeline | run->exit s | container s | plugin CPU-s | lines per "
               "plugin CPU-s | dockerd CPU-s | peak RSS MB | delivered | container s / json-file | "
               "plugin CPU / Go | pushes per 10k lines |\n"
               "|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|\n";
  const json* json_file = DockerResult(docker, "json-file", "none");
  const double jf_wall = json_file ? Median(*json_file, "container_s") : -1;
  for (const auto& r : docker["results"]) {
    const std::string driver = r.value("driver", "");
    const std::string pipeline = r.value("pipeline", "");
    const bool plugin = r.value("plugin", false);
    const double wall = Median(r, "run_s");
    const double cpu = Median(r, "plugin_cpu_s");
    std::string vs_go = "-";
    if (driver == "skald") {
      const json* go = DockerResult(docker, "go", pipeline);
      if (go && Median(*go, "plugin_cpu_s") > 0 && cpu >= 0) {
        vs_go = Fmt("%.3f", cpu / Median(*go, "plugin_cpu_s"));
      }
    }
    std::string delivered = "-";
    std::string notes;
    if (r.value("interrupted_runs", 0) > 0) {
      notes += " (" + std::to_string(r.value("interrupted_runs", 0)) +
               " run(s) not counted: plugin replaced meanwhile)";
    }
    if (r.value("restarted_runs", 0) > 0) {
      notes += " **" + std::to_string(r.value("restarted_runs", 0)) +
               " run(s): plugin died and was restarted**";
    }
    if (r.value("ships", plugin)) {
      delivered = std::to_string(static_cast<long long>(Median(r, "delivered"))) + " / " +
                  std::to_string(docker.value("lines", 0));
      if (!r.value("all_delivered", false))
        delivered += driver == "skald" ? " **FAIL**" : " (lost)";
    }
    std::cout << "| " << driver << " | " << pipeline << " | " << Fmt("%.2f", wall) << " | "
              << Fmt("%.2f", Median(r, "container_s")) << " | "
              << (plugin && cpu >= 0 ? Fmt("%.2f", cpu) : "-") << " | "
              << (plugin && cpu > 0 ? Thousands(docker.value("lines", 0) / cpu) : "-") << " | "
              << Fmt("%.2f", Median(r, "dockerd_cpu_s")) << " | "
              << (plugin ? Mb(Median(r, "peak_rss_bytes")) : "-") << " | " << delivered << notes
              << " | " << (jf_wall > 0 ? Fmt("%.2f", Median(r, "container_s") / jf_wall) : "-")
              << " | " << vs_go << " | "
              << (plugin && Median(r, "pushes") >= 0 && docker.value("lines", 0) > 0
                      ? Fmt("%.1f", Median(r, "pushes") * 1e4 / docker.value("lines", 0))
                      : "-")
              << " |\n";
  }
  std::cout << "\n";
  if (!docker.contains("freshness") || docker["freshness"].empty()) return;
  std::cout << "### Freshness: a line on a quiet stream, from its write to the first Loki query "
               "that returns it (queried every 20 ms)\n\n"
               "| driver | lines | apart | p50 ms | p99 ms | max ms | delivered | pushes |\n"
               "|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& f : docker["freshness"]) {
    std::cout << "| " << f.value("driver", "") << " | " << f.value("lines", 0) << " | "
              << f.value("interval_ms", 0) << " ms | " << Fmt("%.0f", f.value("p50_ms", -1.0))
              << " | " << Fmt("%.0f", f.value("p99_ms", -1.0)) << " | "
              << Fmt("%.0f", f.value("max_ms", -1.0)) << " | " << f.value("delivered", 0) << " | "
              << Fmt("%.0f", f.value("pushes", -1.0)) << " |\n";
  }
  std::cout << "\n";
}

// The run of `r` (a docker result) with `rep` (its position): the plugin CPU-seconds, or -1.
double RunCpu(const json& r, std::size_t rep) {
  if (!r.contains("runs") || rep >= r["runs"].size()) return -1;
  const json& run = r["runs"][rep];
  if (run.contains("interrupted") || run.value("restarted", false)) return -1;
  return run.value("plugin_cpu_s", -1.0);
}

// --- targets -------------------------------------------------------------------------------

struct Target {
  std::string name;
  std::string measured;
  std::string status;  // PASS, MISS, n/a
};

// A target whose part ran but left no figure (a program that failed, a plugin that died, a
// run that was not ok) is missed, not "n/a": n/a is only for a part that was not asked for.
// Whether part 2 ran with `containers` containers.
bool HasRun(const std::optional<json>& load, int containers) {
  if (!load || !load->contains("runs")) return false;
  for (const auto& r : (*load)["runs"]) {
    if (r.value("containers", 0) == containers) return true;
  }
  return false;
}

void MissWhenNoFigure(Target& t, bool part_ran) {
  if (t.status == "n/a" && part_ran) {
    t.status = "MISS";
    if (t.measured == "-") t.measured = "no figure (see the program's output)";
  }
}

std::string Status(std::optional<bool> pass) {
  if (!pass) return "n/a";
  return *pass ? "PASS" : "MISS";
}

std::vector<Target> Targets(const std::optional<json>& load, const std::optional<json>& docker,
                            bool* lost_lines) {
  std::vector<Target> t;
  *lost_lines = false;
  const bool docker_ran = docker.has_value();
  const bool load_ran = load && load->contains("runs") && !(*load)["runs"].empty();
  const bool outage_ran = load && load->contains("outage");
  const json* skald_seed = docker ? DockerResult(*docker, "skald", "seed") : nullptr;
  const json* go_seed = docker ? DockerResult(*docker, "go", "seed") : nullptr;
  const json* json_file = docker ? DockerResult(*docker, "json-file", "none") : nullptr;

  {
    Target x{
        "Docker: a line on a quiet stream, write -> queryable: skald p50 <= 250 ms, p99 <= 400 ms",
        "-", "n/a"};
    if (docker && docker->contains("freshness")) {
      for (const auto& f : (*docker)["freshness"]) {
        if (f.value("driver", "") != "skald" || !f.contains("p50_ms")) continue;
        const double p50 = f["p50_ms"].get<double>(), p99 = f["p99_ms"].get<double>();
        x.measured = Fmt("p50 %.0f ms", p50) + Fmt(", p99 %.0f ms", p99);
        for (const auto& g : (*docker)["freshness"]) {
          if (g.value("driver", "") == "go" && g.contains("p50_ms")) {
            x.measured += Fmt(" (Go driver: p50 %.0f ms", g["p50_ms"].get<double>()) +
                          Fmt(", p99 %.0f ms)", g["p99_ms"].get<double>());
          }
        }
        x.status = Status(p50 <= 250 && p99 <= 400);
      }
    }
    MissWhenNoFigure(x, docker_ran && docker->contains("freshness"));
    t.push_back(x);
  }
  {
    Target x{
        "Docker: Go driver's plugin CPU / skald's, seed pipeline: median >= 20x, each run "
        ">= 15x",
        "-", "n/a"};
    if (skald_seed && go_seed) {
      std::vector<double> ratios;
      for (std::size_t rep = 0;; ++rep) {
        const double s = RunCpu(*skald_seed, rep), g = RunCpu(*go_seed, rep);
        if (rep >= (*skald_seed)["runs"].size() || rep >= (*go_seed)["runs"].size()) break;
        if (s > 0 && g > 0) ratios.push_back(g / s);
      }
      if (!ratios.empty()) {
        std::string each;
        for (double r : ratios) each += (each.empty() ? "" : " / ") + Fmt("%.1fx", r);
        std::vector<double> sorted = ratios;
        std::sort(sorted.begin(), sorted.end());
        const double median = sorted.size() % 2
                                  ? sorted[sorted.size() / 2]
                                  : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
        x.measured = Fmt("median %.1fx", median) + " (runs " + each + "; " +
                     Fmt("%.2f", Median(*skald_seed, "plugin_cpu_s")) + " vs " +
                     Fmt("%.2f", Median(*go_seed, "plugin_cpu_s")) + " CPU-s)";
        x.status = Status(median >= 20 && sorted.front() >= 15);
      }
    }
    MissWhenNoFigure(x, docker_ran);
    t.push_back(x);
  }
  {
    Target x{"Docker: skald lines per plugin CPU-second, seed pipeline >= 450k (stretch 1M)", "-",
             "n/a"};
    if (skald_seed && Median(*skald_seed, "plugin_cpu_s") > 0) {
      const double v = docker->value("lines", 0) / Median(*skald_seed, "plugin_cpu_s");
      x.measured = Thousands(v);
      x.status = Status(v >= 450e3);
    }
    MissWhenNoFigure(x, docker_ran);
    t.push_back(x);
  }
  {
    Target x{"Plugin alone, K=1: lines per CPU-second, seed pipeline >= 450k (stretch 1M)", "-",
             "n/a"};
    if (load) {
      for (const auto& r : (*load)["runs"]) {
        if (r.value("pipeline", "") == "seed" && r.value("containers", 0) == 1 &&
            r.value("ok", false) && r.contains("lines_per_cpu_s")) {
          const double v = r["lines_per_cpu_s"].get<double>();
          x.measured = Thousands(v);
          x.status = Status(v >= 450e3);
        }
      }
    }
    MissWhenNoFigure(x, load_ran);
    t.push_back(x);
  }
  {
    Target x{
        "Docker: container wall time (started to exited) with skald, seed pipeline <= 1.2x "
        "json-file",
        "-", "n/a"};
    if (skald_seed && json_file && Median(*json_file, "container_s") > 0) {
      const double ratio = Median(*skald_seed, "container_s") / Median(*json_file, "container_s");
      x.measured = Fmt("%.2fx", ratio) + " (" + Fmt("%.2f", Median(*skald_seed, "container_s")) +
                   " s vs " + Fmt("%.2f", Median(*json_file, "container_s")) +
                   " s; docker run -d "
                   "to docker wait: " +
                   Fmt("%.2f", Median(*skald_seed, "run_s")) + " s vs " +
                   Fmt("%.2f", Median(*json_file, "run_s")) + " s)";
      x.status = Status(ratio <= 1.2);
    }
    MissWhenNoFigure(x, docker_ran);
    t.push_back(x);
  }
  {
    // The floor of any logging plugin, measured in the same run: a plugin that only reads its
    // FIFO. No bound: the distance is shown.
    Target x{
        "Docker: app time, container wall time with skald (seed pipeline) against a plugin that "
        "only drains its FIFO: shown",
        "-", "n/a"};
    const json* drain = docker ? DockerResult(*docker, "drain", "none") : nullptr;
    if (skald_seed && drain && Median(*drain, "container_s") > 0 &&
        Median(*skald_seed, "container_s") > 0 && docker->value("lines", 0) > 0) {
      const double skald_s = Median(*skald_seed, "container_s");
      const double drain_s = Median(*drain, "container_s");
      x.measured = Fmt("%.2fx", skald_s / drain_s) + " (" + Fmt("%.2f", skald_s) + " s vs " +
                   Fmt("%.2f", drain_s) +
                   " s: " + Fmt("%+.2f", (skald_s - drain_s) * 1e6 / docker->value("lines", 0)) +
                   " us per line" +
                   (json_file ? Fmt("; json-file %.2f s", Median(*json_file, "container_s"))
                              : std::string()) +
                   ")";
      x.status = "shown";
    }
    MissWhenNoFigure(x, docker_ran && drain != nullptr);
    t.push_back(x);
  }
  {
    Target x{"Idle VmHWM (started, no containers) <= 8 MB", "-", "n/a"};
    double worst = -1;
    if (load) {
      for (const auto& r : (*load)["runs"])
        worst = std::max(worst, r.value("idle_hwm_bytes", -1.0));
    }
    if (worst > 0) {
      x.measured = Mb(worst) + " MB (largest of the runs)";
      x.status = Status(worst <= 8.0 * 1048576);
    }
    MissWhenNoFigure(x, load_ran);
    t.push_back(x);
  }
  {
    Target x{"50 containers logging: peak RSS <= 40 MB", "-", "n/a"};
    double worst = -1;
    if (load) {
      for (const auto& r : (*load)["runs"]) {
        if (r.value("containers", 0) == 50) {
          worst = std::max(worst, r.value("peak_rss_bytes", -1.0));
        }
      }
    }
    if (worst > 0) {
      x.measured = Mb(worst) + " MB (larger of none/seed)";
      x.status = Status(worst <= 40.0 * 1048576);
    }
    MissWhenNoFigure(x, HasRun(load, 50));
    t.push_back(x);
  }
  {
    Target x{"Loki outage (60 s): VmRSS at its end within +20% of VmRSS at 10 s", "-", "n/a"};
    if (load && load->contains("outage") && (*load)["outage"].value("rss_10s_bytes", -1.0) > 0) {
      const json& o = (*load)["outage"];
      const double growth = o["rss_end_bytes"].get<double>() / o["rss_10s_bytes"].get<double>();
      x.measured = Fmt("%+.1f%%", (growth - 1) * 100) + " (" + Mb(o["rss_10s_bytes"]) + " -> " +
                   Mb(o["rss_end_bytes"]) + " MB over " + std::to_string(o.value("outage_s", 0)) +
                   " s)";
      x.status = Status(growth <= 1.2);
    }
    MissWhenNoFigure(x, outage_ran);
    t.push_back(x);
  }
  {
    Target x{"CPU per line from 1 to 100 containers grows <= 1.5x", "-", "n/a"};
    if (load) {
      std::map<std::string, std::map<int, double>> cost;
      for (const auto& r : (*load)["runs"]) {
        if (r.value("ok", false) && r.contains("cpu_s_per_million")) {
          cost[r.value("pipeline", "")][r.value("containers", 0)] =
              r["cpu_s_per_million"].get<double>();
        }
      }
      std::string measured;
      double worst = -1;
      for (const auto& [pipeline, by_k] : cost) {
        if (!by_k.count(1) || !by_k.count(100) || by_k.at(1) <= 0) continue;
        const double g = by_k.at(100) / by_k.at(1);
        worst = std::max(worst, g);
        if (!measured.empty()) measured += ", ";
        measured += pipeline + " " + Fmt("%.2fx", g);
      }
      if (worst > 0) {
        x.measured = measured;
        x.status = Status(worst <= 1.5);
      }
    }
    MissWhenNoFigure(x, HasRun(load, 1) && HasRun(load, 100));
    t.push_back(x);
  }
  {
    Target x{"Delivered == sent in every skald run", "-", "n/a"};
    int runs = 0, bad = 0;
    if (load) {
      for (const auto& r : (*load)["runs"]) {
        ++runs;
        if (!r.value("ok", false)) ++bad;
      }
      if (load->contains("outage")) {
        ++runs;
        if (!(*load)["outage"].value("ok", false)) ++bad;
      }
    }
    if (docker) {
      for (const auto& r : (*docker)["results"]) {
        if (r.value("driver", "") != "skald") continue;
        for (const auto& run : r["runs"]) {
          if (run.contains("interrupted")) continue;  // someone replaced the plugin meanwhile
          ++runs;
          if (run.value("delivered", -1LL) != docker->value("lines", 0LL) ||
              run.value("restarted", false)) {
            ++bad;
          }
        }
      }
    }
    if (runs > 0) {
      x.measured = std::to_string(runs - bad) + " of " + std::to_string(runs) + " runs";
      x.status = Status(bad == 0);
      *lost_lines = bad > 0;
    }
    MissWhenNoFigure(x, load_ran || docker_ran);
    t.push_back(x);
  }
  return t;
}

void PrintTargets(const std::vector<Target>& targets) {
  std::cout << "### Targets (issues 5 and 24)\n\n| target | measured | |\n|---|---|---|\n";
  for (const auto& t : targets) {
    std::cout << "| " << t.name << " | " << t.measured << " | " << t.status << " |\n";
  }
  std::cout << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> micro_files;
  std::string load_file, docker_file, fleet_alone_file, fleet_docker_file, out_file;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--micro") {
      micro_files.push_back(argv[i + 1]);
    } else if (a == "--load") {
      load_file = argv[i + 1];
    } else if (a == "--docker") {
      docker_file = argv[i + 1];
    } else if (a == "--fleet-alone") {
      fleet_alone_file = argv[i + 1];
    } else if (a == "--fleet-docker") {
      fleet_docker_file = argv[i + 1];
    } else if (a == "--out") {
      out_file = argv[i + 1];
    } else {
      std::cerr << "bench_report: unknown argument '" << a << "'\n";
      return 2;
    }
  }
  json results = json::object();
  const json micro = MicroRows(micro_files);
  results["micro"] = micro;
  if (!micro.empty()) PrintMicro(micro);

  std::optional<json> load, docker;
  if (!load_file.empty()) {
    load = ReadJson(load_file);
    if (!load) std::cerr << "bench_report: cannot read " << load_file << "\n";
  }
  if (!docker_file.empty()) {
    docker = ReadJson(docker_file);
    if (!docker) std::cerr << "bench_report: cannot read " << docker_file << "\n";
  }
  if (load) {
    results["plugin_alone"] = *load;
    PrintLoad(*load);
  } else {
    if (!load_file.empty()) std::cout << "### Plugin alone\n\nno result\n\n";
  }
  if (docker && docker->contains("results")) {
    results["docker"] = *docker;
    PrintDocker(*docker);
  } else if (!docker_file.empty()) {
    std::cout << "### Real Docker, side by side\n\nnot run"
              << (docker && docker->contains("skipped")
                      ? ": " + (*docker)["skipped"].get<std::string>()
                      : std::string())
              << "\n\n";
    if (docker) results["docker"] = *docker;
  }
  std::optional<json> fleet_alone, fleet_docker;
  for (auto [file, j] :
       {std::pair{&fleet_alone_file, &fleet_alone}, std::pair{&fleet_docker_file, &fleet_docker}}) {
    if (file->empty()) continue;
    *j = ReadJson(*file);
    if (!*j) std::cerr << "bench_report: cannot read " << *file << "\n";
  }
  if (fleet_alone || fleet_docker) {
    skald::bench::PrintFleet(fleet_alone, fleet_docker,
                             docker && docker->contains("results") ? docker : std::nullopt);
    if (fleet_alone) results["fleet_alone"] = *fleet_alone;
    if (fleet_docker) results["fleet_docker"] = *fleet_docker;
  }
  bool lost = false;
  bool unreadable = false;
  for (const auto& [file, j] :
       {std::pair{&load_file, &load}, std::pair{&docker_file, &docker},
        std::pair{&fleet_alone_file, &fleet_alone}, std::pair{&fleet_docker_file, &fleet_docker}}) {
    if (!file->empty() && !*j) unreadable = true;
  }
  json jt = json::array();
  if (!micro.empty() || load || docker) {
    const auto targets =
        Targets(load, docker && docker->contains("results") ? docker : std::nullopt, &lost);
    PrintTargets(targets);
    for (const auto& t : targets) {
      jt.push_back({{"target", t.name}, {"measured", t.measured}, {"status", t.status}});
    }
  }
  if (fleet_alone || fleet_docker) {
    bool fleet_lost = false;
    const auto targets = skald::bench::FleetTargets(fleet_alone, fleet_docker, &fleet_lost);
    std::cout << "### Targets (issue 16: fleet)\n\n| target | measured | |\n|---|---|---|\n";
    for (const auto& t : targets) {
      std::cout << "| " << t.name << " | " << t.measured << " | " << t.status << " |\n";
      jt.push_back({{"target", t.name}, {"measured", t.measured}, {"status", t.status}});
    }
    std::cout << "\n";
    lost = lost || fleet_lost;
  }
  results["targets"] = jt;
  if (!out_file.empty()) std::ofstream(out_file) << results.dump(2) << "\n";
  if (lost) std::cerr << "bench_report: some run lost or duplicated lines (see the tables)\n";
  int missed = 0;
  for (const auto& t : jt) {
    if (t["status"] == "MISS") {
      std::cerr << "bench_report: missed: " << t["target"].get<std::string>() << ": "
                << t["measured"].get<std::string>() << "\n";
      ++missed;
    }
  }
  if (unreadable) std::cerr << "bench_report: an input could not be read (see above)\n";
  return lost || missed > 0 || unreadable ? 1 : 0;
}
