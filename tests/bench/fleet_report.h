// The fleet part of bench_report: the tables of fleet_bench (plugin alone) and
// docker_fleet_bench (real Docker, skald and the Go driver side by side) and the targets of
// issue 16.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace skald::bench {

struct FleetTarget {
  std::string name;
  std::string measured;
  std::string status;  // PASS, MISS, n/a
};

// Prints the markdown tables. `docker` is the docker part's JSON (its seed-pipeline rows give
// the table's first row), when it ran.
void PrintFleet(const std::optional<nlohmann::json>& alone,
                const std::optional<nlohmann::json>& docker_fleet,
                const std::optional<nlohmann::json>& docker);

// The targets; *lost_lines is set when a skald run lost lines or did not end its streams.
std::vector<FleetTarget> FleetTargets(const std::optional<nlohmann::json>& alone,
                                      const std::optional<nlohmann::json>& docker_fleet,
                                      bool* lost_lines);

}  // namespace skald::bench
