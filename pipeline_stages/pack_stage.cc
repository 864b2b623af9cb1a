#include "pipeline_stages/pack_stage.h"

#include <algorithm>

#include "pipeline_stages/go/go_string.h"

namespace skald::stages {

void AppendJsonString(std::string_view s, std::string& out) {
  out.push_back('"');
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      switch (b) {
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
        case '<':
        case '>':
        case '&':
          AppendHexEscape("\\u", b, 4, &out);
          break;
        default:
          if (b < 0x20) {
            AppendHexEscape("\\u", b, 4, &out);
          } else {
            out.push_back(static_cast<char>(b));
          }
      }
      ++i;
      continue;
    }
    size_t n;
    const char32_t r = DecodeRune(s, i, &n);
    if (r == 0xFFFD && n == 1) {
      out += "\\ufffd";  // a byte that is not UTF-8
    } else if (r == 0x2028 || r == 0x2029) {
      AppendHexEscape("\\u", r, 4, &out);
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
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
  // As in Promtail, values come from the extracted map only (it holds the labels the entry came
  // with, not those a stage set since), and what is packed leaves the labels.
  for (const auto& name : labels_) {
    const Value* ev = entry.extracted.Find(name);
    const std::optional<std::string_view> v = ev ? ev->AsString() : std::nullopt;
    if (!v) continue;  // absent, or null: not packed
    AppendJsonString(name, out_);
    out_.push_back(':');
    AppendJsonString(*v, out_);
    out_.push_back(',');
    entry.labels.Erase(name);
  }
  out_ += "\"_entry\":";
  AppendJsonString(entry.line, out_);
  out_.push_back('}');
  entry.line.swap(out_);
  if (ingest_timestamp_) entry.timestamp_ns = ctx_.NowNs();
  return Verdict::kPass;
}

}  // namespace skald::stages
