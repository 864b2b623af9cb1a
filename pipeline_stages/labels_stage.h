// labels: sets labels from extracted values ({label: extracted_key}, empty key = same name).
// A missing, null or non-UTF-8 value leaves the label unchanged; so does an empty one (a label
// with an empty value is no label in Loki).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {

// Reads a {name: source} map whose names must be valid label names (labels, structured_metadata).
std::vector<std::pair<std::string, std::string>> ReadLabelSourceMap(const YAML::Node& config,
                                                                    const StageContext& ctx);

class LabelsStage final : public Stage {
 public:
  LabelsStage(const YAML::Node& config, const StageContext& ctx);
  Verdict Process(Entry& entry, Downstream& next) override;

 private:
  std::vector<std::pair<std::string, std::string>> labels_;  // label -> extracted key
  uint64_t layout_seen_ = 0;   // Extracted::layout() under which every hint was found
  std::vector<size_t> hints_;  // extracted slot of each key
};

}  // namespace skald::stages
