// json: extracts values from a JSON object (the line, or extracted[source]) with JMESPath
// expressions (`expressions: {key: path}`, empty path = the key itself).
//
// Scalars keep their type; null, or a path that matches nothing, sets the key to null; objects
// and arrays become their compact JSON text (original key order). Input that is not a JSON
// object leaves the entry unchanged, or drops it with `drop_malformed` (reason
// "drop_malformed"). Runs on simdjson On-Demand with a reused parser and padded buffer: one
// pass over the top-level fields serves every single-identifier path.
#pragma once

#include <simdjson.h>

#include <optional>
#include <string>
#include <vector>

#include "pipeline_stages/jmespath.h"
#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {

class JsonStage final : public Stage {
 public:
  JsonStage(const YAML::Node& config, const StageContext& ctx);
  Verdict Process(Entry& entry, Downstream& next) override;

 private:
  struct Expression {
    std::string key;  // extracted key
    JmesPath path;
    size_t hint = 0;  // extracted slot used last time
  };
  // A top-level field that single-identifier paths read.
  struct TopField {
    std::string name;
    std::vector<size_t> expressions;
  };

  // Runs the expressions on text into values_; false when it is not a well-formed JSON object.
  bool Extract(std::string_view text);
  bool Store(simdjson::ondemand::value v, Value& dst);

  StageContext ctx_;
  std::vector<Expression> expressions_;
  std::vector<TopField> top_fields_;
  std::vector<size_t> deep_;  // expressions with more than one step or an index
  std::optional<std::string> source_;
  bool drop_malformed_;

  simdjson::ondemand::parser parser_;
  std::string padded_;
  std::vector<uint8_t> found_;
  std::vector<Value> values_;  // per expression; swapped into extracted when all went well
  std::vector<std::vector<uint16_t>> by_length_;       // key length -> top_fields_ indexes
  size_t mark_ = 0;                                    // extracted size before this entry
  std::vector<std::pair<size_t, Value>> overwritten_;  // restored when the input is malformed
};

}  // namespace skald::stages
