// Restarts: the plugin killed with SIGKILL while a container logs (Docker restarts it and never
// re-sends StartLogging), and dockerd restarted with live-restore while a container logs. Every
// line the container wrote reaches Loki; across the daemon restart, every byte the plugin read
// from the FIFOs (a gap dockerd makes for every driver: see the test).
// The live-restore scenario restarts dockerd twice (sets live-restore, restores the setting).
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/docker_frames.h"
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
  // The plugin's counters, summed over their labels (empty when /metrics cannot be fetched).
  static std::map<std::string, double> PluginTotals() {
    auto text = FetchMetrics();
    return text ? ParsePrometheusTotals(*text) : std::map<std::string, double>{};
  }
  // loggen's sequence numbers 1..lines (its "seq" field) that the container's lines in Loki
  // lack.
  static std::vector<uint64_t> MissingSequenceNumbers(const std::vector<LokiEntry>& entries,
                                                      uint64_t lines) {
    std::vector<bool> seen(lines + 1, false);
    for (const LokiEntry& e : entries) {
      const std::size_t at = e.line.find("\"seq\":");
      if (at == std::string::npos) continue;
      const uint64_t seq = std::strtoull(e.line.c_str() + at + 6, nullptr, 10);
      if (seq >= 1 && seq <= lines) seen[seq] = true;
    }
    std::vector<uint64_t> missing;
    for (uint64_t seq = 1; seq <= lines; ++seq) {
      if (!seen[seq]) missing.push_back(seq);
    }
    return missing;
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
  const std::map<std::string, double> plugin_before = PluginTotals();
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
  // Until all arrived, or nothing more did for 15 s (see below: lines can be missing).
  uint64_t got = 0;
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  for (auto last_change = std::chrono::steady_clock::now();;) {
    const auto now = std::chrono::steady_clock::now();
    if (const uint64_t count = loki().Count(Selector(name)); count != got) {
      got = count;
      last_change = now;
    }
    if (got >= 40001 || now - last_change > 15s || now > deadline) break;
    std::this_thread::sleep_for(1s);
  }
  std::this_thread::sleep_for(2s);
  const double received = LinesReceived() - received_before;
  std::printf(
      "across a live-restore daemon restart: 40001 written, %llu in Loki, %.0f "
      "received (%.0f duplicates)\n",
      static_cast<unsigned long long>(got), received, received - static_cast<double>(got));
  EXPECT_EQ(received, static_cast<double>(got)) << "lines were sent twice across the switch";
  const std::map<std::string, double> plugin_after = PluginTotals();
  ASSERT_GT(plugin_after.count("skald_fifo_bytes_read_total"), 0u) << "no metrics from the plugin";
  auto delta = [&](const std::string& family) {
    auto a = plugin_after.find(family), b = plugin_before.find(family);
    return (a == plugin_after.end() ? 0 : a->second) - (b == plugin_before.end() ? 0 : b->second);
  };
  // Every byte the plugin read from the container's FIFOs is a frame of a line now in Loki:
  // nothing it was handed was lost (checked to the byte, whatever Loki lacks).
  const std::vector<LokiEntry> entries = loki().QueryAll(Selector(name));
  double framed = 0;
  for (const LokiEntry& e : entries)
    framed += static_cast<double>(StdoutFrameBytes(e.timestamp_ns, e.line));
  const std::vector<uint64_t> missing = MissingSequenceNumbers(entries, 40000);
  std::string listed;
  for (uint64_t seq : missing) listed += " " + std::to_string(seq);
  std::printf(
      "the plugin read %.0f FIFO bytes (the frames of the lines in Loki: %.0f), handed on %.0f "
      "lines, skipped %.0f and lost %.0f journal bytes, dropped %.0f entries; missing seq:%s\n",
      delta("skald_fifo_bytes_read_total"), framed, delta("skald_lines_read_total"),
      delta("skald_journal_skipped_bytes_total"), delta("skald_journal_lost_bytes_total"),
      delta("skald_entries_dropped_total"), listed.empty() ? " none" : listed.c_str());
  EXPECT_EQ(delta("skald_fifo_bytes_read_total"), framed)
      << "the plugin read bytes from the FIFOs that are not lines in Loki";
  EXPECT_EQ(delta("skald_lines_read_total"), static_cast<double>(got));
  EXPECT_EQ(delta("skald_journal_skipped_bytes_total"), 0);
  EXPECT_EQ(delta("skald_journal_lost_bytes_total"), 0);
  EXPECT_EQ(delta("skald_entries_dropped_total"), 0);
  // KNOWN, and dockerd's: in about one run in ten a few lines never reach the FIFO. The
  // same experiment with the built-in drivers (tests/e2e/live-restore-loss.sh, 20 runs each)
  // lost lines with json-file and local too, in one run of consecutive lines each time (up to
  // 51): the lines dockerd's log copier (daemon/logger/copier.go) had read from the container
  // (2 KiB reads into a 16 KiB buffer) and not yet handed to any driver when the daemon exited.
  // Bounded here: at most one gap, of at most what that buffer and one read hold.
  if (!missing.empty()) {
    constexpr std::size_t kCopierBytes = 16 * 1024 + 2 * 1024;
    constexpr std::size_t kShortestLine = 200;  // loggen --json lines are 200-260 bytes
    EXPECT_EQ(missing.back() - missing.front() + 1, missing.size())
        << "the lines missing are not one run at the restart";
    EXPECT_LE(missing.size(), kCopierBytes / kShortestLine)
        << "more lines missing than dockerd's log copier holds";
  }
  EXPECT_EQ(got + missing.size(), 40001u) << "lines missing that are not loggen's";
}

}  // namespace
}  // namespace skald::e2e
