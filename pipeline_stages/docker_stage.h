// docker: parses a json-file record {"log":..., "stream":..., "time":...}: the line becomes
// `log`, the label `stream` is set, the timestamp comes from `time` (RFC3339Nano). Extracted
// gets output, stream and timestamp. Anything else leaves the entry unchanged. skald receives
// raw lines, so this exists for pipelines copied from Promtail.
#pragma once

#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {

class DockerStage final : public Stage {
 public:
  DockerStage(const YAML::Node& config, const StageContext& ctx);
  Verdict Process(Entry& entry, Downstream& next) override;
};

}  // namespace skald::stages
