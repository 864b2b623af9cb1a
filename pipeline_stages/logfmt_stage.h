// logfmt: extracts values of a logfmt line (or of extracted[source]) as strings.
// `mapping: {key: logfmt_key}` (empty logfmt_key = the key itself). Keys that do not occur are
// not set; a malformed tail stops parsing and keeps what was read before it.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {

class LogfmtStage final : public Stage {
 public:
  LogfmtStage(const YAML::Node& config, const StageContext& ctx);
  Verdict Process(Entry& entry, Downstream& next) override;

 private:
  std::vector<std::pair<std::string, std::string>> mapping_;  // extracted key -> logfmt key
  std::optional<std::string> source_;
  std::string text_;
  std::string scratch_;
};

}  // namespace skald::stages
