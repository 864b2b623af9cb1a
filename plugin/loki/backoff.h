// Backoff: capped exponential delays with jitter, for retrying pushes.
//
// The n-th delay (n counted from 0 since the last Reset) is drawn uniformly from
// [base/2, base] where base = min_delay * 2^n capped at max_delay, and the result is clamped
// to [min_delay, max_delay]. Jitter keeps many lanes and plugins from retrying in lockstep.
// Not thread-safe: one per retry loop.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>

namespace skald {

class Backoff {
 public:
  // `seed` makes the jitter reproducible in tests; 0 draws a random seed.
  Backoff(std::chrono::milliseconds min_delay, std::chrono::milliseconds max_delay,
          uint64_t seed = 0);

  // The delay to wait before the next attempt; advances the attempt count.
  std::chrono::milliseconds Next();

  // Back to the first (shortest) delay.
  void Reset() { attempt_ = 0; }

  // Delays handed out since the last Reset.
  int attempts() const { return attempt_; }

 private:
  std::chrono::milliseconds min_;
  std::chrono::milliseconds max_;
  int attempt_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace skald
