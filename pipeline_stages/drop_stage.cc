#include "pipeline_stages/drop_stage.h"

#include "pipeline_stages/go/go_regexp.h"
#include "pipeline_stages/regex_stage.h"

namespace skald::stages {

DropStage::DropStage(const YAML::Node& config, const StageContext& ctx) : ctx_(ctx) {
  StageConfig c(config, ctx,
                {"source", "separator", "expression", "value", "older_than", "longer_than",
                 "drop_counter_reason"});
  sources_ = c.StringOrList("source");
  separator_ = c.String("separator", ";");
  if (auto e = c.OptString("expression")) {
    if (!e->empty()) expression_ = CompileUserRegex(c, "expression", *e);
  }
  value_ = c.OptString("value");
  if (value_ && sources_.empty()) c.Fail("value", "needs source: the value is compared with it");
  if (value_ && expression_) {
    c.Fail("value", "cannot be combined with expression; use one of them");
  }
  older_than_ns_ = c.OptDurationNs("older_than");
  if (auto l = c.OptString("longer_than")) {
    longer_than_ = ParseByteSize(*l);
    if (!longer_than_) {
      c.Fail("longer_than",
             Quote(*l) +
                 " is not a size (expected e.g. 512, 8kb, 1mb: whole numbers, kb = 1024 bytes)");
    }
  }
  if (sources_.empty() && !expression_ && !older_than_ns_ && !longer_than_) {
    ctx.Fail("needs at least one of source, expression, older_than or longer_than");
  }
  reason_ = c.String("drop_counter_reason", "drop_stage");
}

bool DropStage::JoinSources(const Entry& entry) {
  joined_.clear();
  bool first = true;
  for (const std::string& source : sources_) {
    const Value* v = entry.extracted.Find(source);
    if (!v) continue;  // as Promtail: a missing key is left out of the join
    auto s = v->AsString();
    if (!s) return false;
    if (!first) joined_ += separator_;
    joined_.append(*s);
    first = false;
  }
  return true;
}

bool DropStage::ShouldDrop(const Entry& entry) {
  if (longer_than_ && entry.line.size() <= *longer_than_) return false;
  if (older_than_ns_ && entry.timestamp_ns >= ctx_.NowNs() - *older_than_ns_) return false;
  if (!sources_.empty()) {
    if (!value_ && !expression_) {
      for (const auto& s : sources_) {
        if (!entry.extracted.Find(s)) return false;
      }
      return true;
    }
    if (!JoinSources(entry)) return false;
    if (value_ && joined_ != *value_) return false;
    if (expression_ && !GoRegexpMatches(*expression_, joined_)) return false;
    return true;
  }
  if (expression_ && !GoRegexpMatches(*expression_, entry.line)) return false;
  return true;
}

Verdict DropStage::Process(Entry& entry, Downstream&) {
  if (!ShouldDrop(entry)) return Verdict::kPass;
  ctx_.ReportDrop(reason_);
  return Verdict::kDrop;
}

}  // namespace skald::stages
