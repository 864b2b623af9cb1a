#include "plugin/journal/retention_schedule.h"

namespace skald {

RetentionSchedule::Checks RetentionSchedule::Begin(Clock::time_point now,
                                                   uint64_t journaled_bytes) {
  const bool budget_due = budget_due_ || journaled_bytes != checked_bytes_;
  Checks checks;
  checks.age = now >= next_age_check_;
  checks.budget = budget_due && now - last_budget_check_ >= kBudgetInterval;
  if (!checks.budget && !checks.age) {
    const auto sooner = [&checks](Clock::duration d) {
      d = std::max(Clock::duration::zero(), d);
      checks.wait = checks.wait ? std::min(*checks.wait, d) : d;
    };
    if (budget_due) sooner(last_budget_check_ + kBudgetInterval - now);
    if (const auto in = AgeCheckIn(now)) sooner(*in);
    return checks;
  }
  last_budget_check_ = now;
  budget_due_ = false;
  checked_bytes_ = journaled_bytes;
  if (checks.age) next_age_check_ = Clock::time_point::max();
  return checks;
}

std::optional<RetentionSchedule::Clock::duration> RetentionSchedule::AgeCheckIn(
    Clock::time_point now) const {
  if (next_age_check_ == Clock::time_point::max()) return std::nullopt;
  if (next_age_check_ <= now) return Clock::duration::zero();
  return next_age_check_ - now;
}

}  // namespace skald
