// How many times slower than natively the unit tests run here: SKALD_TEST_SLOWDOWN (a whole
// number, default 1). `make unit-arm64` sets it for the arm64 programs it runs under
// qemu-user, which executes a regex-heavy pipeline some 20-40 times slower. A test whose
// workload is sized to keep a thread busy for some seconds divides it by this; a liveness bound
// may be multiplied by it. Nothing else changes: the assertions stay the same.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>

namespace skald::testkit {

inline int TestSlowdown() {
  const char* v = std::getenv("SKALD_TEST_SLOWDOWN");
  if (v == nullptr || *v == '\0') return 1;
  try {
    return std::clamp(std::stoi(v), 1, 1000);
  } catch (const std::exception&) {
    return 1;
  }
}

// `d` times the slowdown.
template <class Rep, class Period>
std::chrono::milliseconds Slowed(std::chrono::duration<Rep, Period> d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d) * TestSlowdown();
}

}  // namespace skald::testkit
