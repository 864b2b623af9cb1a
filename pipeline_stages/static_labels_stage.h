// static_labels: sets fixed labels ({name: value}).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {

class StaticLabelsStage final : public Stage {
 public:
  StaticLabelsStage(const YAML::Node& config, const StageContext& ctx);
  Verdict Process(Entry& entry, Downstream& next) override;

 private:
  std::vector<std::pair<std::string, std::string>> labels_;
};

}  // namespace skald::stages
