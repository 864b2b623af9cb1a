// MeasureIdle counts the wake-ups of every thread that lived in the window, also one that
// exited before its end (the bench's idle figures used to miss those), and gives no figure
// for a process that is gone.
#include "tests/bench/idle_stats.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace skald::bench {
namespace {

using namespace std::chrono_literals;

TEST(MeasureIdle, CountsTheWakeUpsOfAThreadThatExitsInTheWindow) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // A thread that wakes up about 1,000 times in its first second, then exits; the main
    // thread sleeps through the window.
    std::thread busy([] {
      for (int i = 0; i < 1000; ++i) std::this_thread::sleep_for(1ms);
    });
    busy.join();
    std::this_thread::sleep_for(30s);
    _exit(0);
  }
  const auto figures = MeasureIdle({{"child", pid}}, 3);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  const nlohmann::json& m = figures.at("child");
  ASSERT_TRUE(m.contains("wakeups_per_s")) << m.dump();
  const double wakeups = m["wakeups_per_s"].get<double>() * m["seconds"].get<double>();
  EXPECT_GE(wakeups, 500) << "the exited thread's wake-ups were not counted: " << m.dump();
  EXPECT_GE(m["threads_seen"].get<int>(), 2);
}

TEST(MeasureIdle, AProcessGoneByTheEndGivesNoFigure) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::this_thread::sleep_for(500ms);
    _exit(0);
  }
  std::thread reaper([pid] { waitpid(pid, nullptr, 0); });
  const auto figures = MeasureIdle({{"child", pid}}, 2);
  reaper.join();
  const nlohmann::json& m = figures.at("child");
  EXPECT_TRUE(m.contains("error")) << m.dump();
  EXPECT_FALSE(m.contains("cpu_percent")) << m.dump();
}

}  // namespace
}  // namespace skald::bench
