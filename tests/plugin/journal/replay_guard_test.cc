// ReplayGuard: deaths while replaying are counted per journal, only against the journals a
// thread was working on when the process died, and a journal at two deaths in a row is set
// aside and can be released.
#include "plugin/journal/replay_guard.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace skald {
namespace {

namespace fs = std::filesystem;

class ReplayGuardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("skald-replay-guard-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    for (const char* id : {"aaaa", "bbbb"}) fs::create_directories(root_ / "containers" / id);
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path Dir(const std::string& id) { return root_ / "containers" / id; }

  fs::path root_;
};

// One run of the plugin that replays both journals and dies while its reader works on `on`
// ("" : while no thread names any journal). Returns which journals were set aside.
std::vector<std::string> RunAndDie(const fs::path& root, const std::string& on) {
  std::vector<std::string> quarantined;
  ReplayGuard guard(root);
  for (const char* id : {"aaaa", "bbbb"}) {
    if (!fs::exists(root / "containers" / id)) continue;
    if (!guard.Begin(id, root / "containers" / id).empty()) quarantined.push_back(id);
  }
  if (!on.empty()) guard.Enter(ReplayGuard::kReaderSlot, on);
  return quarantined;  // no ClearAll: the process "died" here
}

TEST_F(ReplayGuardTest, OnlyTheJournalBeingWorkedOnCountsADeath) {
  EXPECT_TRUE(RunAndDie(root_, "aaaa").empty());  // the run that dies first
  EXPECT_EQ(ReplayGuard::DeathsOf(Dir("aaaa")), 1);
  EXPECT_TRUE(RunAndDie(root_, "aaaa").empty());  // one death counted against aaaa
  EXPECT_EQ(RunAndDie(root_, ""), std::vector<std::string>{"aaaa"});  // two: set aside
  EXPECT_FALSE(fs::exists(Dir("aaaa")));
  EXPECT_TRUE(fs::is_directory(root_ / "quarantine" / "aaaa"));
  EXPECT_TRUE(fs::exists(Dir("bbbb"))) << "a journal replayed beside it was set aside too";
}

// A run stopped before its recovery reached the journals: the last run's death stays on the
// journal a thread was working on then, and no other is charged with it.
TEST_F(ReplayGuardTest, JournalsARecoveryDidNotReachKeepTheirCounts) {
  RunAndDie(root_, "aaaa");
  {
    ReplayGuard guard(root_);
    guard.Settle("aaaa", Dir("aaaa"));
    guard.Settle("bbbb", Dir("bbbb"));
    guard.ClearAll();  // a clean stop
  }
  EXPECT_EQ(ReplayGuard::DeathsOf(Dir("aaaa")), 1);  // its death, kept
  EXPECT_EQ(ReplayGuard::DeathsOf(Dir("bbbb")), 0);  // not to blame: no marker
  RunAndDie(root_, "aaaa");                          // the next run dies on it again
  EXPECT_EQ(RunAndDie(root_, ""), std::vector<std::string>{"aaaa"});
}

// A marker a host crash left empty or with stale bytes counts no earlier death.
TEST_F(ReplayGuardTest, AMalformedMarkerCountsOnlyTheRunThatLeftIt) {
  auto write_marker = [&](const std::string& text) {
    std::ofstream(Dir("aaaa") / std::string(ReplayGuard::kMarkerName), std::ios::trunc) << text;
  };
  write_marker("1\n");
  EXPECT_EQ(ReplayGuard::DeathsOf(Dir("aaaa")), 2);
  for (const char* text : {"", "1", "\n", "12x\n"}) {
    write_marker(text);
    EXPECT_EQ(ReplayGuard::DeathsOf(Dir("aaaa")), 1) << "marker '" << text << "'";
  }
}

TEST_F(ReplayGuardTest, WithoutAThreadNamingOneEveryJournalReplayedCountsADeath) {
  RunAndDie(root_, "");
  RunAndDie(root_, "");
  const auto quarantined = RunAndDie(root_, "");
  EXPECT_EQ(quarantined.size(), 2u);
}

TEST_F(ReplayGuardTest, ProgressAndACleanStopClearTheMarkers) {
  {
    ReplayGuard guard(root_);
    ASSERT_EQ(guard.Begin("aaaa", Dir("aaaa")), "");
    ASSERT_EQ(guard.Begin("bbbb", Dir("bbbb")), "");
    guard.Clear(Dir("aaaa"));  // its cursor moved on
    EXPECT_EQ(ReplayGuard::DeathsOf(Dir("aaaa")), 0);
    EXPECT_EQ(ReplayGuard::DeathsOf(Dir("bbbb")), 1);
    guard.ClearAll();  // a clean stop
  }
  EXPECT_EQ(ReplayGuard::DeathsOf(Dir("bbbb")), 0);
}

// Whether the last run stopped cleanly: Recover waits before replaying after one that did not.
TEST_F(ReplayGuardTest, ALastRunThatDidNotStopCleanlyIsKnown) {
  {
    ReplayGuard first(root_);
    EXPECT_FALSE(first.LastRunDied());  // none before
  }                                     // gone without a clean stop
  {
    ReplayGuard second(root_);
    EXPECT_TRUE(second.LastRunDied());
    second.ClearAll();  // a clean stop
  }
  ReplayGuard third(root_);
  EXPECT_FALSE(third.LastRunDied());
}

TEST_F(ReplayGuardTest, AQuarantinedJournalIsListedAndReleased) {
  RunAndDie(root_, "bbbb");
  RunAndDie(root_, "bbbb");
  RunAndDie(root_, "bbbb");
  const auto list = ReplayGuard::List(root_);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].name, "bbbb");
  EXPECT_NE(ReplayGuard::Release(root_, "../containers"), "");
  const std::string error = ReplayGuard::Release(root_, "cccc");
  EXPECT_NE(error.find("no quarantined journal"), std::string::npos) << error;
  ASSERT_EQ(ReplayGuard::Release(root_, "bbbb"), "");
  EXPECT_TRUE(fs::is_directory(Dir("bbbb")));
  EXPECT_EQ(ReplayGuard::DeathsOf(Dir("bbbb")), 0);  // replayed afresh
  EXPECT_TRUE(ReplayGuard::List(root_).empty());
}

}  // namespace
}  // namespace skald
