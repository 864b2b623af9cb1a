// decolorize: strips ANSI escape sequences from the line, exactly those Promtail strips (CSI such
// as colours, OSC titles, ESC(B, ESC c, and the same after U+009B).
#pragma once

#include <string>

#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {

// Removes ANSI escape sequences from `s` in place, as Promtail's decolorize stage does.
void StripAnsi(std::string& s);

class DecolorizeStage final : public Stage {
 public:
  DecolorizeStage(const YAML::Node& config, const StageContext& ctx);
  Verdict Process(Entry& entry, Downstream& next) override;
};

}  // namespace skald::stages
