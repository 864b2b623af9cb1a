#include "tests/bench/fleet_report.h"

#include <cstdio>
#include <iostream>

namespace skald::bench {

namespace {

using json = nlohmann::json;

// Per-container cost and idle targets (issue 16).
constexpr double kMaxMsPerContainer = 5.0;
constexpr double kMinGoOverSkald = 5.0;  // 100 containers x 2,000 lines
constexpr double kMaxIdlePercent = 0.1;
constexpr double kMaxIdleWakeups = 1.5;  // "about one wake-up per second at most"
// Per-container cost against the Go driver (issue 24): 100 containers x 10 lines.
constexpr double kMaxMsPerShortContainer = 2.0;
constexpr double kMinGoOverSkaldShort = 5.0;
// Idle memory (issue 24): a fresh plugin's peak, and where it is once a burst's clients retired.
constexpr double kMb = 1048576.0;
constexpr double kMaxStartHwmMb = 10.0;
constexpr double kMaxSettledRssGrowthMb = 2.0;

std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string Status(std::optional<bool> pass) {
  if (!pass) return "n/a";
  return *pass ? "PASS" : "MISS";
}

// A target whose part ran but left no figure (the plugin died, a start failed, a program
// failed) is missed; n/a is only for a part that was not run.
void MissWhenNoFigure(FleetTarget& t, bool part_ran, const std::string& why = "") {
  if (t.status == "n/a" && part_ran) {
    t.status = "MISS";
    t.measured = "no figure" + (why.empty() ? std::string() : ": " + why);
  }
}

std::string ErrorOf(const json* r) {
  if (r == nullptr) return "no run";
  if (r->contains("error")) return (*r)["error"].get<std::string>().substr(0, 200);
  if (r->value("start_failures", 0) > 0) {
    return std::to_string(r->value("start_failures", 0)) + " containers failed to start";
  }
  return "";
}

const json* FleetRun(const json& fleet, const std::string& driver, int containers, int lines) {
  if (!fleet.contains("runs")) return nullptr;
  for (const auto& r : fleet["runs"]) {
    if (r.value("driver", "skald") == driver && r.value("containers", 0) == containers &&
        r.value("lines_per_container", 0) == lines) {
      return &r;
    }
  }
  return nullptr;
}

// The skald and Go driver runs of one N x M workload on Docker, and the Go driver's plugin CPU
// over skald's (0 when either has no CPU figure).
struct SideBySide {
  const json* skald = nullptr;
  const json* go = nullptr;
  double ratio = 0;
  bool started_all() const {
    return skald->value("start_failures", 0) == 0 && go->value("start_failures", 0) == 0;
  }
  std::string error() const { return ErrorOf(skald).empty() ? ErrorOf(go) : ErrorOf(skald); }
};
SideBySide SideBySideRuns(const std::optional<json>& fleet, bool ran, int containers, int lines) {
  SideBySide r;
  if (!ran) return r;
  r.skald = FleetRun(*fleet, "skald", containers, lines);
  r.go = FleetRun(*fleet, "go", containers, lines);
  if (r.skald && r.go && r.skald->value("plugin_cpu_s", 0.0) > 0 &&
      r.go->value("plugin_cpu_s", 0.0) > 0) {
    r.ratio = r.go->value("plugin_cpu_s", 0.0) / (*r.skald)["plugin_cpu_s"].get<double>();
  }
  return r;
}

std::string Cpu(const json* r) {
  if (r == nullptr || !r->contains("plugin_cpu_s")) return "-";
  std::string s = Fmt("%.2f s", (*r)["plugin_cpu_s"].get<double>());
  if (r->value("containers", 0) > 1) {
    s += " (" + Fmt("%.1f", r->value("cpu_ms_per_container", 0.0)) + " ms per container)";
  }
  if (!r->value("all_delivered", false)) {
    s += " " + std::to_string(r->value("delivered", 0ULL)) + "/" +
         std::to_string(r->value("expected", 0ULL)) + " delivered";
  }
  return s;
}

std::string Ratio(const json* go, const json* skald) {
  if (go == nullptr || skald == nullptr || skald->value("plugin_cpu_s", 0.0) <= 0) return "-";
  return Fmt("%.1fx", go->value("plugin_cpu_s", 0.0) / (*skald)["plugin_cpu_s"].get<double>());
}

std::string Idle(const json& m) {
  if (!m.contains("cpu_percent")) return "-";
  std::string s = Fmt("%.3f%% of a core", m["cpu_percent"].get<double>()) + ", " +
                  Fmt("%.2f wake-ups/s", m["wakeups_per_s"].get<double>());
  if (m.contains("rss_bytes")) s += ", RSS " + Fmt("%.1f MB", m["rss_bytes"].get<double>() / kMb);
  if (m.contains("threads")) s += ", " + std::to_string(m["threads"].get<int>()) + " threads";
  return s;
}

std::string ByThread(const json& m) {
  std::string s;
  if (!m.contains("wakeups_per_s_by_thread")) return s;
  for (const auto& [name, rate] : m["wakeups_per_s_by_thread"].items()) {
    if (!s.empty()) s += ", ";
    s += name + " " + Fmt("%.2f", rate.get<double>());
  }
  return s.empty() ? "none" : s;
}

const json* DockerSeed(const json& docker, const std::string& driver) {
  if (!docker.contains("results")) return nullptr;
  for (const auto& r : docker["results"]) {
    if (r.value("driver", "") == driver && r.value("pipeline", "") == "seed") return &r;
  }
  return nullptr;
}

std::string SeedRuns(const json* r) {
  if (r == nullptr) return "-";
  std::string s;
  for (const auto& run : (*r)["runs"]) {
    if (!run.contains("plugin_cpu_s")) continue;
    if (!s.empty()) s += " / ";
    s += Fmt("%.2f", run["plugin_cpu_s"].get<double>());
  }
  return s.empty() ? "-" : s + " s";
}

}  // namespace

void PrintFleet(const std::optional<json>& alone, const std::optional<json>& docker_fleet,
                const std::optional<json>& docker) {
  if (docker_fleet && docker_fleet->contains("runs")) {
    const json& f = *docker_fleet;
    std::cout << "### Fleet: real Docker, skald and Grafana's Go driver "
              << f.value("go_driver_version", "?") << " side by side (one real Loki; containers "
              << "started " << f.value("parallel", 0) << " at a time; plugin CPU until Loki "
              << "holds every line and, for skald, every stream ended)\n\n"
              << "| workload | Go driver plugin CPU | skald plugin CPU | Go / skald |\n"
              << "|---|---|---|---:|\n";
    if (docker) {
      const json* s = DockerSeed(*docker, "skald");
      const json* g = DockerSeed(*docker, "go");
      if (s || g) {
        std::string ratio = "-";
        if (s && g && s->contains("median") && g->contains("median") &&
            s->at("median").value("plugin_cpu_s", 0.0) > 0) {
          ratio = Fmt("%.1fx", g->at("median").value("plugin_cpu_s", 0.0) /
                                   s->at("median").value("plugin_cpu_s", 0.0));
        }
        std::cout << "| 1 container x " << docker->value("lines", 0)
                  << " lines, seed pipeline (docker part, each run) | " << SeedRuns(g) << " | "
                  << SeedRuns(s) << " | " << ratio << " (medians) |\n";
      }
    }
    for (const auto& w : f.value("runs_asked", json::array())) {
      const int n = w[0].get<int>();
      const int m = w[1].get<int>();
      const json* s = FleetRun(f, "skald", n, m);
      const json* g = FleetRun(f, "go", n, m);
      std::cout << "| " << n << " containers x " << m << " lines, started at once | " << Cpu(g)
                << " | " << Cpu(s) << " | " << Ratio(g, s) << " |\n";
    }
    const json idle = f.value("idle", json::object());
    auto idle_row = [&](const std::string& label, const std::string& key) {
      if (!idle.contains(key)) return;
      const json& i = idle[key];
      std::cout << "| " << label << " | " << (i.contains("go") ? Idle(i["go"]) : "-") << " | "
                << (i.contains("skald") ? Idle(i["skald"]) : "-") << " | |\n";
    };
    const int s = f.value("idle_s", 0);
    idle_row("idle " + std::to_string(s) + " s, nothing kept", "empty");
    idle_row("idle " + std::to_string(s) + " s after the runs (their journals kept)", "after_runs");
    idle_row("idle 5 s, " + std::to_string(f.value("settle_s", 0)) +
                 " s after the runs (their Loki clients retired)",
             "settled");
    if (idle.contains("journals") && idle["journals"].contains("skald")) {
      idle_row("idle " + std::to_string(s) + " s, " +
                   std::to_string(idle["journals"]["skald"].value("journals", 0)) +
                   " stopped containers' journals kept (plugin restarted on them)",
               "journals");
    }
    std::cout << "\nWake-ups per second by thread (skald): ";
    for (const char* key : {"empty", "after_runs", "settled", "journals"}) {
      if (idle.contains(key) && idle[key].contains("skald")) {
        std::cout << key << ": " << ByThread(idle[key]["skald"]) << "; ";
      }
    }
    std::cout << "\n\n";
  } else if (docker_fleet) {
    std::cout << "### Fleet: real Docker\n\nnot run"
              << (docker_fleet->contains("skipped")
                      ? ": " + (*docker_fleet)["skipped"].get<std::string>()
                      : std::string())
              << "\n\n";
  }
  if (alone && alone->contains("runs")) {
    std::cout << "### Fleet: plugin alone (fake daemon -> skald -> fake Loki sink; every "
                 "container started, written and stopped at once)\n\n"
              << "| workload | plugin CPU | per container | delivered | streams ended |\n"
              << "|---|---:|---:|---|---|\n";
    for (const auto& r : (*alone)["runs"]) {
      std::cout << "| " << r.value("containers", 0) << " containers x "
                << r.value("lines_per_container", 0) << " lines | "
                << Fmt("%.3f s", r.value("cpu_s", 0.0)) << " | "
                << Fmt("%.2f ms", r.value("cpu_ms_per_container", 0.0)) << " | "
                << r.value("delivered_total", 0ULL) << " / " << r.value("expected_total", 0ULL)
                << " | " << (r.value("streams_ended", false) ? "yes" : "**no**") << " |\n";
    }
    std::cout << "\n| idle, journals kept | after they were made | after a restart on them | "
                 "wake-ups by thread (after a restart) |\n|---:|---|---|---|\n";
    for (const auto& i : (*alone)["idle"]) {
      std::cout << "| " << i.value("journals", 0) << " | "
                << (i.contains("after_run") ? Idle(i["after_run"]) : "-") << " | "
                << (i.contains("after_restart") ? Idle(i["after_restart"]) : "-") << " | "
                << (i.contains("after_restart")
                        ? ByThread(i["after_restart"])
                        : (i.contains("after_run") ? ByThread(i["after_run"]) : std::string("-")))
                << " |\n";
    }
    std::cout << "\n";
  }
}

std::vector<FleetTarget> FleetTargets(const std::optional<json>& alone,
                                      const std::optional<json>& docker_fleet, bool* lost_lines) {
  std::vector<FleetTarget> t;
  *lost_lines = false;
  const bool docker_ran = docker_fleet && docker_fleet->contains("runs");
  {
    FleetTarget x{"Docker: per-container plugin CPU, 100 containers x 10 lines <= 5 ms", "-",
                  "n/a"};
    const json* s = docker_ran ? FleetRun(*docker_fleet, "skald", 100, 10) : nullptr;
    if (s && s->contains("cpu_ms_per_container") && s->value("start_failures", 0) == 0) {
      const double ms = (*s)["cpu_ms_per_container"].get<double>();
      x.measured = Fmt("%.2f ms", ms);
      const json* g = FleetRun(*docker_fleet, "go", 100, 10);
      if (g && g->contains("cpu_ms_per_container")) {
        x.measured += " (Go driver " + Fmt("%.2f ms", (*g)["cpu_ms_per_container"]) + ")";
      }
      x.status = Status(ms >= 0 && ms <= kMaxMsPerContainer);
    }
    MissWhenNoFigure(x, docker_ran && FleetRun(*docker_fleet, "skald", 100, 10), ErrorOf(s));
    t.push_back(x);
  }
  {
    FleetTarget x{
        "Docker: 100 containers x 10 lines, skald <= 2 ms per container and the Go "
        "driver's plugin CPU >= 5x skald's",
        "-", "n/a"};
    const SideBySide r = SideBySideRuns(docker_fleet, docker_ran, 100, 10);
    if (r.ratio > 0 && r.skald->contains("cpu_ms_per_container")) {
      const double ms = (*r.skald)["cpu_ms_per_container"].get<double>();
      x.measured = Fmt("%.2f ms", ms) + ", " + Fmt("%.1fx", r.ratio) + " (Go driver " +
                   Fmt("%.2f ms", r.go->value("cpu_ms_per_container", 0.0)) + ")";
      x.status = Status(ms <= kMaxMsPerShortContainer && r.ratio >= kMinGoOverSkaldShort &&
                        r.started_all());
    }
    MissWhenNoFigure(x, r.skald != nullptr, r.error());
    t.push_back(x);
  }
  {
    FleetTarget x{"Plugin alone: per-container plugin CPU, 100 containers x 10 lines <= 5 ms", "-",
                  "n/a"};
    if (alone && alone->contains("runs")) {
      for (const auto& r : (*alone)["runs"]) {
        if (r.value("containers", 0) == 100 && r.value("lines_per_container", 0) == 10) {
          if (r.value("ok", false) && r.contains("cpu_ms_per_container")) {
            const double ms = r["cpu_ms_per_container"].get<double>();
            x.measured = Fmt("%.2f ms", ms);
            x.status = Status(ms >= 0 && ms <= kMaxMsPerContainer);
          } else {
            MissWhenNoFigure(x, true, r.contains("error") ? ErrorOf(&r) : "the run was not ok");
          }
        }
      }
    }
    t.push_back(x);
  }
  {
    FleetTarget x{
        "Docker: 100 containers x 2,000 lines at once, Go driver plugin CPU >= 5x skald's, "
        "every line delivered",
        "-", "n/a"};
    const SideBySide r = SideBySideRuns(docker_fleet, docker_ran, 100, 2000);
    if (r.ratio > 0) {
      const json& sk = *r.skald;
      x.measured = Fmt("%.1fx", r.ratio) + " (" + Fmt("%.2f", r.go->value("plugin_cpu_s", 0.0)) +
                   " vs " + Fmt("%.2f", sk["plugin_cpu_s"].get<double>()) + " CPU-s; skald " +
                   std::to_string(sk.value("delivered", 0ULL)) + "/" +
                   std::to_string(sk.value("expected", 0ULL)) + " delivered)";
      x.status =
          Status(r.ratio >= kMinGoOverSkald && sk.value("all_delivered", false) && r.started_all());
    }
    MissWhenNoFigure(x, r.skald != nullptr, r.error());
    t.push_back(x);
  }
  {
    FleetTarget x{
        "Docker: skald idle, fresh: VmHWM <= 10 MB; after the runs, once their Loki clients "
        "retired: VmRSS within 2 MB of the fresh figure, the same threads",
        "-", "n/a"};
    const json idle = docker_ran ? docker_fleet->value("idle", json::object()) : json::object();
    const json start = idle.value("empty", json::object()).value("skald", json::object());
    const json settled = idle.value("settled", json::object()).value("skald", json::object());
    if (start.contains("hwm_bytes") && start.contains("rss_bytes") &&
        settled.contains("rss_bytes") && start.contains("threads") && settled.contains("threads")) {
      const double hwm = start["hwm_bytes"].get<double>() / kMb;
      const double rss0 = start["rss_bytes"].get<double>() / kMb;
      const double rss1 = settled["rss_bytes"].get<double>() / kMb;
      const int threads0 = start["threads"].get<int>(), threads1 = settled["threads"].get<int>();
      x.measured = "fresh: VmHWM " + Fmt("%.1f MB", hwm) + ", VmRSS " + Fmt("%.1f MB", rss0) +
                   ", " + std::to_string(threads0) + " threads; settled: VmRSS " +
                   Fmt("%.1f MB", rss1) + " (" + Fmt("%+.1f MB", rss1 - rss0) + "), " +
                   std::to_string(threads1) + " threads";
      x.status = Status(hwm > 0 && hwm <= kMaxStartHwmMb && rss1 - rss0 <= kMaxSettledRssGrowthMb &&
                        threads1 == threads0);
    }
    const bool measured = docker_ran && idle.contains("settled");
    MissWhenNoFigure(x, measured, ErrorOf(settled.contains("error") ? &settled : &start));
    t.push_back(x);
  }
  auto idle_target = [&](const std::string& name, const json* m, const std::string& extra,
                         bool part_ran) {
    FleetTarget x{name, "-", "n/a"};
    if (m && m->contains("cpu_percent")) {
      x.measured = Idle(*m) + extra;
      x.status = Status((*m)["cpu_percent"].get<double>() >= 0 &&
                        (*m)["cpu_percent"].get<double>() <= kMaxIdlePercent &&
                        (*m)["wakeups_per_s"].get<double>() <= kMaxIdleWakeups);
    }
    MissWhenNoFigure(x, part_ran, m ? ErrorOf(m) : "no idle measurement");
    t.push_back(x);
  };
  {
    const json* m = nullptr;
    std::string extra;
    if (docker_ran && docker_fleet->contains("idle") &&
        (*docker_fleet)["idle"].contains("journals") &&
        (*docker_fleet)["idle"]["journals"].contains("skald")) {
      m = &(*docker_fleet)["idle"]["journals"]["skald"];
      extra = " with " + std::to_string(m->value("journals", 0)) + " journals";
    }
    idle_target("Docker: idle with 1,000 journals kept <= 0.1% of a core, about 1 wake-up/s", m,
                extra, docker_ran);
  }
  {
    const json* m = nullptr;
    if (alone && alone->contains("idle")) {
      for (const auto& i : (*alone)["idle"]) {
        if (i.value("journals", 0) >= 1000 && i.contains("after_restart")) m = &i["after_restart"];
      }
    }
    idle_target(
        "Plugin alone: idle with 1,000 journals kept (restarted on them) <= 0.1%, about 1 "
        "wake-up/s",
        m, "", [&] {
          if (!alone || !alone->contains("idle")) return false;
          for (const auto& i : (*alone)["idle"]) {
            if (i.value("journals", 0) >= 1000) return true;
          }
          return false;
        }());
  }
  {
    FleetTarget x{"Fleet: every skald line delivered, every stream ended, every container started",
                  "-", "n/a"};
    int runs = 0, bad = 0;
    if (alone && alone->contains("runs")) {
      for (const auto& r : (*alone)["runs"]) {
        ++runs;
        bad += r.value("ok", false) ? 0 : 1;
      }
    }
    if (docker_ran) {
      for (const auto& r : (*docker_fleet)["runs"]) {
        if (r.value("driver", "") != "skald") continue;
        ++runs;
        bad += r.value("all_delivered", false) && r.value("streams_ended", false) &&
                       !r.value("restarted", false) && r.value("start_failures", 0) == 0
                   ? 0
                   : 1;
      }
    }
    if (runs > 0) {
      x.measured = std::to_string(runs - bad) + " of " + std::to_string(runs) + " runs";
      x.status = Status(bad == 0);
      *lost_lines = bad > 0;
    }
    t.push_back(x);
  }
  return t;
}

}  // namespace skald::bench
