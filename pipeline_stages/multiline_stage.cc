#include "pipeline_stages/multiline_stage.h"

#include "pipeline_stages/regex_stage.h"

namespace skald::stages {

MultilineStage::MultilineStage(const YAML::Node& config, const StageContext& ctx) : ctx_(ctx) {
  StageConfig c(config, ctx, {"firstline", "max_wait_time", "max_lines"});
  firstline_ = CompileUserRegex(c, "firstline", c.RequiredString("firstline"));
  max_wait_ns_ = c.OptDurationNs("max_wait_time").value_or(3'000'000'000);
  if (max_wait_ns_ <= 0) c.Fail("max_wait_time", "must be greater than 0");
  max_lines_ = c.OptInt("max_lines").value_or(128);
  if (max_lines_ < 1) c.Fail("max_lines", "must be at least 1");
  max_bytes_ = ctx.build->max_line_size;
}

void MultilineStage::EmitBlock(Downstream& next) {
  Entry e = std::move(*block_);
  block_.reset();
  block_lines_ = 0;
  next.Emit(std::move(e));
}

Verdict MultilineStage::Process(Entry& entry, Downstream& next) {
  const int64_t now = ctx_.NowNs();
  if (block_ && now - last_line_ns_ >= max_wait_ns_) EmitBlock(next);
  const bool first = RE2::PartialMatch(entry.line, *firstline_);
  if (!first && !seen_firstline_) return Verdict::kPass;
  last_line_ns_ = now;
  if (first) {
    seen_firstline_ = true;
    if (block_) EmitBlock(next);
  }
  // A block never grows past the line size the host sends on (it would be cut into pieces
  // there), and `max_lines` of long lines cannot hold megabytes.
  if (block_ && max_bytes_ > 0 && block_->line.size() + 1 + entry.line.size() > max_bytes_) {
    EmitBlock(next);
  }
  if (!block_) {
    block_.emplace(std::move(entry));
    block_lines_ = 1;
  } else {
    block_->line.push_back('\n');
    block_->line.append(entry.line);
    ++block_lines_;
  }
  if (block_lines_ >= max_lines_ || (max_bytes_ > 0 && block_->line.size() >= max_bytes_)) {
    EmitBlock(next);
  }
  return Verdict::kTaken;
}

void MultilineStage::Flush(int64_t now_ns, bool final, Downstream& next) {
  if (block_ && (final || now_ns - last_line_ns_ >= max_wait_ns_)) EmitBlock(next);
}

}  // namespace skald::stages
