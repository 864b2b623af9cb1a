// limit: a token bucket of `rate` lines/s and `burst` lines, one per value of the label
// `by_label_name` when set (then drop: true is required, as in Promtail; entries without that
// label are not limited; at most `max_distinct_labels` buckets, at least 10,000 as in Promtail,
// the oldest is forgotten beyond that).
//
// drop: true drops what exceeds the limit (reason "ratelimit_drop_stage", as in Promtail, or
// drop_counter_reason). drop: false (default) delays only this stream without sleeping: an entry
// over the limit is held, and so is every later one (order is kept); Process and Flush release held
// entries as tokens accrue (at `rate` on average, the time waited counts in full), and a final
// Flush releases them all. The host must call Flush periodically. HeldBytes() tells the host how
// much it holds (the plugin stops reading a stream's journal while its pipeline holds its window);
// past 16 MiB held, the oldest are dropped (reason "limit_buffer_full").
#pragma once

#include <cstdint>
#include <deque>
#include <list>
#include <optional>
#include <string>
#include <unordered_map>

#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {

class LimitStage final : public Stage {
 public:
  // Promtail's MinReasonableMaxDistinctLabels: a smaller max_distinct_labels is raised to it.
  static constexpr int64_t kMinMaxDistinctLabels = 10000;

  LimitStage(const YAML::Node& config, const StageContext& ctx);
  Verdict Process(Entry& entry, Downstream& next) override;
  void Flush(int64_t now_ns, bool final, Downstream& next) override;
  bool Holds() const override { return !held_.empty(); }
  size_t HeldBytes() const override { return held_bytes_; }
  std::optional<uint64_t> OldestHeldOrigin() const override {
    return held_.empty() ? std::nullopt : std::optional<uint64_t>(held_.front().origin);
  }

 private:
  struct Bucket {
    double tokens;
    int64_t last_ns;
  };
  // The bucket for an entry, or nullptr when it is not limited.
  Bucket* BucketFor(const Entry& entry, int64_t now_ns);
  bool TryTake(Bucket& b, int64_t now_ns);
  void Release(int64_t now_ns, bool all, Downstream& next);
  // Keeps `entry` until tokens come; beyond kMaxHeldBytes the oldest held are dropped.
  void Hold(Entry&& entry);
  static constexpr size_t kMaxHeldBytes = 16 * 1024 * 1024;

  StageContext ctx_;
  double rate_;
  double burst_;
  bool drop_;
  std::optional<std::string> by_label_;
  size_t max_distinct_;
  std::string reason_;
  Bucket single_;
  std::unordered_map<std::string, Bucket> buckets_;
  std::list<std::string> bucket_order_;  // oldest first, for forgetting
  std::deque<Entry> held_;
  size_t held_bytes_ = 0;  // line bytes in held_
};

}  // namespace skald::stages
