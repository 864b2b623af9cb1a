// RetentionSchedule: when the journal budget and the age limit (plugin/journal/journal_retention.h)
// are applied: the budget at most once per kBudgetInterval after something changed (a stream left,
// journals were found, bytes were journaled), the age limit when the next stopped container's
// journal reaches it. Nothing runs on a timer while nothing changes. It takes no lock: its
// owner (the driver) guards it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>

namespace skald {

class RetentionSchedule {
 public:
  using Clock = std::chrono::steady_clock;
  // The budget is looked at no more often than this.
  static constexpr std::chrono::seconds kBudgetInterval{1};

  // Something changed the journals' total (a stream left, journals were found).
  void BudgetDue() { budget_due_ = true; }
  // The age limit is to be looked at by `at` (an earlier time asked for stays).
  void AgeCheckBy(Clock::time_point at) { next_age_check_ = std::min(next_age_check_, at); }
  // When the age limit is due next (time_point::max(): not until asked; time_point::min(): at
  // once, as recovery asks).
  Clock::time_point next_age_check() const { return next_age_check_; }
  // How long from `now` until the age limit is due: zero when it is due already, nullopt when
  // not until asked. (Subtracting `now` from next_age_check() overflows when that is min().)
  std::optional<Clock::duration> AgeCheckIn(Clock::time_point now) const;

  struct Checks {
    bool budget = false;  // apply the budget
    bool age = false;     // and the age limit
    // Neither is due now: how long until one is (nullopt: none until asked).
    std::optional<Clock::duration> wait;
  };
  // At `now`, with `journaled_bytes` moved into journals so far (FifoReader::JournaledBytes(),
  // bytes journaled since the last check make the budget due): what to apply. Checks it returns
  // are taken as done.
  Checks Begin(Clock::time_point now, uint64_t journaled_bytes);

 private:
  // A budget check is due (BudgetDue), or bytes were journaled since it looked (the count was
  // `checked_bytes_` then).
  bool budget_due_ = true;
  uint64_t checked_bytes_ = 0;
  Clock::time_point last_budget_check_{};
  // When the next stopped container's journal reaches the age limit (max: none).
  Clock::time_point next_age_check_ = Clock::time_point::min();
};

}  // namespace skald
