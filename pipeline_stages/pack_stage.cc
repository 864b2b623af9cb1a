#include "pipeline_stages/pack_stage.h"

#include <algorithm>

namespace skald::stages {

void AppendJsonString(std::string_view s, std::string& out) {
  static const char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 0xF]);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}

PackStage::PackStage(const YAML::Node& config, const StageContext& ctx) : ctx_(ctx) {
  StageConfig c(config, ctx, {"labels", "ingest_timestamp"});
  labels_ = c.StringOrList("labels");
  if (labels_.empty()) c.Fail("labels", "is required: a list of label or extracted names");
  std::sort(labels_.begin(), labels_.end());
  labels_.erase(std::unique(labels_.begin(), labels_.end()), labels_.end());
  ingest_timestamp_ = c.Bool("ingest_timestamp", true);
}

Verdict PackStage::Process(Entry& entry, Downstream&) {
  out_.clear();
  out_.push_back('{');
  for (const auto& name : labels_) {
    std::optional<std::string_view> v;
    if (const Value* ev = entry.extracted.Find(name)) v = ev->AsString();
    auto label = entry.labels.Get(name);
    if (!v) v = label;
    if (v) {
      AppendJsonString(name, out_);
      out_.push_back(':');
      AppendJsonString(*v, out_);
      out_.push_back(',');
    }
    if (label) entry.labels.Erase(name);
  }
  out_ += "\"_entry\":";
  AppendJsonString(entry.line, out_);
  out_.push_back('}');
  entry.line.swap(out_);
  if (ingest_timestamp_) entry.timestamp_ns = ctx_.NowNs();
  return Verdict::kPass;
}

}  // namespace skald::stages
