// labelallow (keep only the listed labels) and labeldrop (remove the listed labels).
#pragma once

#include <string>
#include <vector>

#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {

// Reads a non-empty list of valid label names.
std::vector<std::string> ReadLabelNameList(const YAML::Node& config, const StageContext& ctx);

class LabelAllowStage final : public Stage {
 public:
  LabelAllowStage(const YAML::Node& config, const StageContext& ctx);
  Verdict Process(Entry& entry, Downstream& next) override;

 private:
  std::vector<std::string> allowed_;
  std::vector<std::string> scratch_;
};

class LabelDropStage final : public Stage {
 public:
  LabelDropStage(const YAML::Node& config, const StageContext& ctx);
  Verdict Process(Entry& entry, Downstream& next) override;

 private:
  std::vector<std::string> dropped_;
};

}  // namespace skald::stages
