// IdleStats: what an idle process costs over a while: CPU, wake-ups (voluntary context
// switches) in all and by thread name, threads, RSS. For the fleet benchmarks' idle figures.
#pragma once

#include <sys/types.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

namespace skald::bench {

// Per thread of `pid`: its name and voluntary context switches (how often it went to sleep,
// i.e. woke up again).
std::map<int, std::pair<std::string, long long>> ThreadSwitches(pid_t pid);

// The idle figures of the processes `pids` (by a name of the caller's) over the same
// `seconds`: seconds, cpu_s, cpu_percent, wakeups_per_s (of every thread that lived in the
// window: threads are read every 50 ms), threads (at the end), threads_seen, rss_bytes, hwm_bytes
// (the process's peak so far), wakeups_per_s_by_thread; or seconds and `error` when a process was
// gone (no figure).
std::map<std::string, nlohmann::json> MeasureIdle(const std::map<std::string, pid_t>& pids,
                                                  int seconds);

}  // namespace skald::bench
