#include "plugin/journal/journal_retention.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace skald {

JournalRetention::Outcome JournalRetention::Apply(std::vector<Entry> stopped,
                                                  std::vector<Entry> live, bool check_age,
                                                  std::filesystem::file_time_type now) const {
  Outcome out;
  for (const auto& [id, j] : stopped) out.total_bytes += j->TotalBytes();
  for (const auto& [id, j] : live) out.total_bytes += j->TotalBytes();
  if (check_age) RemoveExpired(stopped, now, out);
  RemoveStoppedOverBudget(stopped, out);
  EvictLiveOverBudget(live, out);
  return out;
}

void JournalRetention::RemoveExpired(std::vector<Entry>& stopped,
                                     std::filesystem::file_time_type now, Outcome& out) const {
  uint64_t& total = out.total_bytes;
  // Age limit: stopped containers' journals not written for max_age_, unless keep-file.
  std::optional<std::filesystem::file_time_type> next_expiry;  // of those kept
  for (auto it = stopped.begin(); it != stopped.end();) {
    auto& [id, j] = *it;
    const auto last_write = j->LastWrite();
    bool expired = now - last_write > max_age_;
    bool keep = false;
    if (expired && keep_file_ && keep_file_(*it)) {
      expired = false;
      keep = true;
    }
    if (expired) {
      total -= std::min(total, j->TotalBytes());
      spdlog::info("journal of stopped container {}: older than the age limit; removed",
                   id.substr(0, 12));
      out.remove.push_back(id);
      it = stopped.erase(it);
    } else {
      if (!keep && (!next_expiry || last_write + max_age_ < *next_expiry)) {
        next_expiry = last_write + max_age_;
      }
      ++it;
    }
  }
  if (next_expiry) {
    out.next_expiry_in = std::max(
        std::chrono::steady_clock::duration::zero(),
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(*next_expiry - now));
  }
}

void JournalRetention::RemoveStoppedOverBudget(std::vector<Entry>& stopped, Outcome& out) const {
  uint64_t& total = out.total_bytes;
  // Plugin-wide budget: stopped containers' journals go first (least recently written first),
  // then the oldest segments of the largest live journals.
  if (total > max_total_bytes_) {
    std::vector<std::pair<std::filesystem::file_time_type, std::size_t>> order;
    for (std::size_t i = 0; i < stopped.size(); ++i)
      order.emplace_back(stopped[i].second->LastWrite(), i);
    std::sort(order.begin(), order.end());
    std::vector<Entry> sorted;
    for (const auto& [time, i] : order) sorted.push_back(std::move(stopped[i]));
    stopped.swap(sorted);
  }
  for (auto it = stopped.begin(); total > max_total_bytes_ && it != stopped.end(); ++it) {
    total -= std::min(total, it->second->TotalBytes());
    spdlog::info(
        "journal of stopped container {}: removed to stay within the plugin-wide "
        "journal budget ({} bytes)",
        it->first.substr(0, 12), max_total_bytes_);
    out.remove.push_back(it->first);
  }
}

void JournalRetention::EvictLiveOverBudget(const std::vector<Entry>& live, Outcome& out) const {
  uint64_t& total = out.total_bytes;
  // Live journals: what Loki has acknowledged goes first, then (loki-on-full=drop) the oldest
  // undelivered, counted by the readers' evict hooks; the largest journal's oldest segment each
  // time.
  const auto by_size = [](const Entry& a, const Entry& b) {
    return a.second->TotalBytes() < b.second->TotalBytes();
  };
  for (const bool acknowledged_only : {true, false}) {
    std::vector<Entry> candidates = live;
    while (total > max_total_bytes_ && !candidates.empty()) {
      auto largest = std::max_element(candidates.begin(), candidates.end(), by_size);
      const uint64_t freed = largest->second->EvictOldest(acknowledged_only);
      if (freed == 0) {
        candidates.erase(largest);
        continue;
      }
      total -= std::min(total, freed);
    }
  }
  // Still over: a live segment is the rest. The largest such journal seals it at its next
  // write (max-size -1 means no rotation by size, not exemption from the budget), so that the
  // next round can take it; loki-on-full=block journals take no bytes while over.
  out.over_budget = total > max_total_bytes_;
  const Entry* rotate = nullptr;
  for (const Entry& e : live) {
    if (out.over_budget && e.second->OldestIsLive() && (!rotate || by_size(*rotate, e)))
      rotate = &e;
    e.second->SetOverBudget(out.over_budget && e.second->limits().block_when_full);
  }
  if (rotate) rotate->second->RequestRotation();
}

std::chrono::steady_clock::duration JournalRetention::UntilExpiry(
    std::filesystem::file_time_type last_write, std::filesystem::file_time_type now) const {
  using std::chrono::steady_clock;
  if (last_write == std::filesystem::file_time_type::min()) return steady_clock::duration::zero();
  return std::max(steady_clock::duration::zero(),
                  std::chrono::duration_cast<steady_clock::duration>(last_write + max_age_ - now));
}

}  // namespace skald
