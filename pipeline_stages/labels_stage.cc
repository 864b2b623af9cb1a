#include "pipeline_stages/labels_stage.h"

namespace skald::stages {

std::vector<std::pair<std::string, std::string>> ReadLabelSourceMap(const YAML::Node& config,
                                                                    const StageContext& ctx) {
  if (!config || config.IsNull() || (config.IsMap() && config.size() == 0)) {
    ctx.Fail("needs a map of label name to extracted key, e.g. {level: , app: service}");
  }
  if (!config.IsMap()) {
    ctx.Fail("expected a map of label name to extracted key, got " + DescribeNode(config));
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& kv : config) {
    const std::string name = KeyName(kv.first, ctx, "a label name");
    if (!IsValidLabelName(name)) {
      ctx.Fail("invalid label name " + Quote(name) +
               ": label names must match [a-zA-Z_][a-zA-Z0-9_]*");
    }
    std::string source = name;
    if (kv.second && !kv.second.IsNull()) {
      if (!kv.second.IsScalar()) {
        ctx.Fail("source for label " + Quote(name) + " must be a string, got " +
                 DescribeNode(kv.second));
      }
      if (!kv.second.Scalar().empty()) source = kv.second.Scalar();
    }
    out.emplace_back(name, source);
  }
  return out;
}

LabelsStage::LabelsStage(const YAML::Node& config, const StageContext& ctx)
    : labels_(ReadLabelSourceMap(config, ctx)), hints_(labels_.size(), Extracted::kNoHint) {}

Verdict LabelsStage::Process(Entry& entry, Downstream&) {
  // Under the layout where every key was found last time, the hints are known to be right.
  const bool known = entry.extracted.layout() == layout_seen_ && layout_seen_ != 0;
  bool all_found = true;
  for (size_t i = 0; i < labels_.size(); ++i) {
    const auto& [label, key] = labels_[i];
    const Value* v;
    if (known) {
      v = entry.extracted.FindAt(hints_[i]);
    } else {
      v = entry.extracted.FindHinted(key, hints_[i]);
      all_found &= hints_[i] != Extracted::kNoHint;
    }
    if (!v) continue;
    auto s = v->AsString();
    if (!s || !IsValidUtf8(*s)) continue;
    // Promtail sets the label to "", which Loki reads as no label: a label of that name that
    // was there goes.
    if (s->empty()) {
      entry.labels.Erase(label);
    } else {
      entry.labels.Set(label, *s);
    }
  }
  if (!known) layout_seen_ = all_found ? entry.extracted.layout() : 0;
  return Verdict::kPass;
}

}  // namespace skald::stages
