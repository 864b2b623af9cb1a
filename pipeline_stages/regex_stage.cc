#include "pipeline_stages/regex_stage.h"

#include "pipeline_stages/go/go_regexp.h"

namespace skald::stages {

std::unique_ptr<RE2> CompileUserRegex(const StageConfig& c, std::string_view field,
                                      std::string_view pattern, bool anchored_fully) {
  std::string re = GoRegexpToRe2Syntax(pattern);
  if (anchored_fully) re = "^(?:" + re + ")$";
  RE2::Options opts;
  opts.set_log_errors(false);
  auto compiled = std::make_unique<RE2>(re, opts);
  if (!compiled->ok()) {
    c.Fail(field, "invalid regular expression " + Quote(pattern) + ": " + compiled->error() +
                      " (RE2 syntax; named groups as (?P<name>...) or (?<name>...))");
  }
  return compiled;
}

RegexStage::RegexStage(const YAML::Node& config, const StageContext& ctx) {
  StageConfig c(config, ctx, {"expression", "source"});
  const std::string expr = c.RequiredString("expression");
  re_ = CompileUserRegex(c, "expression", expr);
  for (const auto& [name, index] : re_->NamedCapturingGroups()) groups_.emplace_back(index, name);
  if (groups_.empty()) {
    c.Fail("expression",
           Quote(expr) + " has no named capture group; add one, e.g. (?P<level>\\w+)");
  }
  matches_.resize(re_->NumberOfCapturingGroups() + 1);
  source_ = c.OptString("source");
  if (source_ && source_->empty()) c.Fail("source", "must not be empty when given");
}

Verdict RegexStage::Process(Entry& entry, Downstream&) {
  std::string_view text = entry.line;
  if (source_) {
    const Value* v = entry.extracted.Find(*source_);
    if (!v) return Verdict::kPass;
    auto s = v->AsString();
    if (!s) return Verdict::kPass;
    text_.assign(s->data(), s->size());
    text = text_;
  }
  if (!GoRegexpMatch(*re_, text, 0, text.size(), RE2::UNANCHORED, matches_.data(),
                     static_cast<int>(matches_.size()))) {
    return Verdict::kPass;
  }
  for (const auto& [index, name] : groups_) {
    const re2::StringPiece& m = matches_[index];
    entry.extracted.SetString(name,
                              m.data() ? std::string_view(m.data(), m.size()) : std::string_view());
  }
  return Verdict::kPass;
}

}  // namespace skald::stages
