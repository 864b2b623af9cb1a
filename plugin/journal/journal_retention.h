// JournalRetention: how long journals are kept and how many bytes they may take together.
//
// Two limits over the journals of one state directory (plugin/journal/journal_store.h):
// - the age limit: a stopped container's journal (one no stream writes or reads) not written
//   for `max_age` is removed, unless its container's options keep it (keep-file=true: what
//   the options say is the driver's to decide, through the `keep_file` question it passes);
// - the plugin-wide budget: while all journals together hold more than `max_total_bytes`,
//   stopped containers' journals are removed, least recently written first, then the oldest
//   segments of the largest live journals are evicted, acknowledged ones first, then
//   (loki-on-full=drop) undelivered ones (what their readers had not read is counted by their
//   evict hooks). Live segments count too: when only they are left over the budget, the largest
//   is sealed at its next write and evicted at the next round, and loki-on-full=block journals
//   take no more bytes (their containers wait) until the budget has room.
// Apply() decides and evicts; removing a stopped container's journal is left to its owner (the
// driver), which must check under its own lock that no container started meanwhile.
//
// When Apply() is due: plugin/journal/retention_schedule.h.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plugin/journal/journal.h"

namespace skald {

class JournalRetention {
 public:
  // A journal and its container id.
  using Entry = std::pair<std::string, std::shared_ptr<Journal>>;
  // Whether a stopped container's journal is kept past the age limit; asked only of journals
  // that have reached it, at most once per check.
  using KeepFile = std::function<bool(const Entry&)>;

  JournalRetention(uint64_t max_total_bytes, std::chrono::seconds max_age, KeepFile keep_file)
      : max_total_bytes_(max_total_bytes), max_age_(max_age), keep_file_(std::move(keep_file)) {}

  struct Outcome {
    // Stopped containers' journals to remove (in the order decided), not removed yet.
    std::vector<std::string> remove;
    // Bytes of all journals once those are removed (and live journals evicted).
    uint64_t total_bytes = 0;
    // With the age limit looked at: how long until the next stopped container's journal kept
    // reaches it (never negative); nullopt: none will (none kept, or all keep-file).
    std::optional<std::chrono::steady_clock::duration> next_expiry_in;
    // Still over the budget after all it could evict: look again soon.
    bool over_budget = false;
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
  // Apply's steps, each taking from out.total_bytes what it frees.
  // The age limit: removes from `stopped` (into out.remove) the journals not written for
  // max_age_, unless keep-file; sets out.next_expiry_in.
  void RemoveExpired(std::vector<Entry>& stopped, std::filesystem::file_time_type now,
                     Outcome& out) const;
  // The budget's first resort: stopped containers' journals, least recently written first.
  void RemoveStoppedOverBudget(std::vector<Entry>& stopped, Outcome& out) const;
  // Then live journals: acknowledged segments, then (loki-on-full=drop) undelivered ones; sets
  // out.over_budget and asks for the rotation the next round needs.
  void EvictLiveOverBudget(const std::vector<Entry>& live, Outcome& out) const;

  uint64_t max_total_bytes_;
  std::chrono::seconds max_age_;
  KeepFile keep_file_;
};

}  // namespace skald
