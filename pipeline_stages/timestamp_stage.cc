#include "pipeline_stages/timestamp_stage.h"

namespace skald::stages {
namespace {

constexpr size_t kMaxLabelSets = 10000;

int64_t IntScale(std::string_view format) {
  if (format == "Unix") return 1'000'000'000;
  if (format == "UnixMs") return 1'000'000;
  if (format == "UnixUs") return 1'000;
  if (format == "UnixNs") return 1;
  return 0;
}

}  // namespace

TimestampStage::TimestampStage(const YAML::Node& config, const StageContext& ctx) : ctx_(ctx) {
  StageConfig c(config, ctx,
                {"source", "format", "fallback_formats", "location", "action_on_failure"});
  source_ = c.RequiredString("source");
  const std::string location = c.String("location");
  auto compile = [&](std::string_view field, const std::string& format) {
    try {
      formats_.push_back(Format{GoTimeLayout::Compile(format, location), IntScale(format)});
    } catch (const ConfigError& e) {
      const bool location_problem =
          !location.empty() && std::string(e.what()).find(location) != std::string::npos;
      c.Fail(location_problem ? "location" : field, e.what());
    }
  };
  compile("format", c.RequiredString("format"));
  for (const auto& f : c.StringOrList("fallback_formats")) compile("fallback_formats", f);
  const std::string action = c.String("action_on_failure", "fudge");
  if (action != "fudge" && action != "skip") {
    c.Fail("action_on_failure", Quote(action) + " is not an action; expected fudge or skip");
  }
  fudge_ = action == "fudge";
}

std::optional<int64_t> TimestampStage::Parse(const Value& v, int64_t now) const {
  for (const Format& f : formats_) {
    if (f.int_scale && v.is_int()) {
      const int64_t i = v.integer();
      if (i > INT64_MAX / f.int_scale || i < INT64_MIN / f.int_scale) continue;
      return i * f.int_scale;
    }
    auto s = v.AsString();
    if (!s) return std::nullopt;
    if (auto ns = f.layout.Parse(*s, now)) return ns;
  }
  return std::nullopt;
}

Verdict TimestampStage::Process(Entry& entry, Downstream&) {
  std::optional<int64_t> ts;
  if (const Value* v = entry.extracted.Find(source_)) ts = Parse(*v, ctx_.NowNs());
  if (ts) {
    entry.timestamp_ns = *ts;
    if (fudge_) {
      if (last_.size() >= kMaxLabelSets) last_.clear();
      last_[entry.labels.Hash()] = *ts;
    }
    return Verdict::kPass;
  }
  if (!fudge_) return Verdict::kPass;
  auto it = last_.find(entry.labels.Hash());
  if (it == last_.end()) return Verdict::kPass;
  entry.timestamp_ns = ++it->second;
  return Verdict::kPass;
}

}  // namespace skald::stages
