// ExtractedTemplateData: what template and replace stages show a Go template: every extracted
// key with a string form (numbers and bools as their text, as Promtail passes strings), plus
// `.Value` and, for the template stage, `.Entry`. A view: it reads the entry while rendering.
#pragma once

#include <optional>
#include <string_view>

#include "pipeline_stages/entry.h"
#include "pipeline_stages/go_template/go_template.h"

namespace skald::stages {

class ExtractedTemplateData final : public TemplateData {
 public:
  ExtractedTemplateData(const Extracted& extracted, std::optional<std::string_view> value,
                        std::optional<std::string_view> entry)
      : extracted_(extracted), value_(value), entry_(entry) {}

  TemplateValue Lookup(std::string_view name) const override;
  void ForEach(const std::function<void(std::string_view, const TemplateValue&)>& f) const override;

 private:
  const Extracted& extracted_;
  std::optional<std::string_view> value_;  // .Value when set
  std::optional<std::string_view> entry_;  // .Entry when set
};

}  // namespace skald::stages
