// tenant: sets the entry's tenant from exactly one of `label`, `source` (extracted) or `value`.
// An absent or empty value leaves the tenant unchanged. A fixed `value` must be a valid tenant ID
// (tenant_id.h); one taken from a label or the extracted data is checked by the Loki client.
#pragma once

#include <string>

#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {

class TenantStage final : public Stage {
 public:
  TenantStage(const YAML::Node& config, const StageContext& ctx);
  Verdict Process(Entry& entry, Downstream& next) override;

 private:
  enum class From { kLabel, kSource, kValue };
  From from_;
  std::string arg_;
};

}  // namespace skald::stages
