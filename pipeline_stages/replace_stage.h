// replace: replaces every capture group of every match of `expression` in the line (or in
// extracted[source]) with the rendered `replace` template, where `.Value` is the captured text
// and the other keys are the extracted values. The result becomes the line, or
// extracted[source]. Named groups are also set in extracted. No match or no capture group:
// nothing changes; a failed template execution changes nothing, and neither does a result
// longer than GoTemplate::kMaxOutputBytes and the input (reported as "output_too_long").
#pragma once

#include <re2/re2.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pipeline_stages/go_template/go_template.h"
#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {

class ReplaceStage final : public Stage {
 public:
  ReplaceStage(const YAML::Node& config, const StageContext& ctx);
  Verdict Process(Entry& entry, Downstream& next) override;

 private:
  StageContext ctx_;
  std::unique_ptr<RE2> re_;
  std::vector<std::string> group_names_;  // by group index; "" for unnamed
  std::optional<std::string> source_;
  GoTemplate template_;
  std::string input_;
  std::string result_;
  std::string rendered_;
  std::vector<re2::StringPiece> groups_;
  // What the template made of each named group's capture in the first match (group index,
  // rendering): the group's extracted value, as in Promtail (a template renders equal captures
  // alike, so this is also what later equal captures became).
  std::vector<std::pair<size_t, std::string>> first_match_;
};

}  // namespace skald::stages
