// LogLimiter: at most one log message per key every interval; the others are counted and
// reported with the next one, so an outage (Loki away, a full disk) does not flood the
// plugin's log, which dockerd keeps. Thread-safe.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

namespace skald {

class LogLimiter {
 public:
  explicit LogLimiter(std::chrono::steady_clock::duration interval = std::chrono::seconds(10))
      : interval_(interval) {}

  // Returns true when the caller may log now; `suppressed` is how many were skipped since.
  bool Allow(const std::string& key, uint64_t& suppressed) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct State {
    std::chrono::steady_clock::time_point last{};
    uint64_t suppressed = 0;
  };
  const std::chrono::steady_clock::duration interval_;
  absl::Mutex mu_;
  std::map<std::string, State> state_ ABSL_GUARDED_BY(mu_);
};

// " (N similar messages suppressed)", or "" when N is 0.
std::string Suppressed(uint64_t n);

}  // namespace skald
