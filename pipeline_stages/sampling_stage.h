// sampling: keeps each entry with probability `rate` (0..1); the others are dropped and counted
// with reason "sampling_stage" (or drop_counter_reason).
#pragma once

#include <cstdint>
#include <string>

#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {

class SamplingStage final : public Stage {
 public:
  SamplingStage(const YAML::Node& config, const StageContext& ctx);
  Verdict Process(Entry& entry, Downstream& next) override;

 private:
  StageContext ctx_;
  uint64_t threshold_;  // keep when the next random 64-bit value is below it
  bool keep_all_;
  uint64_t state_;
  std::string reason_;
};

}  // namespace skald::stages
