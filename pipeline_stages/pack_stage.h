// pack: embeds chosen extracted values (the entry's initial labels among them) and the line into
// a JSON line: {"k":"v",...,"_entry":"<line>"} (keys sorted, _entry last). Packed names leave
// the labels.
// With ingest_timestamp (default true) the timestamp becomes the time the stage ran.
#pragma once

#include <string>
#include <vector>

#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {

// Appends s as a JSON string literal (quotes included), byte for byte as Promtail's pack writes
// it (json-iterator's Marshal): <, > and & as \u003c \u003e \u0026, control characters but
// \n \r \t as \u00XX, each byte that is not UTF-8 as \ufffd, U+2028 and U+2029 escaped.
void AppendJsonString(std::string_view s, std::string& out);

class PackStage final : public Stage {
 public:
  PackStage(const YAML::Node& config, const StageContext& ctx);
  Verdict Process(Entry& entry, Downstream& next) override;

 private:
  StageContext ctx_;
  std::vector<std::string> labels_;  // sorted, unique
  bool ingest_timestamp_;
  std::string out_;
};

}  // namespace skald::stages
