#include "plugin/common/log_limiter.h"

namespace skald {

bool LogLimiter::Allow(const std::string& key, uint64_t& suppressed) {
  absl::MutexLock lock(&mu_);
  State& s = state_[key];
  const auto now = std::chrono::steady_clock::now();
  if (s.last.time_since_epoch().count() != 0 && now - s.last < interval_) {
    ++s.suppressed;
    return false;
  }
  s.last = now;
  suppressed = s.suppressed;
  s.suppressed = 0;
  return true;
}

std::string Suppressed(uint64_t n) {
  return n == 0 ? "" : " (" + std::to_string(n) + " similar messages suppressed)";
}

}  // namespace skald
