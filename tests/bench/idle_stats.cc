#include "tests/bench/idle_stats.h"

#include <dirent.h>

#include <algorithm>
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
  using Switches = std::map<int, std::pair<std::string, long long>>;
  std::map<std::string, Switches> before;
  std::map<std::string, Switches> last;  // every thread seen in the window, as last read
  std::map<std::string, double> cpu0;
  for (const auto& [name, pid] : pids) {
    before[name] = ThreadSwitches(pid);
    last[name] = before[name];
    cpu0[name] = ProcessCpuSeconds(pid);
  }
  // Threads are read again every kPoll: one that exits within the window keeps the count it
  // had at the last reading (at most kPoll of its wake-ups are missed; one that lives less than
  // kPoll may be missed whole).
  constexpr auto kPoll = std::chrono::milliseconds(50);
  const auto t0 = Clock::now();
  const auto until = t0 + std::chrono::seconds(seconds);
  for (auto now = Clock::now(); now < until; now = Clock::now()) {
    std::this_thread::sleep_for(std::min<Clock::duration>(kPoll, until - now));
    for (const auto& [name, pid] : pids) {
      for (const auto& [tid, name_count] : ThreadSwitches(pid)) last[name][tid] = name_count;
    }
  }
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  std::map<std::string, nlohmann::json> out;
  for (const auto& [name, pid] : pids) {
    const auto cpu = CpuBetween(cpu0[name], ProcessCpuSeconds(pid));
    if (!cpu) {
      out[name] = {{"seconds", wall},
                   {"error", "the process " + std::to_string(pid) +
                                 " was gone at the end of the window: no figure"}};
      continue;
    }
    const Switches after = ThreadSwitches(pid);
    long long total = 0;
    std::map<std::string, long long> by_name;
    for (const auto& [tid, name_count] : last[name]) {
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
                 {"cpu_s", *cpu},
                 {"cpu_percent", *cpu / wall * 100.0},
                 {"wakeups_per_s", static_cast<double>(total) / wall},
                 {"threads", after.size()},
                 {"threads_seen", last[name].size()},
                 {"rss_bytes", ProcessStatusBytes(pid, "VmRSS")},
                 {"hwm_bytes", ProcessStatusBytes(pid, "VmHWM")},
                 {"wakeups_per_s_by_thread", threads}};
  }
  return out;
}

}  // namespace skald::bench
