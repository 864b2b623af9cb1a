#include "pipeline_stages/sampling_stage.h"

#include <cmath>

namespace skald::stages {

SamplingStage::SamplingStage(const YAML::Node& config, const StageContext& ctx) : ctx_(ctx) {
  StageConfig c(config, ctx, {"rate", "drop_counter_reason"});
  auto rate = c.OptDouble("rate");
  if (!rate) c.Fail("rate", "is required: the probability to keep an entry, between 0 and 1");
  if (*rate < 0 || *rate > 1) {
    c.Fail("rate", std::to_string(*rate) + " is out of range; expected a number in [0, 1]");
  }
  keep_all_ = *rate >= 1;
  // Below 1, rate * 2^64 is below 2^64 and fits; 2^64 itself (rate 1) would not.
  threshold_ = keep_all_ ? UINT64_MAX : static_cast<uint64_t>(std::ldexp(*rate, 64));
  reason_ = c.String("drop_counter_reason", "sampling_stage");
  state_ = ctx.build->seed ? ctx.build->seed : static_cast<uint64_t>(ctx.NowNs());
  if (state_ == 0) state_ = 0x9E3779B97F4A7C15ull;
}

Verdict SamplingStage::Process(Entry&, Downstream&) {
  if (keep_all_) return Verdict::kPass;
  // splitmix64
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  if (z < threshold_) return Verdict::kPass;
  ctx_.ReportDrop(reason_);
  return Verdict::kDrop;
}

}  // namespace skald::stages
