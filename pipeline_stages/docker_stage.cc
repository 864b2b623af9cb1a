#include "pipeline_stages/docker_stage.h"

#include <nlohmann/json.hpp>

#include "pipeline_stages/rfc3339.h"

namespace skald::stages {

DockerStage::DockerStage(const YAML::Node& config, const StageContext& ctx) {
  StageConfig c(config, ctx, {});
}

Verdict DockerStage::Process(Entry& entry, Downstream&) {
  nlohmann::json j = nlohmann::json::parse(entry.line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Verdict::kPass;
  auto log = j.find("log");
  auto stream = j.find("stream");
  auto time = j.find("time");
  if (log == j.end() || !log->is_string()) return Verdict::kPass;
  if (stream != j.end() && stream->is_string()) {
    const std::string& s = stream->get_ref<const std::string&>();
    entry.extracted.SetString("stream", s);
    if (!s.empty() && IsValidUtf8(s)) entry.labels.Set("stream", s);
  }
  if (time != j.end() && time->is_string()) {
    const std::string& t = time->get_ref<const std::string&>();
    entry.extracted.SetString("timestamp", t);
    if (auto ns = ParseRfc3339(t)) entry.timestamp_ns = *ns;
  }
  entry.line = log->get<std::string>();
  entry.extracted.SetString("output", entry.line);
  return Verdict::kPass;
}

}  // namespace skald::stages
