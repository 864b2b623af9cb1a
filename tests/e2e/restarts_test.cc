// Restarts: the plugin killed with SIGKILL while a container logs (Docker restarts it and never
// re-sends StartLogging), and dockerd restarted with live-restore while a container logs. Every
// line the container wrote reaches Loki.
// The live-restore scenario restarts dockerd twice (sets live-restore, restores the setting).
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "tests/e2e/e2e_support.h"

namespace skald::e2e {
namespace {

class Restarts : public SkaldTest {
 protected:
  // Lines the shared Loki's distributor received (duplicates included; a query would hide
  // them), or -1.
  double LinesReceived() {
    const std::string& url = loki().base_url();
    const int port = std::stoi(url.substr(url.rfind(':') + 1));
    auto text = FetchMetrics(port);
    if (!text) return -1;
    auto totals = ParsePrometheusTotals(*text);
    return totals["loki_distributor_lines_received_total"];
  }
};

TEST_F(Restarts, EveryLineArrivesAfterThePluginIsKilledWhileAContainerLogs) {
  const std::string name = NewContainer();
  const double received_before = LinesReceived();
  // 40,000 lines at 5,000/s: the kill lands in the middle.
  auto args = RunArgs(
      name, {"loki-max-backoff=1s"},
      {"loggen", "--lines", "40000", "--json", "--rate", "5000", "--last-marker", "LAST-" + name});
  args.insert(args.begin() + 1, "-d");
  ASSERT_TRUE(Docker(args, 60s).ok());
  std::this_thread::sleep_for(3s);
  auto pid = PluginPid();
  ASSERT_TRUE(pid) << "cannot find the plugin's process";
  ASSERT_EQ(kill(*pid, SIGKILL), 0);
  std::printf("killed the plugin (pid %d) with SIGKILL while the container logs\n", *pid);
  // Docker restarts the plugin; the container finishes.
  EXPECT_TRUE(WaitUntil([&] { return PluginPid() && *PluginPid() != *pid; }, 30s))
      << "Docker did not restart the plugin";
  auto code = WaitContainerExit(name, 60s);
  ASSERT_TRUE(code) << "the container hung after the plugin was killed";
  EXPECT_EQ(*code, 0);
  loki().WaitForCount(Selector(name), 40001, 120s);
  std::this_thread::sleep_for(2s);
  const double received = LinesReceived() - received_before;
  // Lines acknowledged just before the kill (the cursor is persisted every 100 ms) are sent
  // again; a count_over_time may count some of those twice, so compare distinct lines.
  std::set<std::string> distinct;
  for (const LokiEntry& e : loki().QueryAll(Selector(name))) distinct.insert(e.line);
  std::printf(
      "after SIGKILL of the plugin: 40001 written, %zu distinct lines in Loki, %.0f "
      "received (%.0f duplicates)\n",
      distinct.size(), received, received - 40001);
  EXPECT_EQ(distinct.size(), 40001u) << "lines were lost";
}

TEST_F(Restarts, EveryLineArrivesAcrossADaemonRestartWithLiveRestore) {
  const std::string script = SourceDir() + "/tests/e2e/restart-dockerd.sh";
  auto info = Docker({"info", "--format", "{{.LiveRestoreEnabled}}"});
  const bool was_enabled = info.ok() && info.out.find("true") != std::string::npos;
  // daemon.json is put back as found (not with "live-restore": false added).
  std::optional<DaemonJsonRestorer> restore;
  if (!was_enabled) {
    restore.emplace();
    auto r = RunCommand({script, "--live-restore", "true"}, 120s);
    ASSERT_TRUE(r.ok()) << r.Describe();
  }

  const std::string name = NewContainer();
  const double received_before = LinesReceived();
  auto args = RunArgs(
      name, {"loki-max-backoff=1s"},
      {"loggen", "--lines", "40000", "--json", "--rate", "5000", "--last-marker", "LAST-" + name});
  args.insert(args.begin() + 1, "-d");
  ASSERT_TRUE(Docker(args, 60s).ok());
  std::this_thread::sleep_for(3s);
  auto r = RunCommand({script}, 120s);
  ASSERT_TRUE(r.ok()) << r.Describe();
  std::printf("dockerd restarted with live-restore while the container logs\n");
  auto code = WaitContainerExit(name, 60s);
  ASSERT_TRUE(code) << "the container did not finish after the daemon restart";
  const uint64_t got = loki().WaitForCount(Selector(name), 40001, 120s);
  std::this_thread::sleep_for(2s);
  const double received = LinesReceived() - received_before;
  std::printf(
      "across a live-restore daemon restart: 40001 written, %llu in Loki, %.0f "
      "received (%.0f duplicates)\n",
      static_cast<unsigned long long>(got), received, received - 40001);
  EXPECT_EQ(got, 40001u);
  EXPECT_EQ(received, 40001) << "lines were sent twice across the switch";
}

}  // namespace
}  // namespace skald::e2e
