#include "pipeline_stages/static_labels_stage.h"

namespace skald::stages {

StaticLabelsStage::StaticLabelsStage(const YAML::Node& config, const StageContext& ctx) {
  if (!config || !config.IsMap() || config.size() == 0) {
    ctx.Fail("expected a non-empty map of label name to value, got " + DescribeNode(config));
  }
  for (const auto& kv : config) {
    const std::string name = KeyName(kv.first, ctx, "a label name");
    if (!IsValidLabelName(name)) {
      ctx.Fail("invalid label name " + Quote(name) +
               ": label names must match [a-zA-Z_][a-zA-Z0-9_]*");
    }
    // A null or empty value sets nothing (and leaves a label of that name as it is), as in
    // Promtail.
    if (!kv.second || kv.second.IsNull()) continue;
    if (!kv.second.IsScalar()) {
      ctx.Fail("value for label " + Quote(name) + " must be a string, got " +
               DescribeNode(kv.second));
    }
    const std::string& value = kv.second.Scalar();
    if (!IsValidUtf8(value)) ctx.Fail("value for label " + Quote(name) + " is not valid UTF-8");
    if (!value.empty()) labels_.emplace_back(name, value);
  }
}

Verdict StaticLabelsStage::Process(Entry& entry, Downstream&) {
  for (const auto& [name, value] : labels_) entry.labels.Set(name, value);
  return Verdict::kPass;
}

}  // namespace skald::stages
