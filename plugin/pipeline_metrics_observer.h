// PipelineMetricsObserver: where the stage library reports to the plugin's metrics.
//
// Entries a stage drops are counted in skald_entries_dropped_total{reason}; the metrics a
// `metrics` stage declares are published under their own names with the entry's labels.
// The registry holds whole numbers: counter increments and gauge values are rounded, and
// histograms are exported as `<name>_count` and `<name>_sum` counters (no buckets yet).
// Thread-safe; one observer serves every pipeline.
#pragma once

#include <string>

#include "pipeline_stages/pipeline_observer.h"
#include "plugin/metrics.h"

namespace skald {

class PipelineMetricsObserver : public stages::PipelineObserver {
 public:
  explicit PipelineMetricsObserver(MetricsRegistry& metrics) : metrics_(metrics) {}

  void EntryDropped(std::string_view reason) override;
  void CounterAdd(const stages::MetricDesc& desc, const stages::LabelSet& labels,
                  double delta) override;
  void GaugeSet(const stages::MetricDesc& desc, const stages::LabelSet& labels,
                double value) override;
  void GaugeAdd(const stages::MetricDesc& desc, const stages::LabelSet& labels,
                double delta) override;
  void HistogramObserve(const stages::MetricDesc& desc, const stages::LabelSet& labels,
                        double value) override;

 private:
  MetricsRegistry& metrics_;
};

}  // namespace skald
