#include "tests/bench/proc_stats.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace skald::bench {
namespace {

// The fields of /proc/PID/stat after the command name (which may hold spaces and parens).
std::vector<std::string> StatFields(pid_t pid) {
  const std::string stat = ReadFileOr("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream in(stat.substr(close + 1));
  std::vector<std::string> fields;
  for (std::string f; in >> f;) fields.push_back(f);
  return fields;  // fields[0] is `state` (field 3 of proc(5))
}

}  // namespace

std::string ReadFileOr(const std::string& path, const std::string& fallback) {
  std::ifstream in(path);
  if (!in) return fallback;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

double ProcessCpuSeconds(pid_t pid) {
  const auto f = StatFields(pid);
  if (f.size() < 13) return -1;
  // utime and stime are fields 14 and 15 of proc(5): 11 and 12 here.
  const double ticks = std::strtod(f[11].c_str(), nullptr) + std::strtod(f[12].c_str(), nullptr);
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

std::optional<double> CpuBetween(double before, double after) {
  if (before < 0 || after < 0 || after < before) return std::nullopt;
  return after - before;
}

long long ProcessStatusBytes(pid_t pid, const std::string& field) {
  std::istringstream in(ReadFileOr("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) == 0) {
      return std::atoll(line.c_str() + field.size() + 1) * 1024;  // "VmHWM:   1234 kB"
    }
  }
  return -1;
}

bool ResetPeakRss(pid_t pid) {
  std::ofstream out("/proc/" + std::to_string(pid) + "/clear_refs");
  out << "5\n";
  out.flush();
  return static_cast<bool>(out);
}

std::vector<pid_t> ChildPids(pid_t parent) {
  std::vector<pid_t> out;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return out;
  while (dirent* e = readdir(dir)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    const auto f = StatFields(pid);
    if (f.size() > 1 && std::atoi(f[1].c_str()) == parent) out.push_back(pid);
  }
  closedir(dir);
  return out;
}

std::vector<pid_t> PidsByComm(const std::string& comm) {
  std::vector<pid_t> out;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return out;
  while (dirent* e = readdir(dir)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    std::string c = ReadFileOr("/proc/" + std::to_string(pid) + "/comm");
    while (!c.empty() && c.back() == '\n') c.pop_back();
    if (c == comm) out.push_back(pid);
  }
  closedir(dir);
  return out;
}

}  // namespace skald::bench
