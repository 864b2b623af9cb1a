// The e2e test binary: GoogleTest's main, plus stopping the Loki this process started.
#include <gtest/gtest.h>

#include "tests/e2e/e2e_support.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  skald::e2e::E2eEnv::Get().Shutdown();
  return rc;
}
