#include "plugin/loki/backoff.h"

#include <algorithm>

namespace skald {

Backoff::Backoff(std::chrono::milliseconds min_delay, std::chrono::milliseconds max_delay,
                 uint64_t seed)
    : min_(std::max(min_delay, std::chrono::milliseconds(0))),
      max_(std::max(max_delay, min_)),
      rng_(seed != 0 ? seed : std::random_device{}()) {}

std::chrono::milliseconds Backoff::Next() {
  // Double without overflowing: stop doubling once the cap is reached.
  int64_t base = std::max<int64_t>(min_.count(), 1);
  for (int i = 0; i < attempt_ && base < max_.count(); ++i) base *= 2;
  base = std::min<int64_t>(base, max_.count());
  ++attempt_;
  std::uniform_int_distribution<int64_t> jitter(base / 2, base);
  const int64_t delay = std::clamp<int64_t>(jitter(rng_), min_.count(), max_.count());
  return std::chrono::milliseconds(delay);
}

}  // namespace skald
