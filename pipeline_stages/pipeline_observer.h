// PipelineObserver: how the stage library reports to its host (the plugin) without knowing it.
//
// The plugin implements this to count dropped entries and to publish the metrics the `metrics`
// stage defines. Calls come from the thread that runs (or builds) the pipeline; an
// implementation shared by several pipelines must be thread-safe. Clock lets tests control
// time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline_stages/entry.h"

namespace skald::stages {

// One metric declared by a `metrics` stage. `name` already carries the prefix.
struct MetricDesc {
  enum class Type { kCounter, kGauge, kHistogram };
  Type type = Type::kCounter;
  std::string name;
  std::string description;
  std::vector<double> buckets;       // histograms only, ascending
  int64_t max_idle_duration_ns = 0;  // series not updated for this long are removed; 0 = never
};

// What a pipeline holds for each metric it declared: destroying it (with the pipeline)
// withdraws the declaration.
class MetricDeclaration {
 public:
  virtual ~MetricDeclaration() = default;
};

class PipelineObserver {
 public:
  virtual ~PipelineObserver() = default;

  // An entry left the pipeline without being delivered (drop, match action drop, limit with
  // drop: true, sampling). `reason` is the stage's drop_counter_reason or its default.
  virtual void EntryDropped(std::string_view reason) = 0;
  // A stage could not do its work on an entry, which went on as the stage got it: `stage` is
  // the stage's name, `reason` a snake_case word (e.g. "output_too_long": a template's output
  // would pass GoTemplate::kMaxOutputBytes).
  virtual void StageFailed(std::string_view /*stage*/, std::string_view /*reason*/) {}

  // Called once per declared metric while the pipeline is built; `declared_by` names the
  // declaration in messages (the pipeline's owner and the stage). Throws ConfigError to refuse
  // it, e.g. when a live declaration gives the name another type; the message is prefixed with
  // the stage and metric. The default accepts every declaration and returns null.
  virtual std::unique_ptr<MetricDeclaration> DeclareMetric(const MetricDesc& /*desc*/,
                                                           std::string_view /*declared_by*/) {
    return nullptr;
  }
  // `labels` are the entry's labels at the metrics stage.
  virtual void CounterAdd(const MetricDesc& desc, const LabelSet& labels, double delta) = 0;
  virtual void GaugeSet(const MetricDesc& desc, const LabelSet& labels, double value) = 0;
  virtual void GaugeAdd(const MetricDesc& desc, const LabelSet& labels, double delta) = 0;
  virtual void HistogramObserve(const MetricDesc& desc, const LabelSet& labels, double value) = 0;
};

// Wall-clock time in Unix nanoseconds. The same clock must feed Pipeline::Flush's now_ns.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t NowNs() const = 0;
  // CLOCK_REALTIME.
  static const Clock& System();
};

}  // namespace skald::stages
