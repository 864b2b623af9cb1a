#include "pipeline_stages/extracted_template_data.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace skald::stages {

TemplateValue ExtractedTemplateData::Lookup(std::string_view name) const {
  if (value_ && name == "Value") return TemplateValue::String(*value_);
  if (entry_ && name == "Entry") return TemplateValue::String(*entry_);
  const Value* v = extracted_.Find(name);
  if (!v) return TemplateValue::Missing();
  auto s = v->AsString();
  if (!s) return TemplateValue::Missing();
  return TemplateValue::String(*s);
}

void ExtractedTemplateData::ForEach(
    const std::function<void(std::string_view, const TemplateValue&)>& f) const {
  std::vector<std::string_view> names;
  extracted_.ForEach([&](std::string_view k, const Value& v) {
    if (v.AsString()) names.push_back(k);
  });
  if (value_) names.push_back("Value");
  if (entry_) names.push_back("Entry");
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  for (std::string_view n : names) f(n, Lookup(n));
}

}  // namespace skald::stages
