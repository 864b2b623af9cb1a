// In the integration tests, a plugin that does not exit 0 when its FakeDaemon stops it (a crash
// at shutdown, a leak LeakSanitizer found at exit in the ASan build) fails the test that ran it.
#include <gtest/gtest.h>

#include <string>

#include "tests/integration/fake_daemon.h"

namespace {

const bool kInstalled = [] {
  skald::testkit::FakeDaemon::UncleanExitHandler() = [](const std::string& what) {
    ADD_FAILURE() << what;
  };
  return true;
}();

}  // namespace
