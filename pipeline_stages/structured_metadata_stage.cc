#include "pipeline_stages/structured_metadata_stage.h"

#include "pipeline_stages/labels_stage.h"

namespace skald::stages {

StructuredMetadataStage::StructuredMetadataStage(const YAML::Node& config, const StageContext& ctx)
    : fields_(ReadLabelSourceMap(config, ctx)) {}

Verdict StructuredMetadataStage::Process(Entry& entry, Downstream&) {
  added_.clear();
  for (const auto& [name, source] : fields_) {
    std::optional<std::string_view> value;
    if (const Value* v = entry.extracted.Find(source)) {
      value = v->AsString();  // null: none
      if (value && !IsValidUtf8(*value)) value.reset();
    }
    if (!value) value = entry.labels.Get(source);
    if (!value) continue;
    added_.emplace_back(source, entry.structured_metadata.size());
    entry.structured_metadata.push_back(MetadataPair{name, std::string(*value)});
  }
  // After all pairs are added (a later field may read the same label), as Promtail does.
  for (const auto& [source, index] : added_) {
    const std::optional<std::string_view> label = entry.labels.Get(source);
    if (label && *label == entry.structured_metadata[index].value) entry.labels.Erase(source);
  }
  return Verdict::kPass;
}

}  // namespace skald::stages
