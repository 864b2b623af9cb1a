#include "pipeline_stages/limit_stage.h"

#include <algorithm>

namespace skald::stages {

LimitStage::LimitStage(const YAML::Node& config, const StageContext& ctx) : ctx_(ctx) {
  StageConfig c(
      config, ctx,
      {"rate", "burst", "drop", "by_label_name", "max_distinct_labels", "drop_counter_reason"});
  auto rate = c.OptDouble("rate");
  if (!rate || *rate <= 0) c.Fail("rate", "is required: lines per second, greater than 0");
  auto burst = c.OptInt("burst");
  if (!burst || *burst < 1) c.Fail("burst", "is required: a number of lines, at least 1");
  rate_ = *rate;
  burst_ = static_cast<double>(*burst);
  drop_ = c.Bool("drop", false);
  by_label_ = c.OptString("by_label_name");
  if (by_label_ && !IsValidLabelName(*by_label_)) {
    c.Fail("by_label_name", Quote(*by_label_) + " is not a valid label name");
  }
  if (by_label_ && !drop_) {
    c.Fail("by_label_name",
           "needs drop: true (as in Promtail: a limit by label drops what is over "
           "it; only a limit of the whole stream may hold entries)");
  }
  // As in Promtail, fewer than 10,000 label values is raised to 10,000 (each costs ~100 bytes).
  const int64_t max = c.OptInt("max_distinct_labels").value_or(0);
  max_distinct_ = max < kMinMaxDistinctLabels ? kMinMaxDistinctLabels : static_cast<size_t>(max);
  reason_ = c.String("drop_counter_reason", "ratelimit_drop_stage");
  single_ = Bucket{burst_, ctx.NowNs()};
}

LimitStage::Bucket* LimitStage::BucketFor(const Entry& entry, int64_t now_ns) {
  if (!by_label_) return &single_;
  auto value = entry.labels.Get(*by_label_);
  if (!value) return nullptr;
  std::string key(*value);
  auto it = buckets_.find(key);
  if (it != buckets_.end()) return &it->second;
  if (buckets_.size() >= max_distinct_) {
    buckets_.erase(bucket_order_.front());
    bucket_order_.pop_front();
  }
  bucket_order_.push_back(key);
  return &buckets_.emplace(std::move(key), Bucket{burst_, now_ns}).first->second;
}

bool LimitStage::TryTake(Bucket& b, int64_t now_ns) {
  if (now_ns > b.last_ns) {
    // Held entries have been waiting for their tokens: time accrued while they waited serves
    // them all (like reservations of Go's rate.Limiter.Wait), beyond the burst.
    const double cap = burst_ + static_cast<double>(held_.size());
    b.tokens = std::min(cap, b.tokens + rate_ * static_cast<double>(now_ns - b.last_ns) / 1e9);
    b.last_ns = now_ns;
  }
  if (b.tokens >= 1) {
    b.tokens -= 1;
    return true;
  }
  return false;
}

void LimitStage::Release(int64_t now_ns, bool all, Downstream& next) {
  while (!held_.empty()) {
    Bucket* b = BucketFor(held_.front(), now_ns);
    if (!all && b && !TryTake(*b, now_ns)) return;
    Entry e = std::move(held_.front());
    held_.pop_front();
    held_bytes_ -= e.line.size();
    next.Emit(std::move(e));
  }
}

Verdict LimitStage::Process(Entry& entry, Downstream& next) {
  const int64_t now = ctx_.NowNs();
  if (!held_.empty()) {
    Release(now, false, next);
    if (!held_.empty()) {
      Hold(std::move(entry));
      return Verdict::kTaken;
    }
  }
  Bucket* b = BucketFor(entry, now);
  if (!b || TryTake(*b, now)) return Verdict::kPass;
  if (drop_) {
    ctx_.ReportDrop(reason_);
    return Verdict::kDrop;
  }
  Hold(std::move(entry));
  return Verdict::kTaken;
}

void LimitStage::Hold(Entry&& entry) {
  // The plugin stops reading a journaled stream long before this (the held bytes count in its
  // memory window); a stream without a journal cannot be stopped: its oldest go.
  while (!held_.empty() && held_bytes_ + entry.line.size() > kMaxHeldBytes) {
    held_bytes_ -= held_.front().line.size();
    held_.pop_front();
    ctx_.ReportDrop("limit_buffer_full");
  }
  held_bytes_ += entry.line.size();
  held_.push_back(std::move(entry));
}

void LimitStage::Flush(int64_t now_ns, bool final, Downstream& next) {
  Release(now_ns, final, next);
}

}  // namespace skald::stages
