// output: the line becomes the extracted value `source` (when it has a string form).
#pragma once

#include <string>

#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {

class OutputStage final : public Stage {
 public:
  OutputStage(const YAML::Node& config, const StageContext& ctx);
  Verdict Process(Entry& entry, Downstream& next) override;

 private:
  std::string source_;
  size_t hint_ = Extracted::kNoHint;  // extracted slot of source_
  uint64_t layout_seen_ = 0;          // Extracted::layout() under which hint_ was found
};

}  // namespace skald::stages
