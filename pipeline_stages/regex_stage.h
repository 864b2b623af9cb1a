// regex: matches an RE2 expression (unanchored) against the line or extracted[source] and sets
// every named group in extracted (a group that did not participate is set to ""). No match:
// the entry is unchanged.
#pragma once

#include <re2/re2.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {

// Compiles a user regex (Go syntax accepted: (?<name>...)); throws ConfigError naming the field.
std::unique_ptr<RE2> CompileUserRegex(const StageConfig& c, std::string_view field,
                                      std::string_view pattern, bool anchored_fully = false);

class RegexStage final : public Stage {
 public:
  RegexStage(const YAML::Node& config, const StageContext& ctx);
  Verdict Process(Entry& entry, Downstream& next) override;

 private:
  std::unique_ptr<RE2> re_;
  std::optional<std::string> source_;
  std::vector<std::pair<int, std::string>> groups_;  // group index -> name
  std::vector<re2::StringPiece> matches_;
  std::string text_;
};

}  // namespace skald::stages
