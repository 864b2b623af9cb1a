// drop: drops entries for which every given condition holds: `source` keys all exist (alone),
// the joined values of the sources present (`separator`, default ";"; as Promtail, a missing
// key is left out) equal `value` or match `expression`,
// the line matches `expression` (no source), the timestamp is older than `older_than`, the line
// is longer than `longer_than` bytes ("8kb"). Dropped entries are counted with
// `drop_counter_reason` (default "drop_stage").
#pragma once

#include <re2/re2.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {

class DropStage final : public Stage {
 public:
  DropStage(const YAML::Node& config, const StageContext& ctx);
  Verdict Process(Entry& entry, Downstream& next) override;

 private:
  bool ShouldDrop(const Entry& entry);
  // Joins the values of the sources present (missing ones are left out, so with none present
  // the joined text is ""); false when one has no string form.
  bool JoinSources(const Entry& entry);

  StageContext ctx_;
  std::vector<std::string> sources_;
  std::string separator_;
  std::unique_ptr<RE2> expression_;
  std::optional<std::string> value_;
  std::optional<int64_t> older_than_ns_;
  std::optional<uint64_t> longer_than_;
  std::string reason_;
  std::string joined_;
};

}  // namespace skald::stages
