#include "tests/bench/docker_bench_support.h"

#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

#include "tests/bench/proc_stats.h"

namespace skald::bench {

using namespace std::chrono_literals;
using e2e::Docker;

void Must(const e2e::CommandResult& r) {
  if (!r.ok()) throw std::runtime_error(r.Describe());
}

std::string RunningE2eTests() {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    std::string cmdline = ReadFileOr(entry.path().string() + "/cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find("e2e_tests") != std::string::npos) return name + ": " + e2e::Trim(cmdline);
  }
  return "";
}

std::string PluginId(const std::string& plugin) {
  auto id = Docker({"plugin", "inspect", "--format", "{{.Id}}", plugin}, 30s);
  return id.ok() ? e2e::Trim(id.out) : "";
}

pid_t PluginPid(const std::string& plugin_id) {
  if (plugin_id.empty()) return -1;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    const std::string cgroup = ReadFileOr(entry.path().string() + "/cgroup");
    const std::string comm = e2e::Trim(ReadFileOr(entry.path().string() + "/comm"));
    if (cgroup.find(plugin_id) != std::string::npos && comm.rfind("containerd", 0) != 0) {
      return static_cast<pid_t>(std::stoi(name));
    }
  }
  return -1;
}

double LokiLinesReceived(int port) {
  auto text = e2e::FetchMetrics(port);
  if (!text) return -1;
  auto totals = e2e::ParsePrometheusTotals(*text);
  auto it = totals.find("loki_distributor_lines_received_total");
  return it == totals.end() ? 0 : it->second;
}

double LokiPushRequests(int port) {
  auto text = e2e::FetchMetrics(port);
  if (!text) return -1;
  // loki_request_duration_seconds_count{method="POST",route="loki_api_v1_push",...} N
  const std::string_view name = "loki_request_duration_seconds_count{";
  double total = 0;
  for (const auto& line : e2e::SplitLines(*text)) {
    if (line.rfind(name, 0) != 0) continue;
    const auto close = line.find('}');
    if (close == std::string::npos) continue;
    if (line.substr(0, close).find("route=\"loki_api_v1_push\"") == std::string::npos) continue;
    total += std::strtod(line.c_str() + close + 1, nullptr);
  }
  return total;
}

LokiProcess::LokiProcess(std::string dir, int port) : dir_(std::move(dir)), port_(port) {
  const std::string src = e2e::SourceDir();
  Must(e2e::RunCommand({src + "/tests/e2e/loki/start-loki.sh", dir_, std::to_string(port_),
                        std::to_string(e2e::FreeTcpPort())},
                       30min));
}

LokiProcess::~LokiProcess() {
  e2e::RunCommand({e2e::SourceDir() + "/tests/e2e/loki/stop-loki.sh", dir_}, 60s);
}

std::string LokiProcess::PushUrl() const {
  return "http://127.0.0.1:" + std::to_string(port_) + "/loki/api/v1/push";
}

e2e::LokiQuery LokiProcess::Query() const {
  return e2e::LokiQuery("http://127.0.0.1:" + std::to_string(port_));
}

BenchPlugin::BenchPlugin(const std::string& binary, const std::string& entry,
                         const std::string& config_dir, std::string name)
    : name_(std::move(name)) {
  Remove();
  char tmpl[] = "/tmp/skald-bench-plugin.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  bundle_ = tmpl;
  namespace fs = std::filesystem;
  const fs::path root = fs::path(bundle_) / "rootfs";
  for (const char* d :
       {"bin", "etc", "tmp", "var/log/docker", "run/docker/plugins", "proc", "dev", "sys"}) {
    fs::create_directories(root / d);
  }
  fs::copy_file(binary, root / "bin" / entry);
  fs::copy_file(fs::path(config_dir) / "config.json", fs::path(bundle_) / "config.json");
  try {
    Must(Docker({"plugin", "create", name_, bundle_}, 300s));
    Must(Docker({"plugin", "enable", name_}, 120s));
  } catch (...) {
    Remove();  // the destructor does not run for an object whose constructor threw
    std::error_code ec;
    fs::remove_all(bundle_, ec);
    throw;
  }
}

BenchPlugin::~BenchPlugin() {
  Remove();
  std::error_code ec;
  std::filesystem::remove_all(bundle_, ec);
}

void BenchPlugin::Remove() {
  Docker({"plugin", "disable", "-f", name_}, 60s);
  Docker({"plugin", "rm", "-f", name_}, 60s);
}

}  // namespace skald::bench
