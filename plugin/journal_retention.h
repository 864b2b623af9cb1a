// JournalRetention: how long journals are kept and how many bytes they may take together.
//
// Two limits over the journals of one state directory (plugin/journal_store.h):
// - the age limit: a stopped container's journal (one no stream writes or reads) not written
//   for `max_age` is removed, unless its container asked for keep-file=true;
// - the plugin-wide budget: while all journals together hold more than `max_total_bytes`,
//   stopped containers' journals are removed, least recently written first, then the oldest
//   segments of the largest live journals are evicted (what they had not read is counted by
//   their readers' evict hooks).
// Apply() decides and evicts; removing a stopped container's journal is left to its owner (the
// driver), which must check under its own lock that no container started meanwhile.
//
// RetentionSchedule says when Apply() is due: the budget at most once per kBudgetInterval
// after something changed (a stream left, journals were found, bytes were journaled), the age
// limit when the next stopped container's journal reaches it. It takes no lock: its owner
// guards it.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plugin/journal.h"

namespace skald {

class JournalRetention {
 public:
  JournalRetention(uint64_t max_total_bytes, std::chrono::seconds max_age)
      : max_total_bytes_(max_total_bytes), max_age_(max_age) {}

  // A journal and its container id.
  using Entry = std::pair<std::string, std::shared_ptr<Journal>>;

  struct Outcome {
    // Stopped containers' journals to remove (in the order decided), not removed yet.
    std::vector<std::string> remove;
    // Bytes of all journals once those are removed (and live journals evicted).
    uint64_t total_bytes = 0;
    // With the age limit looked at: how long until the next stopped container's journal kept
    // reaches it (never negative); nullopt: none will (none kept, or all keep-file).
    std::optional<std::chrono::steady_clock::duration> next_expiry_in;
  };

  // `stopped`: journals of containers with no stream; `live`: the others. `check_age`: apply the
  // age limit too (else only the budget). `now`: the file clock's now. Evicts segments of
  // `live` journals when the budget requires it.
  Outcome Apply(std::vector<Entry> stopped, std::vector<Entry> live, bool check_age,
                std::filesystem::file_time_type now) const;

  // How long until a journal last written at `last_write` reaches the age limit (0 when it has,
  // or when `last_write` is file_time_type::min(): unknown).
  std::chrono::steady_clock::duration UntilExpiry(std::filesystem::file_time_type last_write,
                                                  std::filesystem::file_time_type now) const;

  uint64_t max_total_bytes() const { return max_total_bytes_; }
  std::chrono::seconds max_age() const { return max_age_; }

 private:
  uint64_t max_total_bytes_;
  std::chrono::seconds max_age_;
};

// When JournalRetention::Apply() is due. Not thread-safe: its owner guards it.
class RetentionSchedule {
 public:
  using Clock = std::chrono::steady_clock;
  // The budget is looked at no more often than this.
  static constexpr std::chrono::seconds kBudgetInterval{1};

  // Something changed the journals' total (a stream left, journals were found).
  void BudgetDue() { budget_due_ = true; }
  // The age limit is to be looked at by `at` (an earlier time asked for stays).
  void AgeCheckBy(Clock::time_point at) { next_age_check_ = std::min(next_age_check_, at); }
  // When the age limit is due next (time_point::max(): not until asked).
  Clock::time_point next_age_check() const { return next_age_check_; }

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
