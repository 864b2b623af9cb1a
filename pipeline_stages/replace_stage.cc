#include "pipeline_stages/replace_stage.h"

#include <algorithm>

#include "pipeline_stages/extracted_template_data.h"
#include "pipeline_stages/go/go_regexp.h"
#include "pipeline_stages/go/go_string.h"
#include "pipeline_stages/regex_stage.h"
#include "pipeline_stages/template_stage.h"

namespace skald::stages {

ReplaceStage::ReplaceStage(const YAML::Node& config, const StageContext& ctx) : ctx_(ctx) {
  StageConfig c(config, ctx, {"expression", "source", "replace"});
  re_ = CompileUserRegex(c, "expression", c.RequiredString("expression"));
  source_ = c.OptString("source");
  if (source_ && source_->empty()) c.Fail("source", "must not be empty when given");
  template_ = ParseTemplateField(c, "replace", c.String("replace"));
  const int n = re_->NumberOfCapturingGroups();
  group_names_.resize(n + 1);
  for (const auto& [index, name] : re_->CapturingGroupNames()) group_names_[index] = name;
  groups_.resize(n + 1);
}

Verdict ReplaceStage::Process(Entry& entry, Downstream&) {
  if (groups_.size() == 1) return Verdict::kPass;  // no capture group
  if (source_) {
    const Value* v = entry.extracted.Find(*source_);
    if (!v) return Verdict::kPass;
    auto s = v->AsString();
    if (!s || s->empty()) return Verdict::kPass;
    input_.assign(s->data(), s->size());
  } else {
    input_ = entry.line;
  }
  entry.extracted.MaterializeAll();  // templates hold views of several values
  result_.clear();
  first_match_.clear();
  size_t pos = 0;     // where the next search starts
  size_t copied = 0;  // input_[0, copied) is accounted for in result_
  size_t last_end = std::string::npos;
  // Every match may render up to the template's bound: the result as a whole is held to it too
  // (or to the input's size, when that is longer).
  const size_t limit = std::max(input_.size(), GoTemplate::kMaxOutputBytes);
  bool matched = false;
  GoRegexpText subject(input_);
  while (pos <= input_.size()) {
    if (!subject.Match(*re_, pos, input_.size(), RE2::UNANCHORED, groups_.data(),
                       static_cast<int>(groups_.size()))) {
      break;
    }
    const size_t start = groups_[0].data() - input_.data();
    const size_t end = start + groups_[0].size();
    // As Go's FindAll: after an empty match at pos the search goes on one character (rune)
    // further, and an empty match right after the previous match is not taken.
    if (end == pos) {
      size_t width = 1;
      if (pos < input_.size()) DecodeRune(input_, pos, &width);
      pos += width;
    } else {
      pos = end;
    }
    const bool right_after = start == end && start == last_end;
    last_end = end;
    if (right_after) continue;
    const bool first = !matched;
    matched = true;
    for (size_t g = 1; g < groups_.size(); ++g) {
      if (!groups_[g].data()) continue;
      const size_t gs = groups_[g].data() - input_.data();
      const size_t ge = gs + groups_[g].size();
      const std::string_view captured(groups_[g].data(), groups_[g].size());
      // A group nested inside one already replaced is rendered too (its named value is what
      // the template made of it) but not written into the result.
      const bool nested = gs < copied;
      ExtractedTemplateData data(entry.extracted, captured, std::nullopt);
      const GoTemplate::Result rendered = template_.Execute(data, &rendered_);
      if (rendered == GoTemplate::Result::kOk && !nested) {
        result_.append(input_, copied, gs - copied);
        result_ += rendered_;
      }
      if (rendered == GoTemplate::Result::kTooLong || result_.size() > limit) {
        ctx_.ReportFailure("output_too_long");
        return Verdict::kPass;
      }
      if (rendered != GoTemplate::Result::kOk) return Verdict::kPass;
      if (first && !group_names_[g].empty()) first_match_.emplace_back(g, rendered_);
      if (!nested) copied = ge;
    }
  }
  if (!matched) return Verdict::kPass;
  result_.append(input_, copied, std::string::npos);
  if (result_.size() > limit) {
    ctx_.ReportFailure("output_too_long");
    return Verdict::kPass;
  }
  if (source_) {
    entry.extracted.Upsert(*source_).MutableString().swap(result_);
  } else {
    entry.line.swap(result_);
  }
  for (const auto& [g, rendered] : first_match_)
    entry.extracted.SetString(group_names_[g], rendered);
  return Verdict::kPass;
}

}  // namespace skald::stages
