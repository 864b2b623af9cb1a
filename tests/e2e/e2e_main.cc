// The e2e test binary: GoogleTest's main, plus stopping the Loki this process started, and a
// failure when the filter selects no test.
#include <gtest/gtest.h>

#include <cstdio>

#include "tests/e2e/e2e_support.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  skald::e2e::E2eEnv::Get().Shutdown();
  if (::testing::UnitTest::GetInstance()->test_to_run_count() == 0) {
    std::fprintf(stderr, "no test matches the filter: a suite renamed or removed?\n");
    return 1;
  }
  return rc;
}
