// metrics: counters, gauges and histograms from extracted values, published through the
// PipelineObserver (the plugin exposes them on its metrics endpoint) with the entry's labels.
//
//   metrics:
//     <name>: {type: Counter|Gauge|Histogram, description, prefix (promtail_custom_), source
//              (default <name>), max_idle_duration (5m, at least 1s: series not updated for
//              that long are removed), config: {value, action, match_all, count_entry_bytes,
//              buckets}}
// Counter actions inc|add; gauge actions set|inc|dec|add|sub; `value` counts only entries whose
// source equals it. Values that are not numbers are skipped. Names starting with skald_ (after
// the prefix) are refused: they are the plugin's own. Each metric is declared to the observer,
// which may refuse it (a name another pipeline gives another type); the stage holds the
// declaration until it is destroyed.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pipeline_stages/pipeline_observer.h"
#include "pipeline_stages/stage.h"
#include "pipeline_stages/stage_config.h"

namespace skald::stages {

class MetricsStage final : public Stage {
 public:
  MetricsStage(const YAML::Node& config, const StageContext& ctx);
  Verdict Process(Entry& entry, Downstream& next) override;

 private:
  enum class Action { kInc, kDec, kAdd, kSub, kSet, kObserve };
  struct Metric {
    MetricDesc desc;
    std::string source;
    std::optional<std::string> value;  // only entries whose source equals this
    Action action = Action::kInc;
    bool match_all = false;
    bool count_entry_bytes = false;
    std::unique_ptr<MetricDeclaration> declaration;
  };
  void Update(const Metric& m, const Entry& entry);

  StageContext ctx_;
  std::vector<Metric> metrics_;
};

}  // namespace skald::stages
