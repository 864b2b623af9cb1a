// LogLimiter: at most one log message per key every interval; the others are counted and
// reported with the next one, so an outage (Loki away, a full disk) does not flood the
// plugin's log, which dockerd keeps. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace skald {

class LogLimiter {
 public:
  explicit LogLimiter(std::chrono::steady_clock::duration interval = std::chrono::seconds(10))
      : interval_(interval) {}

  // Returns true when the caller may log now; `suppressed` is how many were skipped since.
  bool Allow(const std::string& key, uint64_t& suppressed);

 private:
  struct State {
    std::chrono::steady_clock::time_point last{};
    uint64_t suppressed = 0;
  };
  const std::chrono::steady_clock::duration interval_;
  std::mutex mu_;
  std::map<std::string, State> state_;
};

// " (N similar messages suppressed)", or "" when N is 0.
std::string Suppressed(uint64_t n);

}  // namespace skald
