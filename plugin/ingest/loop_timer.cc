#include "plugin/ingest/loop_timer.h"

#include <algorithm>

namespace skald {
namespace {

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Lowers `target` to `value`; true when it did.
bool LowerTo(std::atomic<int64_t>& target, int64_t value) {
  int64_t current = target.load();
  while (value < current) {
    if (target.compare_exchange_weak(current, value)) return true;
  }
  return false;
}

// `delay` in ns from now, far enough for kNever-like delays and never overflowing.
int64_t DueIn(std::chrono::milliseconds delay) {
  const int64_t max_ms = INT64_MAX / 4 / 1'000'000;
  return SteadyNowNs() + std::clamp<int64_t>(delay.count(), 0, max_ms) * 1'000'000;
}

}  // namespace

bool LoopTimer::Within(std::chrono::milliseconds delay) {
  if (delay == kNever) return false;
  return LowerTo(due_ns_, DueIn(delay));
}

void LoopTimer::WhenJournaled(std::chrono::milliseconds delay) {
  when_journaled_ms_.store(std::max<int64_t>(0, delay.count()));
}

bool LoopTimer::Journaled() {
  if (when_journaled_ms_.load() < 0) return false;  // the common case: one load
  const int64_t ms = when_journaled_ms_.exchange(-1);
  return ms >= 0 && Within(std::chrono::milliseconds(ms));
}

int LoopTimer::MsUntilDue() const {
  const int64_t due = due_ns_.load();
  if (due == INT64_MAX) return -1;
  const int64_t until_ms = std::max<int64_t>(0, (due - SteadyNowNs() + 999'999) / 1'000'000);
  return static_cast<int>(std::min<int64_t>(until_ms, INT32_MAX));
}

bool LoopTimer::RunIfDue(const std::function<std::chrono::milliseconds()>& task,
                         const std::function<void(const std::exception&)>& on_error) {
  if (!task || SteadyNowNs() < due_ns_.load()) return false;
  // Taken before the task runs: a Within() while it runs asks for the next run.
  due_ns_.store(INT64_MAX);
  std::chrono::milliseconds again = kAfterError;
  try {
    again = task();
  } catch (const std::exception& e) {
    if (on_error) on_error(e);
  }
  if (again != kNever) LowerTo(due_ns_, DueIn(again));
  return true;
}

}  // namespace skald
