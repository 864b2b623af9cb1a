// structured_metadata (old name non_indexed_labels): like labels, but appends name/value pairs
// to the entry's structured metadata. The value comes from extracted, else from the labels; a
// label named as a source leaves the labels. The place for high-cardinality fields (trace IDs).
#pragma once

#include <string>
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
};

}  // namespace skald::stages
