// decolorize: strips ANSI escape sequences (CSI such as colours, OSC, two-byte ESC) from the line.
#pragma once

#include <string>

#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {

// Removes ANSI escape sequences from `s` in place.
void StripAnsi(std::string& s);

class DecolorizeStage final : public Stage {
 public:
  DecolorizeStage(const YAML::Node& config, const StageContext& ctx);
  Verdict Process(Entry& entry, Downstream& next) override;
};

}  // namespace skald::stages
