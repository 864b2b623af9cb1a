// structured_metadata (old name non_indexed_labels): like labels, but appends name/value pairs
// to the entry's structured metadata, as Promtail does: the value comes from extracted (a
// string, number or bool in valid UTF-8, "" included), else from the labels; a label named as a
// source whose value is the one added leaves the labels. The place for high-cardinality fields
// (trace IDs).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {

class StructuredMetadataStage final : public Stage {
 public:
  StructuredMetadataStage(const YAML::Node& config, const StageContext& ctx);
  Verdict Process(Entry& entry, Downstream& next) override;

 private:
  std::vector<std::pair<std::string, std::string>> fields_;  // name -> source
  std::vector<std::pair<std::string_view, size_t>> added_;   // source -> index of its pair
};

}  // namespace skald::stages
