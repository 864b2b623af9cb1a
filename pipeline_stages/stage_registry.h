// The registry from YAML stage name to constructor, and the builder of a stage list.
//
// The builder only knows this table; adding a stage is one new file pair and one line in
// stage_registry.cc.
#pragma once

#include <yaml-cpp/yaml.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {

using StageFactory = std::unique_ptr<Stage> (*)(const YAML::Node& config, const StageContext& ctx);

// nullptr when the name is unknown (or refused).
StageFactory FindStageFactory(std::string_view name);
// Every accepted stage name, for messages and docs.
std::vector<std::string_view> StageNames();

// Builds the YAML list `stages` into `chain`. `where_prefix` names the list in messages
// ("pipeline stage" at top level, "pipeline stage 3 (match) > stage" inside a match).
void BuildStageList(const YAML::Node& stages, const BuildContext& build,
                    std::string_view where_prefix, StageChain& chain);

}  // namespace skald::stages
