// match: runs nested stages on entries that match a LogQL selector, or drops them.
//
// `selector` is a stream selector with optional line filters ({app="x"} |= "error"); label
// regexes are fully anchored and a missing label compares as "". With `action: keep` (default)
// matching entries go through `stages` and the rest pass unchanged; with `action: drop`
// matching entries are dropped (reason `drop_counter_reason`, default "match_stage").
#pragma once

#include <string>

#include "pipeline_stages/logql_selector.h"
#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {

class MatchStage final : public Stage {
 public:
  MatchStage(const YAML::Node& config, const StageContext& ctx);
  Verdict Process(Entry& entry, Downstream& next) override;
  void Flush(int64_t now_ns, bool final, Downstream& next) override;
  bool Holds() const override { return stages_.Holds(); }
  size_t HeldBytes() const override { return stages_.HeldBytes(); }
  std::optional<uint64_t> OldestHeldOrigin() const override { return stages_.OldestHeldOrigin(); }

 private:
  StageContext ctx_;
  LogqlSelector selector_;
  bool drop_;
  std::string reason_;
  StageChain stages_;
};

}  // namespace skald::stages
