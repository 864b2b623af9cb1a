#include "pipeline_stages/cri_stage.h"

#include "pipeline_stages/rfc3339.h"

namespace skald::stages {

CriStage::CriStage(const YAML::Node& config, const StageContext& ctx) {
  StageConfig c(config, ctx,
                {"max_partial_lines", "max_partial_line_size", "max_partial_line_size_truncate"});
  // 0 is the default, as in Promtail.
  max_partial_lines_ = c.OptInt("max_partial_lines").value_or(0);
  if (max_partial_lines_ == 0) max_partial_lines_ = 100;
  if (max_partial_lines_ < 1) c.Fail("max_partial_lines", "must be at least 1 (0: 100)");
  max_partial_line_size_ = 0;
  if (auto s = c.OptString("max_partial_line_size")) {
    auto v = ParseByteSize(*s);
    if (!v) c.Fail("max_partial_line_size", Quote(*s) + " is not a size (e.g. 16kb)");
    max_partial_line_size_ = *v;
  }
  truncate_ = c.Bool("max_partial_line_size_truncate", false);
}

void CriStage::EmitPartial(Downstream& next) {
  Entry e = std::move(*partial_);
  partial_.reset();
  partial_lines_ = 0;
  e.extracted.SetString("content", e.line);
  next.Emit(std::move(e));
}

Verdict CriStage::Process(Entry& entry, Downstream& next) {
  std::string_view l = entry.line;
  const size_t s1 = l.find(' ');
  if (s1 == std::string_view::npos) return Verdict::kPass;
  const size_t s2 = l.find(' ', s1 + 1);
  if (s2 == std::string_view::npos) return Verdict::kPass;
  const size_t s3 = l.find(' ', s2 + 1);
  const std::string_view time = l.substr(0, s1);
  const std::string_view stream = l.substr(s1 + 1, s2 - s1 - 1);
  const std::string_view flags =
      s3 == std::string_view::npos ? l.substr(s2 + 1) : l.substr(s2 + 1, s3 - s2 - 1);
  const std::string_view content =
      s3 == std::string_view::npos ? std::string_view() : l.substr(s3 + 1);
  if (stream != "stdout" && stream != "stderr") return Verdict::kPass;
  if (flags.empty()) return Verdict::kPass;
  // A time that does not parse leaves the entry's own, as Promtail's timestamp step does.
  const std::optional<int64_t> ns = ParseRfc3339(time);

  entry.extracted.SetString("time", time);
  entry.extracted.SetString("stream", stream);
  entry.extracted.SetString("flags", flags);
  entry.labels.Set("stream", stream);
  if (ns) entry.timestamp_ns = *ns;
  const bool partial = flags.find('P') != std::string_view::npos;
  std::string body(content);

  if (partial_) {
    std::string& merged = partial_->line;
    merged += body;
    ++partial_lines_;
    if (max_partial_line_size_ && merged.size() > max_partial_line_size_) {
      if (truncate_) merged.resize(max_partial_line_size_);
      EmitPartial(next);
      return Verdict::kTaken;
    }
    if (!partial || partial_lines_ >= max_partial_lines_) EmitPartial(next);
    return Verdict::kTaken;
  }
  entry.line = std::move(body);
  entry.extracted.SetString("content", entry.line);
  if (!partial) return Verdict::kPass;
  partial_.emplace(std::move(entry));
  partial_lines_ = 1;
  if (partial_lines_ >= max_partial_lines_) EmitPartial(next);
  return Verdict::kTaken;
}

void CriStage::Flush(int64_t, bool final, Downstream& next) {
  if (partial_ && final) EmitPartial(next);
}

}  // namespace skald::stages
