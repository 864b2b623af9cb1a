#include "tests/bench/idle_stats.h"

#include <dirent.h>

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "tests/bench/proc_stats.h"

namespace skald::bench {

std::map<int, std::pair<std::string, long long>> ThreadSwitches(pid_t pid) {
  std::map<int, std::pair<std::string, long long>> out;
  const std::string base = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = opendir(base.c_str());
  if (dir == nullptr) return out;
  while (dirent* e = readdir(dir)) {
    const int tid = std::atoi(e->d_name);
    if (tid <= 0) continue;
    const std::string task = base + "/" + e->d_name;
    std::string comm = ReadFileOr(task + "/comm");
    while (!comm.empty() && comm.back() == '\n') comm.pop_back();
    std::istringstream in(ReadFileOr(task + "/status"));
    long long voluntary = -1;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) {
        voluntary = std::atoll(line.c_str() + 24);
      }
    }
    if (voluntary >= 0) out[tid] = {comm, voluntary};
  }
  closedir(dir);
  return out;
}

std::map<std::string, nlohmann::json> MeasureIdle(const std::map<std::string, pid_t>& pids,
                                                  int seconds) {
  using Clock = std::chrono::steady_clock;
  std::map<std::string, std::map<int, std::pair<std::string, long long>>> before;
  std::map<std::string, double> cpu0;
  for (const auto& [name, pid] : pids) {
    before[name] = ThreadSwitches(pid);
    cpu0[name] = ProcessCpuSeconds(pid);
  }
  const auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  std::map<std::string, nlohmann::json> out;
  for (const auto& [name, pid] : pids) {
    const double cpu = ProcessCpuSeconds(pid) - cpu0[name];
    const auto after = ThreadSwitches(pid);
    long long total = 0;
    std::map<std::string, long long> by_name;
    for (const auto& [tid, name_count] : after) {
      auto it = before[name].find(tid);
      const long long d = name_count.second - (it == before[name].end() ? 0 : it->second.second);
      total += d;
      by_name[name_count.first] += d;
    }
    nlohmann::json threads = nlohmann::json::object();
    for (const auto& [n, c] : by_name) {
      if (c > 0) threads[n] = static_cast<double>(c) / wall;
    }
    out[name] = {{"seconds", wall},
                 {"cpu_s", cpu},
                 {"cpu_percent", cpu / wall * 100.0},
                 {"wakeups_per_s", static_cast<double>(total) / wall},
                 {"threads", after.size()},
                 {"rss_bytes", ProcessStatusBytes(pid, "VmRSS")},
                 {"wakeups_per_s_by_thread", threads}};
  }
  return out;
}

}  // namespace skald::bench
