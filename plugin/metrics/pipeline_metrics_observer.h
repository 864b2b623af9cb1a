// PipelineMetricsObserver: where the stage library reports to the plugin's metrics.
//
// Entries a stage drops are counted in skald_entries_dropped_total{reason}, entries a stage
// failed on (and passed on unchanged) in skald_stage_errors_total{stage,reason}; the metrics a
// `metrics` stage declares are published under their own names with the entry's labels.
// A name has one type across all pipelines: a declaration that clashes with a live one (another
// type, a histogram's _bucket/_count/_sum, or a histogram with other buckets) is refused with a
// ConfigError naming both. A metric keeps its series after its last declaration is gone, until
// a declaration of another type (or buckets) replaces it; a series not updated for its metric's
// max_idle_duration leaves at the next scrape. A metric holds at most kMaxSeriesPerMetric label
// sets: updates of further ones are dropped, counted in skald_metric_updates_dropped_total{metric}
// and logged (once a minute per metric). Values are floats as in Promtail: counters add any
// increment >= 0, gauges take any value, and histograms count observations in the stage's buckets
// (`<name>_bucket{le}`, `_sum`, `_count`). Thread-safe; one observer serves every pipeline and must
// outlive them.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>

#include <chrono>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "pipeline_stages/pipeline_observer.h"
#include "plugin/common/log_limiter.h"
#include "plugin/metrics/metrics.h"

namespace skald {

class PipelineMetricsObserver : public stages::PipelineObserver {
 public:
  static constexpr std::size_t kMaxSeriesPerMetric = 1000;

  explicit PipelineMetricsObserver(MetricsRegistry& metrics) : metrics_(metrics) {}

  void EntryDropped(std::string_view reason) override;
  void StageFailed(std::string_view stage, std::string_view reason) override;
  std::unique_ptr<stages::MetricDeclaration> DeclareMetric(const stages::MetricDesc& desc,
                                                           std::string_view declared_by) override
      ABSL_LOCKS_EXCLUDED(mu_);
  void CounterAdd(const stages::MetricDesc& desc, const stages::LabelSet& labels,
                  double delta) override;
  void GaugeSet(const stages::MetricDesc& desc, const stages::LabelSet& labels,
                double value) override;
  void GaugeAdd(const stages::MetricDesc& desc, const stages::LabelSet& labels,
                double delta) override;
  void HistogramObserve(const stages::MetricDesc& desc, const stages::LabelSet& labels,
                        double value) override;

 private:
  class Declaration;
  struct Declared {
    stages::MetricDesc desc;           // of the declaration that created it
    std::list<std::string> declarers;  // live declarations, oldest first
  };
  void Release(const std::string& name, std::list<std::string>::iterator declarer)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Counts (and logs, at most once a minute per metric) an update a full metric dropped.
  void UpdateDropped(const std::string& name, MetricsRegistry::Update result);

  MetricsRegistry& metrics_;
  LogLimiter full_log_{std::chrono::minutes(1)};  // by metric name
  absl::Mutex mu_;
  // By metric name (with its prefix).
  std::map<std::string, Declared> declared_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> owner_ ABSL_GUARDED_BY(mu_);  // family name -> metric name
};

}  // namespace skald
