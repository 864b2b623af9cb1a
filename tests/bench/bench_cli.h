// BenchCli: the command line and the output of the benchmark programs (plugin_load_bench,
// fleet_bench, docker_bench, docker_fleet_bench): `--flag value` pairs, comma lists, NxM
// workloads, the JSON result to a file or stdout, and a main() that reports what escapes.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace skald::bench {

// Walks argv[1..] as `--flag value` pairs, calling `take(flag, value)`, which returns false for
// a flag it does not know. On a flag without a value or an unknown one, prints
// "<program>: ..." to stderr and returns false (the caller exits with 2).
bool ParseFlags(int argc, char** argv, const char* program,
                const std::function<bool(const std::string& flag, const std::string& value)>& take);

// "a,b,,c" -> {"a", "b", "c"} (empty parts skipped).
std::vector<std::string> SplitList(const std::string& s);
// "1,10,50" -> {1, 10, 50}; throws std::invalid_argument on a part that is not a number.
std::vector<int> IntList(const std::string& s);
// "100x10,100x2000" -> {{100, 10}, {100, 2000}}; throws std::invalid_argument naming `flag`
// when a part is not NxM.
std::vector<std::pair<int, int>> WorkloadList(const std::string& s, const std::string& flag);

// Writes `out` (indented) to `path`, or to stdout when `path` is empty.
void WriteJson(const nlohmann::json& out, const std::string& path);

// Runs `bench_main`; an exception is printed as "<program>: what" and returns 1.
int RunMain(const char* program, int (*bench_main)(int, char**), int argc, char** argv);

}  // namespace skald::bench
