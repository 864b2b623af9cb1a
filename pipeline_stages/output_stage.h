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
};

}  // namespace skald::stages
