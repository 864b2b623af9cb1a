#include "pipeline_stages/output_stage.h"

namespace skald::stages {

OutputStage::OutputStage(const YAML::Node& config, const StageContext& ctx) {
  StageConfig c(config, ctx, {"source"});
  source_ = c.RequiredString("source");
}

Verdict OutputStage::Process(Entry& entry, Downstream&) {
  const Value* v = entry.extracted.FindHinted(source_, hint_);
  if (!v) return Verdict::kPass;
  if (auto s = v->AsString()) entry.line.assign(s->data(), s->size());
  return Verdict::kPass;
}

}  // namespace skald::stages
