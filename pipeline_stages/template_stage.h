// template: renders a Go template into extracted[source]. The template sees every extracted
// value with a string form, `.Value` (extracted[source]) and `.Entry` (the line); a missing key
// renders `<no value>`. An empty result deletes the key; a failed execution changes nothing
// (one whose output would pass GoTemplate::kMaxOutputBytes is reported as "output_too_long").
#pragma once

#include <string>

#include "pipeline_stages/go_template/go_template.h"
#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {

// Parses a template field; a ConfigError names the stage and field.
GoTemplate ParseTemplateField(const StageConfig& c, std::string_view field, std::string_view text);

class TemplateStage final : public Stage {
 public:
  TemplateStage(const YAML::Node& config, const StageContext& ctx);
  Verdict Process(Entry& entry, Downstream& next) override;

 private:
  StageContext ctx_;
  std::string source_;
  GoTemplate template_;
  std::string out_;
};

}  // namespace skald::stages
