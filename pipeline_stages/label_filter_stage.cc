#include "pipeline_stages/label_filter_stage.h"

#include <algorithm>

namespace skald::stages {

std::vector<std::string> ReadLabelNameList(const YAML::Node& config, const StageContext& ctx) {
  if (!config || config.IsNull() || !config.IsSequence() || config.size() == 0) {
    ctx.Fail("expected a non-empty list of label names, got " + DescribeNode(config));
  }
  std::vector<std::string> names;
  for (const auto& item : config) {
    if (!item.IsScalar() || !IsValidLabelName(item.Scalar())) {
      ctx.Fail("invalid label name " + DescribeNode(item) +
               ": label names must match [a-zA-Z_][a-zA-Z0-9_]*");
    }
    names.push_back(item.Scalar());
  }
  return names;
}

LabelAllowStage::LabelAllowStage(const YAML::Node& config, const StageContext& ctx)
    : allowed_(ReadLabelNameList(config, ctx)) {}

Verdict LabelAllowStage::Process(Entry& entry, Downstream&) {
  scratch_.clear();
  entry.labels.ForEach([&](std::string_view name, std::string_view) {
    if (std::find(allowed_.begin(), allowed_.end(), name) == allowed_.end()) {
      scratch_.emplace_back(name);
    }
  });
  for (const auto& name : scratch_) entry.labels.Erase(name);
  return Verdict::kPass;
}

LabelDropStage::LabelDropStage(const YAML::Node& config, const StageContext& ctx)
    : dropped_(ReadLabelNameList(config, ctx)) {}

Verdict LabelDropStage::Process(Entry& entry, Downstream&) {
  for (const auto& name : dropped_) entry.labels.Erase(name);
  return Verdict::kPass;
}

}  // namespace skald::stages
