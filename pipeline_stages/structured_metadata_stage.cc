#include "pipeline_stages/structured_metadata_stage.h"

#include "pipeline_stages/labels_stage.h"

namespace skald::stages {

StructuredMetadataStage::StructuredMetadataStage(const YAML::Node& config, const StageContext& ctx)
    : fields_(ReadLabelSourceMap(config, ctx)) {}

Verdict StructuredMetadataStage::Process(Entry& entry, Downstream&) {
  for (const auto& [name, source] : fields_) {
    std::optional<std::string_view> value;
    if (const Value* v = entry.extracted.Find(source)) value = v->AsString();
    auto label = entry.labels.Get(source);
    if (!value) value = label;
    if (value && !value->empty() && IsValidUtf8(*value)) {
      entry.structured_metadata.push_back(MetadataPair{name, std::string(*value)});
    }
    if (label) entry.labels.Erase(source);
  }
  return Verdict::kPass;
}

}  // namespace skald::stages
