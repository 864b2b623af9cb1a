#include "pipeline_stages/output_stage.h"

namespace skald::stages {

OutputStage::OutputStage(const YAML::Node& config, const StageContext& ctx) {
  StageConfig c(config, ctx, {"source"});
  source_ = c.RequiredString("source");
}

Verdict OutputStage::Process(Entry& entry, Downstream&) {
  const Value* v;
  if (entry.extracted.layout() == layout_seen_ && layout_seen_ != 0) {
    v = entry.extracted.FindAt(hint_);  // found there under this layout
  } else {
    v = entry.extracted.FindHinted(source_, hint_);
    layout_seen_ = hint_ != Extracted::kNoHint ? entry.extracted.layout() : 0;
  }
  if (!v) return Verdict::kPass;
  if (auto s = v->AsString()) entry.line.assign(s->data(), s->size());
  return Verdict::kPass;
}

}  // namespace skald::stages
