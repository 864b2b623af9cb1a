// ProcStats: what /proc says about one process, for the benchmarks' CPU and memory figures.
//
// CPU is utime + stime of the whole process (all threads, children not included), in
// seconds. Memory figures are the kernel's VmRSS and VmHWM (peak RSS) in bytes. Every reader
// returns a negative value when the process is gone or the file cannot be parsed.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace skald::bench {

double ProcessCpuSeconds(pid_t pid);
// The CPU seconds used between two ProcessCpuSeconds readings; nullopt when either failed (the
// process was gone) or the second is below the first (not the same process): a figure that
// must not be reported.
std::optional<double> CpuBetween(double before, double after);
long long ProcessStatusBytes(pid_t pid, const std::string& field);  // "VmHWM", "VmRSS"
// Resets VmHWM to the current RSS (writes 5 to /proc/PID/clear_refs; needs the right to).
bool ResetPeakRss(pid_t pid);
// Children of `parent` (from /proc/*/stat).
std::vector<pid_t> ChildPids(pid_t parent);
// Processes whose command name (/proc/PID/comm) is `comm`.
std::vector<pid_t> PidsByComm(const std::string& comm);
std::string ReadFileOr(const std::string& path, const std::string& fallback = "");

}  // namespace skald::bench
