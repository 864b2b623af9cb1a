// The crash-loop guard on the real binary: a journal whose replay ends the process (the test
// build's fault switch aborts on a poison line) is quarantined after two deaths in a row while
// replaying, the plugin stays up, a well-behaved container beside it keeps shipping, and
// `skald quarantine` lists and releases the journal.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/integration/fake_daemon.h"
#include "tests/tools/fake_loki.h"

namespace skald {
namespace {

using skald::testkit::FakeDaemon;
using skald::testkit::FakeLoki;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

constexpr const char* kPoison = "poison-5d41402a";

std::string RunSkald(const std::string& args) {
  std::string out;
  FILE* p = ::popen((std::string(SKALD_BINARY) + " " + args + " 2>&1").c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  ::pclose(p);
  return out;
}

TEST(CrashLoopGuard, AJournalWhoseReplayKillsThePluginTwiceIsQuarantined) {
  FakeLoki loki;
  ASSERT_TRUE(loki.Start());
  FakeDaemon daemon(SKALD_BINARY, {std::string("SKALD_FAULT_ABORT_ON_LINE=") + kPoison});
  const std::map<std::string, std::string> opts = {{"loki-url", loki.PushUrl()},
                                                   {"loki-batch-wait", "50ms"}};
  FakeDaemon::Container good, bad;
  ASSERT_EQ(daemon.StartContainer(good, opts), "");
  ASSERT_EQ(daemon.StartContainer(bad, opts), "");
  daemon.WriteLine(good, "good 1");
  ASSERT_TRUE(loki.WaitForEntries(1, 20s)) << daemon.Log();

  // The switch fires on the live line: the plugin dies (the test fails here without it).
  daemon.WriteLine(bad, std::string("a line with ") + kPoison);
  ASSERT_NE(daemon.Signal(0, 20s), -1) << "the fault switch did not fire\n" << daemon.Log();
  // Each start replays the bad journal and dies again, until the second death in a row while
  // replaying it sets it aside.
  int deaths = 1;
  for (int start = 0; start < 4; ++start) {
    daemon.KillAndRestartPlugin();
    if (daemon.Signal(0, 10s) == -1) break;  // up for 10 s: it survived this start
    ++deaths;
  }
  ASSERT_TRUE(daemon.running()) << daemon.Log();
  EXPECT_EQ(deaths, 3) << daemon.Log();  // the live line, then two replays
  EXPECT_THAT(daemon.Log(), HasSubstr("not replayed: the plugin died 2 times in a row"));

  // Reported: the metric, /healthz, the quarantine directory.
  EXPECT_EQ(daemon.Metric("skald_journals_quarantined"), 1) << daemon.MetricsText();
  httplib::Client cli("127.0.0.1", daemon.metrics_port());
  auto res = cli.Get("/healthz");
  ASSERT_TRUE(res);
  const nlohmann::json health = nlohmann::json::parse(res->body);
  ASSERT_EQ(health["quarantined_journals"].size(), 1u) << res->body;
  EXPECT_EQ(health["quarantined_journals"][0], bad.id) << res->body;
  const std::string state = daemon.dir() + "/state";
  EXPECT_TRUE(std::filesystem::is_directory(state + "/quarantine/" + bad.id));

  // The neighbour keeps shipping, and a new container starts.
  daemon.WriteLine(good, "good 2");
  FakeDaemon::Container fresh;
  ASSERT_EQ(daemon.StartContainer(fresh, opts), "");
  daemon.WriteLine(fresh, "fresh 1");
  EXPECT_TRUE(loki.WaitForEntries(3, 20s)) << loki.StatsJson() << daemon.Log();

  // skald quarantine lists it and releases it back to containers/.
  EXPECT_THAT(RunSkald("quarantine list --state-dir " + state), HasSubstr(bad.id));
  EXPECT_THAT(RunSkald("quarantine release " + bad.id + " --state-dir " + state),
              HasSubstr("released " + bad.id));
  EXPECT_TRUE(std::filesystem::is_directory(state + "/containers/" + bad.id));
  EXPECT_THAT(RunSkald("quarantine list --state-dir " + state),
              HasSubstr("no quarantined journals"));
  EXPECT_THAT(RunSkald("quarantine release ../containers --state-dir " + state),
              HasSubstr("not the name of a quarantined journal"));
}

}  // namespace
}  // namespace skald
