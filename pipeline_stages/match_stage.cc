#include "pipeline_stages/match_stage.h"

#include "pipeline_stages/stage_registry.h"

namespace skald::stages {

MatchStage::MatchStage(const YAML::Node& config, const StageContext& ctx) : ctx_(ctx) {
  StageConfig c(config, ctx,
                {"selector", "stages", "action", "drop_counter_reason", "pipeline_name"});
  const std::string selector = c.RequiredString("selector");
  try {
    selector_ = LogqlSelector::Parse(selector);
  } catch (const ConfigError& e) {
    c.Fail("selector", e.what());
  }
  const std::string action = c.String("action", "keep");
  if (action != "keep" && action != "drop") {
    c.Fail("action", Quote(action) + " is not an action; expected keep or drop");
  }
  drop_ = action == "drop";
  reason_ = c.String("drop_counter_reason", "match_stage");
  const YAML::Node stages = c.Get("stages");
  const bool has_stages = stages && !stages.IsNull();
  // An empty list is no stages (Promtail checks the list's length).
  if (drop_ && has_stages && !(stages.IsSequence() && stages.size() == 0)) {
    c.Fail("stages", "cannot be used with action: drop (matching entries are dropped)");
  }
  if (!drop_) {
    if (!has_stages || (stages.IsSequence() && stages.size() == 0)) {
      c.Fail("stages", "is required with action: keep: the stages to run on matching entries");
    }
    BuildStageList(stages, *ctx.build, ctx.where + " > stage", stages_);
  }
}

Verdict MatchStage::Process(Entry& entry, Downstream& next) {
  const bool match = selector_.MatchesLabels([&](std::string_view n) {
    return entry.labels.Get(n);
  }) && selector_.MatchesLine(entry.line);
  if (!match) return Verdict::kPass;
  if (drop_) {
    ctx_.ReportDrop(reason_);
    return Verdict::kDrop;
  }
  // The nested stages are a pipeline of their own, and a Promtail pipeline begins by copying
  // the entry's labels, as they are now, into the extracted map (over values of the same
  // names): a label set by an earlier stage is a value the nested stages can read.
  entry.labels.ForEach([&](std::string_view name, std::string_view value) {
    entry.extracted.SetString(name, value);
  });
  stages_.Run(entry, next);
  return Verdict::kTaken;
}

void MatchStage::Flush(int64_t now_ns, bool final, Downstream& next) {
  stages_.Flush(now_ns, final, next);
}

}  // namespace skald::stages
