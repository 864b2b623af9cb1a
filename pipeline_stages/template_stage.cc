#include "pipeline_stages/template_stage.h"

#include "pipeline_stages/extracted_template_data.h"

namespace skald::stages {

GoTemplate ParseTemplateField(const StageConfig& c, std::string_view field, std::string_view text) {
  try {
    return GoTemplate::Parse(text);
  } catch (const ConfigError& e) {
    c.Fail(field, e.what());
  }
}

TemplateStage::TemplateStage(const YAML::Node& config, const StageContext& ctx) : ctx_(ctx) {
  StageConfig c(config, ctx, {"source", "template"});
  source_ = c.RequiredString("source");
  if (!c.Has("template")) c.Fail("template", "is required: a Go template, e.g. '{{ .Value }}'");
  template_ = ParseTemplateField(c, "template", c.String("template"));
}

Verdict TemplateStage::Process(Entry& entry, Downstream&) {
  entry.extracted.MaterializeAll();  // the template holds views of several values
  std::optional<std::string_view> value;
  if (const Value* v = entry.extracted.Find(source_)) value = v->AsString();
  ExtractedTemplateData data(entry.extracted, value, std::string_view(entry.line));
  switch (template_.Execute(data, &out_)) {
    case GoTemplate::Result::kOk:
      break;
    case GoTemplate::Result::kTooLong:
      ctx_.ReportFailure("output_too_long");
      return Verdict::kPass;
    case GoTemplate::Result::kFailed:
      return Verdict::kPass;
  }
  if (out_.empty()) {
    entry.extracted.Erase(source_);
  } else {
    entry.extracted.Upsert(source_).MutableString().swap(out_);
  }
  return Verdict::kPass;
}

}  // namespace skald::stages
