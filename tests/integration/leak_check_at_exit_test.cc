// The ASan build's plugin runs LeakSanitizer's check at its own exit (plugin/main.cc ends in
// _exit, which skips the check LeakSanitizer would run at exit): a block leaked on purpose at
// shutdown (the test build's fault switch, SKALD_FAULT_LEAK_AT_EXIT) is reported and the exit
// status is LeakSanitizer's. In a build without ASan the plugin exits 0.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/integration/fake_daemon.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SKALD_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(SKALD_TEST_ASAN)
#define SKALD_TEST_ASAN 1
#endif

namespace skald {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

TEST(LeakCheckAtExit, ALeakAtShutdownIsReportedInTheSanitizerBuild) {
  char tmpl[] = "/tmp/skald-leak-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const fs::path reports = tmpl;
  // Its own report path: the sanitizer run fails on any report in its directory, and this one
  // is expected. log_path is a flag the sanitizers share, read from each one's options in
  // turn: all three name the same.
  const std::string log_path = "log_path=" + (reports / "r").string();
  testkit::FakeDaemon daemon(
      SKALD_BINARY, {"SKALD_FAULT_LEAK_AT_EXIT=1", "ASAN_OPTIONS=detect_leaks=1:" + log_path,
                     "LSAN_OPTIONS=" + log_path, "UBSAN_OPTIONS=" + log_path});
  const int status = daemon.Signal(SIGTERM, 15s);
  ASSERT_NE(status, -1) << "the plugin did not exit at SIGTERM";
  ASSERT_NE(daemon.Log().find("SKALD_FAULT_LEAK_AT_EXIT leaked"), std::string::npos)
      << "the fault switch did not fire (a build without SKALD_FAULT_INJECTION?)\n"
      << daemon.Log();
  ASSERT_TRUE(WIFEXITED(status)) << status;
#ifdef SKALD_TEST_ASAN
  EXPECT_NE(WEXITSTATUS(status), 0) << "the leak went unreported";
  std::string report;
  for (const auto& f : fs::directory_iterator(reports)) {
    std::ifstream in(f.path());
    std::stringstream ss;
    ss << in.rdbuf();
    report += ss.str();
  }
  EXPECT_NE(report.find("LeakSanitizer"), std::string::npos) << report;
  EXPECT_NE(report.find("LeakIfAsked"), std::string::npos) << report;
#else
  EXPECT_EQ(WEXITSTATUS(status), 0);
#endif
  fs::remove_all(reports);
}

}  // namespace
}  // namespace skald
