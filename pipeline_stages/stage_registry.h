// The registry from YAML stage name to constructor, and the builder of a stage list.
//
// The builder only knows this table; adding a stage is one new file pair and one line in
// stage_registry.cc. It bounds a pipeline at kMaxStages stages and kMaxNesting nested match
// stages, far above what real pipelines need: a YAML alias is a stage at every use, so a few
// hundred bytes of nested aliases would otherwise build 10^8 stages.
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

inline constexpr std::size_t kMaxStages = 1000;  // in one pipeline, nested ones included
inline constexpr int kMaxNesting = 16;           // match stages inside match stages

// Builds the YAML list `stages` into `chain`. `where_prefix` names the list in messages
// ("pipeline stage" at top level, "pipeline stage 3 (match) > stage" inside a match). Throws
// ConfigError for a list inside more than kMaxNesting match stages, or once the pipeline has
// more than kMaxStages stages, before building further.
void BuildStageList(const YAML::Node& stages, const BuildContext& build,
                    std::string_view where_prefix, StageChain& chain);

}  // namespace skald::stages
